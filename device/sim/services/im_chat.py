"""Samsung's chat (RCS) message store, ``content://im/chat`` (``samsung-messages`` scenario).

Samsung Messages keeps chat messages out of ``content://sms``: its
``RemoteMessageContentContract`` (Samsung Messages 16.2.10.27, apktool decompile in
``Android-Artisan/Samsung-Messages-Mod`` e8eec18f) names ``content://im/chat/`` served by
``com.android.providers.telephony``; Samsung's IMS service writes there too
(``TelephonyDbHelper.MSGAPP_CHATCONTENT_URI``). Columns as ``$Chat`` lists them (a subset);
``type`` is ``$RcsBoxType``: PENDING 0, INBOX 1, SENTBOX 2, DRAFT 3, OUTBOX 4, FAILED 5,
QUEUE 6, UNDELIVERED 9. A message waits in OUTBOX until the chat server took it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from device.sim.registry import SimService

if TYPE_CHECKING:
    from device.sim.phone_state import PhoneState

Value = int | str | None

# How long a chat message shows "Sending…" before it is delivered (or fails).
CHAT_SEND_S = 0.3

COLUMNS = ("_id", "thread_id", "address", "body", "date", "type", "status", "sim_slot", "sub_id")
OUTBOX, SENTBOX, FAILED = 4, 2, 5


class ImChatStore:
    """Chat messages the Samsung app sent; ``type`` follows each one's fate over time."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self._rows: list[tuple[dict[str, Value], str, float]] = []  # row, kind, sent at

    def insert(self, address: str, body: str, kind: str, slot: int) -> int:
        """A chat message sent from SIM ``slot`` (``kind``: chat, chat-stuck, chat-fail)."""
        with self.phone.lock:
            new_id = len(self._rows) + 1
            row: dict[str, Value] = {
                "_id": new_id, "thread_id": 1, "address": address, "body": body,
                "date": int(time.time() * 1000), "type": OUTBOX, "status": 0,
                "sim_slot": slot - 1, "sub_id": slot,
            }  # fmt: skip
            self._rows.append((row, kind, self.phone.now()))
            return new_id

    def rows(self) -> list[dict[str, Value]]:
        """Every row as a query sees it now."""
        now = self.phone.now()
        out = []
        with self.phone.lock:
            for row, kind, at in self._rows:
                current = dict(row)
                if kind != "chat-stuck" and now - at >= CHAT_SEND_S:
                    current["type"] = FAILED if kind == "chat-fail" else SENTBOX
                out.append(current)
        return out


SIM_SERVICE = SimService("im_chat", ImChatStore)  # phone.service(ImChatStore)
