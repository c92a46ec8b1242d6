"""Who drives each phone: the queue's phone holds, one row per phone (issue #24).

A daemon's worker (or a ``run --once``) takes the hold on its phone before it sends the
phone a command and renews it every heartbeat while it serves the phone; it releases it
when it stops. A row whose ``expires_at`` passed is free for anyone, so a holder that died
without releasing blocks the phone for one hold period at most, and a restart of the same
daemon (same id, same host) takes its own row back at once.

The rows live in the queue (the ``phone_hold`` table of ``sql/schema.sql`` and PostgreSQL
migration 0007), so daemons on several hosts sharing a queue (a network phone,
``host:port``, that two hosts reach) never drive one phone at once. On one host the lock
file of ``phoned.daemon.runtime.phone_hold`` comes first; this row is what other hosts see.
``phoned status`` and ``phoned doctor`` name the holder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from phoned.daemon.store.sql_database import SqlDatabase


@dataclass(frozen=True)
class Holder:
    """Who holds one phone (or asks to): the daemon, where it runs, until when."""

    serial: str
    holder: str  # the daemon id; "<id>/once" for a run --once
    host: str
    pid: int
    command: str  # "phoned run", "phoned run --once"
    since: float  # when this holder took the phone
    expires_at: float  # free for anyone after this, unless renewed

    def same_holder(self, other: Holder) -> bool:
        """``other`` is this holder's row (the same daemon in the same process)."""
        return (self.holder, self.host, self.pid) == (other.holder, other.host, other.pid)

    def describe(self) -> str:
        """``daemon D on host H, pid P (`phoned run`)``: who holds the phone, for a person."""
        return f"daemon {self.holder} on host {self.host}, pid {self.pid} (`{self.command}`)"

    def renewed(self, now: float, hold_s: float) -> Holder:
        """This claim, asked again at ``now`` for ``hold_s`` seconds."""
        return replace(self, since=now, expires_at=now + hold_s)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Holder:
        return cls(
            str(doc["serial"]), str(doc["holder"]), str(doc.get("host") or ""),
            int(doc.get("pid") or 0), str(doc.get("command") or ""), float(doc["since"]),
            float(doc["expires_at"]),
        )  # fmt: skip


def take(db: SqlDatabase, want: Holder) -> Holder:
    """Take or renew the hold ``want`` asks for (``want.since`` is now); the phone's holder
    afterwards: ``want``'s row when granted, the other holder's when refused."""
    with db.transaction():
        db.run(
            "take_phone_hold", serial=want.serial, holder=want.holder, host=want.host,
            pid=want.pid, command=want.command, now=want.since, expires_at=want.expires_at,
        )  # fmt: skip
        row = db.one("phone_hold", serial=want.serial)
    assert row is not None  # inserted, updated or kept by the statement above
    return Holder.from_json(row)


def release(db: SqlDatabase, mine: Holder) -> None:
    """Give the phone up, if ``mine`` still holds it (another's row is left alone)."""
    with db.transaction():
        db.run(
            "release_phone_hold", serial=mine.serial, holder=mine.holder, host=mine.host,
            pid=mine.pid,
        )  # fmt: skip


def read(db: SqlDatabase) -> list[Holder]:
    """Every phone's row, expired ones included (``live`` tells them apart)."""
    return [Holder.from_json(row) for row in db.all("all_phone_holds")]


def live(rows: list[Holder], now: float) -> dict[str, Holder]:
    """The rows that still hold their phone at ``now``, by serial."""
    return {r.serial: r for r in rows if r.expires_at >= now}
