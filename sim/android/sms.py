"""SMS provider model (``content://sms``). The ``content`` tool that reads it lives in
``content_tool.py`` (``registry.load_all`` imports both).

Columns follow the ``sms`` table of AOSP ``packages/providers/TelephonyProvider``
(``MmsSmsDatabaseHelper``) as listed by ``Telephony.TextBasedSmsColumns``; message types:
inbox 1, sent 2, draft 3, outbox 4 (``Telephony.Sms.MESSAGE_TYPE_*``). ``SmsProvider.query``
without a sort order sorts by ``date DESC`` (``Telephony.Sms.DEFAULT_SORT_ORDER``).

The shell uid may read SMS on every supported SDK: ``com.android.shell`` requests
``READ_SMS`` (``packages/Shell/AndroidManifest.xml``) and holds it as a system-fixed grant.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from phoned.sim.android.packages import PackageManager
from phoned.sim.shell.registry import SimService

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

Value = int | str | None

BOX_TYPES = {"inbox": 1, "sent": 2, "draft": 3, "outbox": 4}
TYPE_BOXES = {v: k for k, v in BOX_TYPES.items()}

# The sms table, in column order (what ``content query`` prints without --projection).
COLUMNS = (
    "_id",
    "thread_id",
    "address",
    "person",
    "date",
    "date_sent",
    "protocol",
    "read",
    "status",
    "type",
    "reply_path_present",
    "subject",
    "body",
    "service_center",
    "locked",
    "sub_id",
    "error_code",
    "creator",
    "seen",
)


class SmsProvider:
    """Messages in the inbox, sent box, drafts and outbox, as rows of the ``sms`` table."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self.rows: list[dict[str, Value]] = []
        self._threads: dict[str, int] = {}

    def _thread_for(self, address: str) -> int:
        return self._threads.setdefault(address, len(self._threads) + 1)

    def insert(self, box: str, address: str, body: str) -> int:
        """Store a message in ``box`` (inbox, sent, draft, outbox); returns its ``_id``."""
        if box not in BOX_TYPES:
            raise ValueError(f"unknown SMS box {box!r}")
        return self.insert_values({"type": BOX_TYPES[box], "address": address, "body": body})

    def insert_values(self, values: dict[str, Value]) -> int:
        """Insert a row from column values (unknown columns are ignored); returns ``_id``."""
        with self.phone.lock:
            msg_type = int(values.get("type") or 1)
            address = values.get("address")
            new_id = max((int(r["_id"] or 0) for r in self.rows), default=0) + 1
            row: dict[str, Value] = {
                "_id": new_id,
                "thread_id": self._thread_for(str(address)) if address is not None else 0,
                "address": address,
                "person": None,
                "date": int(time.time() * 1000),
                "date_sent": 0,
                "protocol": 0 if msg_type == 1 else None,
                "read": 0 if msg_type == 1 else 1,
                "status": -1,
                "type": msg_type,
                "reply_path_present": 0 if msg_type == 1 else None,
                "subject": None,
                "body": values.get("body"),
                "service_center": None,
                "locked": 0,
                "sub_id": 1,
                "error_code": 0,
                "creator": self.phone.service(PackageManager).default_sms_package(),
                "seen": 0 if msg_type == 1 else 1,
            }
            row.update({k: v for k, v in values.items() if k in COLUMNS and k != "_id"})
            self.rows.append(row)
            return new_id

    def messages(self, box: str | None = None) -> list[dict[str, Value]]:
        """Copies of the rows of ``box`` (all boxes when None), oldest first."""
        with self.phone.lock:
            wanted = None if box is None else BOX_TYPES[box]
            return [dict(r) for r in self.rows if wanted is None or r["type"] == wanted]


SIM_SERVICE = SimService("sms", SmsProvider)  # phone.service(SmsProvider)
