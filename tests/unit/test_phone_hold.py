"""The phone hold (``phoned.daemon.runtime.phone_hold``): the lock file of one host, the queue's
row for the others, waiting, losing and giving up. Real files, real flock, a real SQLite
queue; the processes that contend are played by separate descriptors and holders."""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
import time
from pathlib import Path

import pytest
from phoned.daemon.runtime.phone_hold import (
    HoldRefused,
    LockFile,
    PhoneHold,
    lock_path,
    read_lock,
)
from phoned.daemon.store.holds import Holder
from phoned.daemon.store.sqlite_store import SqliteStore

SERIAL = "127.0.0.1:5555"


def _me(holder: str = "daemon-a", pid: int = 100) -> Holder:
    return Holder(SERIAL, holder, "host-a", pid, "phoned run", time.time(), 0.0)


def _hold(tmp: Path, folder: str, holder: str, pid: int, **timing: float) -> PhoneHold:
    queue = str(tmp / "queue.db")
    return PhoneHold(
        _me(holder, pid),
        LockFile(lock_path(tmp / folder, SERIAL)),
        lambda: SqliteStore(queue),
        hold_s=timing.get("hold_s", 30.0),
        renew_s=timing.get("renew_s", 10.0),
    )


def test_the_lock_file_names_its_holder_and_refuses_a_second_taker(tmp_path: Path) -> None:
    path = lock_path(tmp_path, SERIAL)
    assert path.name == "phone-127.0.0.1%3A5555.lock"
    first, second = LockFile(path), LockFile(path)
    assert first.take(_me()) is None
    other = second.take(_me("daemon-b", 200))
    assert other is not None and other.describe() == _me().describe()
    assert json.loads(path.read_text())["pid"] == 100  # for anyone to read
    assert read_lock(path) == other
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first._fd is not None and not os.get_inheritable(first._fd)  # adb never inherits it
    first.release()
    assert read_lock(path) is None and path.read_text() == ""
    assert second.take(_me("daemon-b", 200)) is None
    second.release()


def test_a_symlink_where_the_lock_file_goes_is_refused_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    lock_path(tmp_path, SERIAL).symlink_to(target)
    with pytest.raises(HoldRefused, match="symlink"):
        LockFile(lock_path(tmp_path, SERIAL)).take(_me())
    with pytest.raises(HoldRefused):
        read_lock(lock_path(tmp_path, SERIAL))
    assert target.read_text() == "keep"


def test_a_folder_where_the_lock_file_goes_or_a_linked_state_folder_is_refused(
    tmp_path: Path,
) -> None:
    lock_path(tmp_path, SERIAL).mkdir()
    with pytest.raises(HoldRefused, match="cannot use"):
        LockFile(lock_path(tmp_path, SERIAL)).take(_me())
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "linked").symlink_to(real)
    with pytest.raises(HoldRefused):
        LockFile(lock_path(tmp_path / "linked", SERIAL)).take(_me())
    assert list(real.iterdir()) == []


def test_the_lock_file_is_the_groups_in_a_shared_state_folder(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2770)
    lock = LockFile(lock_path(shared, SERIAL))
    assert lock.take(_me()) is None
    assert stat.S_IMODE(lock_path(shared, SERIAL).stat().st_mode) == 0o660
    lock.release()


def test_a_holder_on_another_host_is_kept_out_by_the_queue(tmp_path: Path) -> None:
    """Two state folders (two hosts): the lock files do not meet, the queue's row does."""
    a = _hold(tmp_path, "host-a", "daemon-a", 100)
    b = _hold(tmp_path, "host-b", "daemon-b", 200)
    store = SqliteStore(str(tmp_path / "queue.db"))
    try:
        assert a.take(store) is None and a.held
        other = b.take(store)
        assert other is not None and other.same_holder(a.me)
        assert not b.lock.held  # its own lock file was given back at once
        a.release()
        assert store.phone_holds() == []
        assert b.take(store) is None
        b.release()
    finally:
        store.close()


def test_waiting_says_who_holds_once_and_gives_up_at_the_deadline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "phoned.hold")
    a = _hold(tmp_path, "state", "daemon-a", 100)
    b = _hold(tmp_path, "state", "daemon-b", 200)  # the same state folder: the lock file
    store = SqliteStore(str(tmp_path / "queue.db"))
    try:
        assert a.take(store) is None
        began = time.monotonic()
        assert not b.wait(store, threading.Event(), 0.05, deadline=began + 0.5)
        assert time.monotonic() - began >= 0.45
        said = [r for r in caplog.records if "waiting for it" in r.getMessage()]
        assert len(said) == 1 and said[0].levelno == logging.WARNING
        assert "held by daemon daemon-a on host host-a, pid 100" in said[0].getMessage()
        a.release()
        assert b.wait(store, threading.Event(), 0.05)
        b.release()
    finally:
        store.close()


def test_a_hold_another_took_is_lost_and_says_so(tmp_path: Path) -> None:
    a = _hold(tmp_path, "host-a", "daemon-a", 100, hold_s=5.0, renew_s=0.05)
    lost = threading.Event()
    a.on_lost = lost.set
    store = SqliteStore(str(tmp_path / "queue.db"))
    try:
        assert a.take(store) is None
        store.release_phone(a.me)  # as if it had expired, and another host took it
        at = time.time()
        store.hold_phone(Holder(SERIAL, "daemon-b", "host-b", 200, "phoned run", at, at + 30))
        assert lost.wait(5) and not a.held
        a.release()  # leaves the other holder's row alone
        assert [h.holder for h in store.phone_holds()] == ["daemon-b"]
    finally:
        store.close()


def test_every_hold_of_the_process_is_renewed_by_one_thread(tmp_path: Path) -> None:
    """Three phones held: one renewal thread keeps all three rows ahead of their expiry
    (issue #35: a thread per phone woke the idle daemon per phone); it ends with the last."""
    queue = str(tmp_path / "queue.db")
    serials = [f"127.0.0.1:{5555 + 2 * i}" for i in range(3)]
    holds = [
        PhoneHold(
            Holder(serial, "daemon-a", "host-a", 100, "phoned run", time.time(), 0.0),
            LockFile(lock_path(tmp_path / "host-a", serial)),
            lambda: SqliteStore(queue),
            hold_s=5.0,
            renew_s=0.05,
        )
        for serial in serials
    ]
    store = SqliteStore(queue)
    try:
        for hold in holds:
            assert hold.take(store) is None
        taken = {h.serial: h.expires_at for h in store.phone_holds()}
        time.sleep(0.5)  # about ten renewal periods
        renewers = [t for t in threading.enumerate() if t.name.startswith("hold-")]
        assert [t.name for t in renewers] == ["hold-renewals"]
        renewed = {h.serial: h.expires_at for h in store.phone_holds()}
        assert sorted(renewed) == sorted(serials)
        assert all(renewed[s] > taken[s] for s in serials), (taken, renewed)
        for hold in holds:
            hold.release()
        renewers[0].join(timeout=5)
        assert not renewers[0].is_alive() and store.phone_holds() == []
    finally:
        store.close()
