"""Local wake-ups on the SQLite queue (daemon/store/wake.py): real files, real sockets."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.errors import IllegalTransition
from phoned.daemon.store import sqlite_store
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.store.wake import Alarm, WakeChannel, wait_for_commit

SPEC = {"method": "dnd.get", "conversation_id": "c1"}


def _a_submit_wakes_an_idle_worker(path: str, failure: str) -> None:
    """A worker on ``path`` waits for work (up to 60 s); a submit through a second store
    ends its wait within 10 s (else ``failure``)."""
    worker, planner = SqliteStore(path), SqliteStore(path)
    stop = threading.Event()
    assert worker.claim("host/w0", None, 1.0) is None  # arms the wake-up
    thread = threading.Thread(target=worker.wait_for_work, args=(60.0, stop), daemon=True)
    thread.start()
    try:
        assert thread.is_alive()
        planner.submit(validate_task(SPEC), 1.0)
        thread.join(10)
        assert not thread.is_alive(), failure
    finally:
        stop.set()
        worker.close()
        planner.close()


def test_a_submit_in_another_store_wakes_an_idle_worker_by_its_poke(tmp_path, monkeypatch):
    # the fallback poll is pushed out of reach: only the poke can end the wait
    monkeypatch.setattr(sqlite_store, "FALLBACK_POLL_S", 120.0)
    _a_submit_wakes_an_idle_worker(
        str(tmp_path / "q.db"), "the idle worker slept through the submit"
    )


def test_only_a_commit_that_queues_a_task_pokes(tmp_path):
    path = str(tmp_path / "q.db")
    store = SqliteStore(path)
    listener = WakeChannel(path).listener()
    assert listener is not None
    never = threading.Event()
    try:
        store.submit(validate_task(SPEC), 1.0)
        assert listener.wait(5, never) is True
        store.claim("host/w0", None, 2.0)  # queued -> dispatched: no one to wake
        assert listener.wait(0.2, never) is False
    finally:
        listener.close()
        store.close()


def test_a_hand_over_pokes_only_when_it_leaves_a_task_queued(tmp_path, mocker):
    """``phoned serve``'s hand-over (issue #35): a task queued and leased in one
    transaction wakes no one; one left queued does, also when the claim that leased it
    failed and was undone alone."""
    path = str(tmp_path / "q.db")
    store = SqliteStore(path)
    listener = WakeChannel(path).listener()
    assert listener is not None
    never = threading.Event()
    spec = validate_task({**SPEC, "device": "S1"})

    def hand_over(now: float) -> ops.HandedOver:
        claim = ops.Claim(f"host/w{now:g}", "S1", now)
        return store.apply(ops.HandOver(ops.Submit(spec, now), (claim,)))

    try:
        handed = hand_over(1.0)
        assert handed.taken is not None and handed.taken.id == handed.task.id
        assert listener.wait(0.2, never) is False  # leased in its own transaction
        older = store.submit(spec, 2.0)
        assert listener.wait(5, never) is True
        handed = hand_over(3.0)  # the claim takes the older task: the new one is left
        assert handed.taken is not None and handed.taken.id == older.id
        assert listener.wait(5, never) is True
        store.claim("host/w9", "S1", 4.0)  # the queue is empty again
        lease = store._lease

        def written_then_refused(row: Any, op: ops.Claim) -> Any:
            lease(row, op)
            raise IllegalTransition("refused after the write")

        mocker.patch.object(store, "_lease", side_effect=written_then_refused)
        handed = hand_over(5.0)  # the lease is undone: the task stays queued
        assert handed.taken is None
        assert listener.wait(5, never) is True
    finally:
        listener.close()
        store.close()


def test_sockets_are_private_and_a_dead_listeners_socket_is_removed(tmp_path):
    channel = WakeChannel(str(tmp_path / "q.db"))
    listener = channel.listener()
    assert listener is not None
    assert channel.folder.stat().st_mode & 0o777 == 0o700
    assert listener.path.stat().st_mode & 0o077 == 0
    listener._sock.close()  # the process died without cleaning up
    assert channel.poke() == 0
    assert not listener.path.exists()


def test_a_queue_too_deep_for_a_socket_path_is_still_woken_by_its_poke(tmp_path, monkeypatch):
    # 120 bytes of folders: the socket's own path cannot be an address (sun_path, 107)
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = str(deep / "q.db")
    listener = WakeChannel(path).listener()
    assert listener is not None
    try:  # bound in the queue's folder itself, private, under its own name
        assert len(bytes(listener.path)) > 107
        assert listener.path.parent == Path(f"{path}.wake")
        assert listener.path.stat().st_mode & 0o077 == 0
        assert WakeChannel(path).poke() == 1
        assert listener.wait(5, threading.Event()) is True
    finally:
        listener.close()
    assert not listener.path.exists()
    monkeypatch.setattr(sqlite_store, "FALLBACK_POLL_S", 120.0)  # only the poke can wake it
    _a_submit_wakes_an_idle_worker(path, "the idle worker slept through the submit")


def test_a_folder_that_cannot_be_made_means_polling_not_a_crash(tmp_path):
    Path(f"{tmp_path / 'q.db'}.wake").write_text("a file where the folder would be")
    assert WakeChannel(str(tmp_path / "q.db")).listener() is None
    _a_submit_wakes_an_idle_worker(str(tmp_path / "q.db"), "data_version did not wake the worker")


def test_an_alarm_ends_a_socket_wait_at_once_and_the_fallback_keeps_its_own_pace(tmp_path):
    """``wait_for_commit`` with a listener reads the queue (``changed``) only at the
    fallback's pace, and an ``Alarm`` set from another thread wakes it at once; a plain
    Event is looked at every ``STOP_CHECK_S``."""
    listener = WakeChannel(str(tmp_path / "q.db")).listener()
    assert listener is not None
    looks: list[float] = []
    alarm = Alarm()
    threading.Timer(0.3, alarm.set).start()
    began = time.monotonic()
    wait_for_commit(listener, lambda: looks.append(1) or False, 30, alarm, poll_s=60)
    assert time.monotonic() - began < 5 and not looks
    alarm.clear()
    assert not alarm.is_set() and not listener.wait(0.05, alarm)  # drained: no stale wake
    began = time.monotonic()
    wait_for_commit(listener, lambda: looks.append(1) or False, 0.5, alarm, poll_s=0.2)
    assert 1 <= len(looks) <= 3  # the fallback's own pace (0.2 s) within the 0.5 s wait
    listener.close()


class _CountingListener:
    """A listener that counts how often ``wait_for_commit`` went back to sleep on it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.waits = 0

    def wait(self, timeout: float, stop: threading.Event) -> bool:
        self.waits += 1
        return bool(self.inner.wait(timeout, stop))


def test_a_set_racing_a_clear_never_leaves_a_wait_spinning(tmp_path):
    """The race of issue #35's idle wake-ups: ``set()`` lands while the dispatcher clears
    its Alarm. Whatever the interleaving, a byte without its flag may not make every
    ``select`` return at once: the wait sleeps its timeout in a few steps, not thousands."""
    listener = WakeChannel(str(tmp_path / "q.db")).listener()
    assert listener is not None
    alarm = Alarm()
    alarm.set()
    threading.Event.clear(alarm)  # the interleaving: the flag cleared after set's byte
    counting = _CountingListener(listener)
    began = time.monotonic()
    wait_for_commit(counting, lambda: False, 0.5, alarm, poll_s=60)  # type: ignore[arg-type]
    assert time.monotonic() - began >= 0.45
    assert counting.waits <= 3, counting.waits
    alarm.set()
    alarm.clear()  # the flag first, then the byte: nothing stale is left
    assert not alarm.is_set() and not listener.wait(0.05, alarm)
    listener.close()
