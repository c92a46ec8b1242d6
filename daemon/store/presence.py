"""Which daemons serve a queue: presence rows, written by daemons, read by every door.

A daemon writes one row per phone it serves (``serial`` '' when it serves none yet) every
``PRESENCE_INTERVAL_S`` while it runs, with when it last looked for work and when it last
claimed for that phone, and removes its rows when it stops. ``phoned status`` lists them;
``submit``, ``tasks`` and the MCP tools warn at once when no row is recent (``RECENT_S``),
naming the queue: a queue nobody serves is said, not left to a 30 s timeout (issue #23).

The rows live in the queue itself (the ``presence`` table of ``sql/schema.sql`` and
PostgreSQL migration 0006), so the service, an operator's CLI and a desktop MCP client that
share the queue see the same answer.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from phoned.daemon.store.sql_database import SqlDatabase

PRESENCE_INTERVAL_S = 30.0  # how often a running daemon says it is there
RECENT_S = 3 * PRESENCE_INTERVAL_S + 10.0  # older than this: nobody is known to serve


@dataclass(frozen=True)
class Presence:
    """One daemon's row for one phone."""

    daemon_id: str
    serial: str  # '' for a daemon that serves no phone yet
    host: str
    pid: int
    looked_at: float  # when it last looked for work
    claimed_at: float | None  # its last claim for this phone

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Presence:
        return cls(
            str(doc["daemon_id"]), str(doc.get("serial") or ""), str(doc.get("host") or ""),
            int(doc.get("pid") or 0), float(doc["looked_at"]),
            None if doc.get("claimed_at") is None else float(doc["claimed_at"]),
        )  # fmt: skip


def mark(
    db: SqlDatabase,
    daemon_id: str,
    serials: Sequence[str],
    claimed: Mapping[str, float],
    now: float,
    *,
    host: str | None = None,
    pid: int | None = None,
) -> None:
    """This daemon (on ``host`` with ``pid``: this process's by default) serves ``serials``
    now; ``claimed`` holds its last claim per phone. Rows of phones it no longer serves go."""
    host = socket.gethostname() if host is None else host
    pid = os.getpid() if pid is None else pid
    with db.transaction():
        kept = list(serials) or [""]
        db.run("drop_presence", daemon_id=daemon_id, keep=json.dumps(kept))
        for serial in kept:
            db.run(
                "upsert_presence", daemon_id=daemon_id, serial=serial, host=host, pid=pid,
                looked_at=now, claimed_at=claimed.get(serial),
            )  # fmt: skip


def touch(
    db: SqlDatabase, daemon_id: str, serial: str, host: str, now: float, claimed: bool
) -> None:
    """One phone's row of a daemon that looked for work through a control plane (its
    claims are all the plane sees of it); ``host`` is what the plane knows it by."""
    with db.transaction():
        db.run(
            "upsert_presence", daemon_id=daemon_id, serial=serial, host=host, pid=0,
            looked_at=now, claimed_at=now if claimed else None,
        )  # fmt: skip


def forget(db: SqlDatabase, daemon_id: str) -> None:
    """The daemon stopped: its rows go."""
    with db.transaction():
        db.run("drop_presence", daemon_id=daemon_id, keep="[]")


def read(db: SqlDatabase) -> list[Presence]:
    """Every row, most recent first."""
    return [Presence.from_json(row) for row in db.all("all_presence")]


def serving(rows: Sequence[Presence], now: float, device: str | None = None) -> list[Presence]:
    """The recent rows of daemons that can serve ``device`` (any phone when None)."""
    recent = [r for r in rows if now - r.looked_at <= RECENT_S]
    if device is None:
        return recent
    return [r for r in recent if r.serial == device]


def unserved_warning(
    queue: str, rows: Sequence[Presence], now: float, device: str | None
) -> str | None:
    """The warning to give when no daemon recently served ``queue`` (for ``device``), else
    None. Names the queue and the last daemon seen, and what to run."""
    if serving(rows, now, device):
        return None
    what = f"phone {device}" if device else "this queue"
    last = max(rows, key=lambda r: r.looked_at, default=None)
    seen = (
        f"; last seen: daemon {last.daemon_id} on {last.host}, {now - last.looked_at:.0f} s ago"
        if last is not None
        else "; no daemon has ever served it"
    )
    return (
        f"warning: no daemon has served {what} in the last {RECENT_S:.0f} s (queue {queue}{seen}): "
        "tasks stay queued until one runs (`systemctl start phoned`, or `phoned run`)"
    )
