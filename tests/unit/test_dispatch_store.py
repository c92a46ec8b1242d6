"""The daemon's dispatcher over a real SQLite queue: one claim for all idle phones, and an
idle daemon that stops claiming while nothing changes (``SqliteStore.change_token``).

The workers are stand-ins (an owner, a serial, ``hand``): what is under test is the
dispatcher and the store; ``tests/integration/test_daemon_batch_claims.py`` runs the real
``phoned run`` with simulated phones.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.runtime.dispatch import Dispatcher, start_dispatcher
from phoned.daemon.store.sqlite_store import SqliteStore


@dataclass
class _Phone:
    serial: str


@dataclass
class _Worker:
    owner: str
    device: _Phone
    stopping: bool = False
    handed: list[TaskRecord] = field(default_factory=list)
    got: threading.Event = field(default_factory=threading.Event)

    def hand(self, task: TaskRecord) -> None:
        self.handed.append(task)
        self.got.set()


def _first_claim(dispatcher: Dispatcher, timeout: float = 10) -> None:
    """Wait until the dispatcher made its first claim round trip (or ``timeout`` passed)."""
    deadline = time.monotonic() + timeout
    while dispatcher.batches < 1 and time.monotonic() < deadline:
        time.sleep(0.01)


def _spec(**extra: Any):
    return validate_task({"method": "dnd.get", "conversation_id": "c", **extra})


def test_change_token_moves_on_other_commits_and_own_changes_only(tmp_path: Path) -> None:
    path = str(tmp_path / "q.db")
    daemon, planner = SqliteStore(path), SqliteStore(path)
    try:
        before = daemon.change_token()
        assert daemon.claim_batch([("d/A", "A")], time.time()) == []  # an empty claim
        assert daemon.change_token() == before
        planner.submit(_spec(), time.time())  # another connection commits
        after_submit = daemon.change_token()
        assert after_submit != before
        assert len(daemon.claim_batch([("d/A", "A")], time.time())) == 1  # own change
        assert daemon.change_token() != after_submit
    finally:
        daemon.close()
        planner.close()


def test_an_idle_daemon_claims_once_then_only_when_the_queue_changes(tmp_path: Path) -> None:
    path = str(tmp_path / "q.db")
    SqliteStore(path).close()
    dispatcher = Dispatcher(
        lambda: SqliteStore(path),
        time.time,
        lease_s=60,
        poll_interval=0.02,  # the fallback claim would run ~50 times a second
        pause_check_interval=0.02,
    )
    workers = [_Worker(f"d/{s}", _Phone(s)) for s in ("A", "B", "C")]
    for worker in workers:
        dispatcher.offer(worker)  # type: ignore[arg-type]
    thread = start_dispatcher(dispatcher)
    planner = SqliteStore(path)
    try:
        _first_claim(dispatcher)
        time.sleep(0.5)  # ~25 fallback rounds with nothing changed
        assert dispatcher.batches == 1
        task = planner.submit(_spec(device="B"), time.time())
        assert workers[1].got.wait(10)
        assert [t.id for t in workers[1].handed] == [task.id]
        assert workers[1].handed[0].lease_owner == "d/B"
        assert not workers[0].handed and not workers[2].handed
    finally:
        dispatcher.stop()
        thread.join(timeout=10)
        planner.close()


def test_a_dispatcher_whose_store_fails_starts_over_and_still_hands_out_work(
    tmp_path: Path,
) -> None:
    """Idle workers wait on the dispatcher alone: an unexpected error (here the store cannot
    be opened twice, with an error no store translates) must not end its thread."""
    path = tmp_path / "q.db"
    SqliteStore(path).close()
    opened: list[int] = []

    def flaky_store() -> SqliteStore:
        opened.append(1)
        if len(opened) <= 2:
            raise OSError("disk went away")
        return SqliteStore(path)

    dispatcher = Dispatcher(
        flaky_store, time.time, lease_s=60, poll_interval=0.05, pause_check_interval=0.05
    )
    worker = _Worker("d/A", _Phone("A"))
    dispatcher.offer(worker)  # type: ignore[arg-type]
    planner = SqliteStore(path)
    thread = start_dispatcher(dispatcher)
    try:
        task = planner.submit(_spec(device="A"), time.time())
        assert worker.got.wait(10), "the dispatcher never recovered from its store error"
        assert [t.id for t in worker.handed] == [task.id]
        assert len(opened) == 3
        assert thread.is_alive()
    finally:
        dispatcher.stop()
        thread.join(timeout=10)
        planner.close()


def test_opening_the_queue_again_does_not_move_an_idle_daemons_change_token(
    tmp_path: Path,
) -> None:
    """A CLI call or a daemon's periodic store opens the queue; if opening wrote (the
    auto_vacuum pragma writes the header even when nothing changes) every idle dispatcher
    would claim again. A new file still gets incremental auto-vacuum (retention)."""
    path = str(tmp_path / "q.db")
    SqliteStore(path).close()
    idle = SqliteStore(path)
    try:
        token = idle.change_token()
        SqliteStore(path).close()
        assert idle.change_token() == token
        assert idle.sqlite._conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        idle.close()


def test_an_idle_dispatcher_on_a_waking_queue_reads_it_only_when_poked(
    tmp_path: Path, mocker: Any
) -> None:
    """Issue #24: an idle daemon read the queue every second (``PRAGMA data_version`` and
    the paused listing) although the wake-up socket wakes it. Now, with no paused task, it
    sleeps until a submit pokes it, and that submit is handed out at once."""
    path = str(tmp_path / "q.db")
    SqliteStore(path).close()
    stores: list[SqliteStore] = []

    def store() -> SqliteStore:
        stores.append(SqliteStore(path))
        return stores[-1]

    dispatcher = Dispatcher(store, time.time, lease_s=60, poll_interval=0.05,
                            pause_check_interval=0.05)  # fmt: skip
    worker = _Worker("d/A", _Phone("A"))
    dispatcher.offer(worker)  # type: ignore[arg-type]
    listed = mocker.spy(Dispatcher, "_watch_paused")
    thread = start_dispatcher(dispatcher)
    planner = SqliteStore(path)
    try:
        _first_claim(dispatcher)
        assert stores
        reads = mocker.spy(stores[0].sqlite, "data_version")
        time.sleep(1.5)  # 30 poll intervals and pause checks, with nothing changed
        assert reads.call_count == 0 and dispatcher.batches == 1
        assert listed.call_count == 1  # once, when the phone became idle
        task = planner.submit(_spec(device="A"), time.time())
        assert worker.got.wait(2), "a submit's poke did not wake the idle dispatcher"
        assert [t.id for t in worker.handed] == [task.id]
    finally:
        dispatcher.stop()
        thread.join(timeout=10)
        planner.close()
    assert not thread.is_alive(), "stop did not wake the dispatcher's socket wait"


def test_a_paused_task_of_an_idle_phone_is_still_watched_on_its_timer(
    tmp_path: Path, mocker: Any
) -> None:
    """The quiet idle above must not stop the paused-task watch: while the listing finds
    paused tasks of the idle phones, it runs every ``pause_check_interval``."""
    path = str(tmp_path / "q.db")
    SqliteStore(path).close()
    dispatcher = Dispatcher(lambda: SqliteStore(path), time.time, lease_s=60,
                            poll_interval=0.05, pause_check_interval=0.1)  # fmt: skip
    found = mocker.patch.object(Dispatcher, "_watch_paused", return_value=True)
    dispatcher.offer(_Worker("d/A", _Phone("A")))  # type: ignore[arg-type]
    thread = start_dispatcher(dispatcher)
    try:
        time.sleep(1.0)
    finally:
        dispatcher.stop()
        thread.join(timeout=10)
    assert found.call_count >= 5  # ~10 looks in one second; not one
