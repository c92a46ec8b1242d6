"""One driver per phone, whatever starts it: the hold a worker takes before any command.

::

    hold = phone_hold(cfg, stores, serial, holder="host-1a2b", command="phoned run")
    if hold.wait(store, stop, retry_s):  # says who holds it, once, then every WAIT_LOG_S
        ...                              # serve the phone; renewed on a thread of its own
    hold.release()

The hold has two layers, taken in this order before the first command is sent to the phone
and kept while a worker serves it:

* ``LockFile``, ``<state folder>/phone-<serial>.lock``: ``fcntl.flock`` on a file opened
  with ``O_NOFOLLOW`` in its folder's descriptor (a symlink there, or as the folder, is
  refused, never followed: ``phoned.foundation.private_files``) and ``O_CLOEXEC`` (an adb server this process
  starts does not inherit it). It keeps apart every process of
  this host that uses this state folder: a second unit started by mistake, ``run --once``
  beside the service. The kernel drops the lock when its process dies. The holder is
  written in the file as JSON for others to read (``read_lock``: ``phoned doctor``); the
  file is 0600, 0660 in a group's shared state folder (``phoned.foundation.private_files``).
* the queue's phone hold (``phoned.daemon.store.holds``): daemons on other hosts, or with another
  state folder, sharing the queue, as with a network phone (``host:port``) two hosts
  reach. Renewed every third of ``lease_seconds`` (20 s by default: three times a minute,
  issue #24) by one thread for every hold of the process (``Renewals``: ten phones wake it
  no more often than one, issue #35); it expires ``lease_seconds`` after the last renewal, so a holder that died without releasing blocks the phone that long at most (a
  restart of the same daemon takes its own row back at once).

A hold that could not be renewed within ``lease_seconds`` (the queue unreachable that long;
a busy or full queue is waited out instead: ``phoned.daemon.runtime.patience``)
or that another holder took meanwhile is lost: ``on_lost`` is called, and the worker stops
after its current task (``phoned.daemon.runtime.worker``); the supervisor's next worker for the
phone waits for it again.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from phoned.daemon.lifecycle.errors import LifecycleError, QueueWeather
from phoned.daemon.runtime.patience import weather
from phoned.daemon.store import holds
from phoned.daemon.store.holds import Holder
from phoned.daemon.store.open import QueueMissing, QueueUrlError, open_planner_store
from phoned.foundation.private_files import UnsafePath, private_dir, queue_mode
from phoned.foundation.threads import spawn

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.daemon.store.protocol import WorkerStore

log = logging.getLogger("phoned.hold")

WAIT_LOG_S = 60.0  # a worker waiting for its phone says so again this often
_UNKNOWN = "(unknown: the lock file says nothing readable)"


class HoldRefused(OSError):
    """The lock file cannot be used (a symlink, or another user's file): the phone is not
    driven from here until that is fixed."""


def lock_path(state_dir: Path, serial: str) -> Path:
    """The lock file of ``serial`` in ``state_dir`` (the serial percent-encoded)."""
    return state_dir / f"phone-{quote(serial, safe='')}.lock"


def _open(path: Path, flags: int, *, create: bool) -> int:
    """The lock file's descriptor: its folder checked as every state folder is (made when
    missing, with ``create``: ``phoned.foundation.private_files``) and opened without following a
    link, the file opened in it ``O_NOFOLLOW``, a regular file. ``HoldRefused`` for a link,
    another kind of file or one this user may not open."""
    try:
        if create:
            private_dir(path.parent, own=False)
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            fd = os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, queue_mode(path),
                         dir_fd=folder)  # fmt: skip
        finally:
            os.close(folder)
    except FileNotFoundError:
        raise
    except UnsafePath as exc:
        raise HoldRefused(exc.errno or errno.EPERM, str(exc)) from exc
    except OSError as exc:  # a link (ELOOP, ENOTDIR), a folder, another user's file, ...
        why = "a symlink" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else exc.strerror
        raise HoldRefused(exc.errno or errno.EPERM, f"cannot use {path}: {why}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise HoldRefused(errno.EPERM, f"{path} is not a regular file: refused")
    return fd


def _holder_in(fd: int, serial: str) -> Holder:
    """The holder a lock file names (a placeholder when it names none readable)."""
    try:
        return Holder.from_json(json.loads(os.pread(fd, 4096, 0) or b"{}"))
    except (ValueError, KeyError, TypeError):
        return Holder(serial, _UNKNOWN, "", 0, "", 0.0, 0.0)


class LockFile:
    """This host's layer of the hold: an exclusive ``flock`` on the phone's lock file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def take(self, me: Holder) -> Holder | None:
        """Lock the file and write ``me`` in it; None when taken, else who holds it.
        Raises ``HoldRefused`` when the file cannot be used."""
        fd = _open(self.path, os.O_RDWR | os.O_CREAT, create=True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = _holder_in(fd, me.serial)
            os.close(fd)
            return other
        if os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, queue_mode(self.path))
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me.to_json()).encode(), 0)
        self._fd = fd
        return None

    def release(self) -> None:
        """Empty the file and unlock it (the file stays: removing it would race a taker)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor drops the flock


def read_lock(path: Path) -> Holder | None:
    """Who holds the lock file at ``path`` now; None when nobody does (or no file is
    there). Raises ``HoldRefused`` for a file that cannot be used."""
    try:
        fd = _open(path, os.O_RDONLY, create=False)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder_in(fd, "")
        return None  # we got it: nobody holds it (closing drops our shared lock)
    finally:
        os.close(fd)


@dataclass
class _Waiting:
    """What a waiting worker said last, so it says it again only when something changed."""

    since: float
    said_at: float = 0.0
    about: str = ""


class PhoneHold:
    """The hold on one phone for one holder (a daemon, or a ``run --once``)."""

    def __init__(
        self,
        me: Holder,
        lock: LockFile,
        store_factory: Callable[[], WorkerStore],
        *,
        hold_s: float,
        renew_s: float,
    ) -> None:
        self.me = me
        self.lock = lock
        self.store_factory = store_factory
        self.hold_s = hold_s
        self.renew_s = min(renew_s, hold_s / 3)
        self.on_taken: Callable[[], None] | None = None  # called once held (presence)
        self.on_lost: Callable[[], None] | None = None
        self.lost = threading.Event()
        self._held = False
        self._lock = threading.Lock()  # a renewal and a release never overlap
        self._store: WorkerStore | None = None  # the renewals' own connection
        self._good_until = 0.0  # monotonic: the row may expire after this without renewal

    @property
    def serial(self) -> str:
        return self.me.serial

    @property
    def held(self) -> bool:
        """This process holds the phone now (both layers) and has not lost it."""
        return self._held and not self.lost.is_set()

    # -- taking ----------------------------------------------------------------------------
    def take(self, store: WorkerStore) -> Holder | None:
        """One try at both layers; None when this process holds the phone now, else who
        does. Raises ``HoldRefused`` (the lock file) or ``LifecycleError`` (the queue)."""
        if self.held:
            return None
        now = time.time()
        other = self.lock.take(self.me.renewed(now, 0.0))
        if other is not None:
            return other
        try:
            row = store.hold_phone(self.me.renewed(now, self.hold_s))
        except BaseException:
            self.lock.release()
            raise
        if not row.same_holder(self.me):
            self.lock.release()
            return row
        self._held = True
        self.lost.clear()
        self._good_until = time.monotonic() + self.hold_s - self.renew_s
        RENEWALS.add(self)
        if self.on_taken is not None:
            self.on_taken()
        return None

    def wait(
        self,
        store: WorkerStore,
        stop: threading.Event,
        retry_s: float,
        deadline: float | None = None,
    ) -> bool:
        """Take the phone, retrying every ``retry_s`` until ``stop`` is set or the
        ``time.monotonic()`` ``deadline`` passed; True once held. Meanwhile it says who holds
        the phone (once, again every ``WAIT_LOG_S`` and when the holder changes) and sends
        the phone nothing."""
        waiting = _Waiting(since=time.monotonic())
        while not stop.is_set():
            try:
                other = self.take(store)
                about = "" if other is None else f"held by {other.describe()}"
            except (HoldRefused, LifecycleError) as exc:
                about = f"cannot be held: {exc}"
            if not about:
                if waiting.said_at:
                    log.info("phone %s: hold taken after %.0f s", self.serial,
                             time.monotonic() - waiting.since)  # fmt: skip
                return True
            self._say(waiting, about)
            left = retry_s if deadline is None else min(retry_s, deadline - time.monotonic())
            if left <= 0 or stop.wait(left):
                break
        return False

    def _say(self, waiting: _Waiting, about: str) -> None:
        at = time.monotonic()
        if about == waiting.about and at - waiting.said_at < WAIT_LOG_S:
            return
        level = logging.WARNING if about != waiting.about else logging.INFO
        log.log(level, "phone %s is %s; waiting for it (%.0f s so far), sending it nothing",
                self.serial, about, at - waiting.since)  # fmt: skip
        waiting.said_at, waiting.about = at, about

    # -- keeping and giving up -------------------------------------------------------------
    def renew(self) -> None:
        """Renew the queue's row once (``Renewals`` calls it every ``renew_s``); call
        ``on_lost`` when another took it, or when the last renewal is so old that the row may
        expire before the next try. Nothing once released."""
        with self._lock:
            if not self._held or self.lost.is_set():
                return
            try:
                self._store = self._store or self.store_factory()
                row = self._store.hold_phone(self.me.renewed(time.time(), self.hold_s))
            except QueueWeather as exc:
                # Busy or full: no other holder can write the row either, and this host's
                # lock file is still ours. Kept; renewed once the queue takes it (a holder
                # that took the row meanwhile is found then).
                weather.met(f"hold renewal of {self.serial}", exc)
                return
            except LifecycleError as exc:
                if time.monotonic() < self._good_until:
                    log.warning("phone %s: hold not renewed: %s", self.serial, exc)
                    return
                self._lose(f"not renewed for {self.hold_s:g} s ({exc})")
                return
            if not row.same_holder(self.me):
                self._lose(f"taken by {row.describe()}")
                return
            self._good_until = time.monotonic() + self.hold_s - self.renew_s

    def _lose(self, why: str) -> None:
        log.error("phone %s: hold lost (%s): its worker stops after its current task",
                  self.serial, why)  # fmt: skip
        self.lost.set()
        if self.on_lost is not None:
            self.on_lost()

    def release(self) -> None:
        """Give the phone up: the queue's row (when still ours), then the lock file."""
        with self._lock:  # a renewal under way ends first; none starts after
            if not self._held:
                return
            self._held = False
            renewals, self._store = self._store, None
        RENEWALS.remove(self)
        if renewals is not None:
            renewals.close()
        try:
            store = self.store_factory()
            try:
                store.release_phone(self.me)
            finally:
                store.close()
        except LifecycleError as exc:  # it expires by itself
            log.warning("phone %s: hold not released in the queue: %s", self.serial, exc)
        self.lock.release()


# A hold's first renewal comes a quarter of its period early. The daemon's main loop writes
# its presence row when a hold is taken and every PRESENCE_INTERVAL_S (30 s) after, and the
# holds were renewed every third of lease_seconds (20 s) from that same moment, so the two
# threads woke in the same millisecond every minute, beside the 60 s fallbacks of
# `dispatch` and `track-devices`, and passed the GIL back and forth at each SQLite call:
# 3 to 10 switches a minute more than their timers in an idle one-phone daemon (issue
# #35). A quarter early, with the default periods, the renewals come 5 s or more from any
# presence row (15, 35, 55, 75 ... against 30, 60, 90 ...).
FIRST_RENEWAL = 0.75


class Renewals:
    """The one thread that renews every hold of this process, all in the same wake, as soon
    as one of them is due (every ``renew_s`` of its own): an idle daemon with ten phones
    wakes for its holds as often as with one (issue #35 measured a thread per phone, 2 to 6
    wake-ups a minute each). A hold renewed before it is due loses nothing (its row lasts
    longer); the thread ends when no hold is left."""

    def __init__(self) -> None:
        self._due: dict[PhoneHold, float] = {}  # each hold's next renewal (monotonic)
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, hold: PhoneHold) -> None:
        with self._changed:
            self._due[hold] = time.monotonic() + hold.renew_s * FIRST_RENEWAL
            if self._thread is None:
                self._thread = spawn("hold-renewals", self._run)
            self._changed.notify()  # it may be due before the others

    def remove(self, hold: PhoneHold) -> None:
        with self._changed:
            self._due.pop(hold, None)
            self._changed.notify()  # the last one gone: the thread ends now

    def _run(self) -> None:
        while True:
            with self._changed:
                while self._due and (left := min(self._due.values()) - time.monotonic()) > 0:
                    self._changed.wait(left)
                if not self._due:
                    self._thread = None
                    return
                holds = list(self._due)
            for hold in holds:  # outside the lock: a renewal may wait on its queue
                hold.renew()
            with self._changed:
                now = time.monotonic()
                for hold in holds:
                    if hold in self._due:  # not released meanwhile
                        self._due[hold] = now + hold.renew_s


RENEWALS = Renewals()


def phone_hold(
    cfg: Config,
    store_factory: Callable[[], WorkerStore],
    serial: str,
    *,
    holder: str,
    command: str,
) -> PhoneHold:
    """The hold ``holder`` (a daemon id; ``<id>/once`` for ``run --once``) takes on
    ``serial``: its lock file in ``cfg``'s state folder, renewed every third of
    ``lease_seconds``, expiring ``lease_seconds`` after the last renewal."""
    me = Holder(serial, holder, socket.gethostname(), os.getpid(), command, 0.0, 0.0)
    return PhoneHold(
        me,
        LockFile(lock_path(cfg.state_path, serial)),
        store_factory,
        hold_s=cfg.lease_seconds,
        renew_s=cfg.lease_seconds / 3,
    )


def describe_holder(cfg: Config, serial: str) -> str:
    """Who drives ``serial`` as far as this host can tell without touching the phone: the
    lock file in this state folder, else the queue's row; "" when nobody does. For
    ``phoned doctor``; a queue that cannot be read is said, never waited for."""
    try:
        local = read_lock(lock_path(cfg.state_path, serial))
    except OSError as exc:
        return f"lock file unusable: {exc}"
    if local is not None:
        return f"held by {local.describe()}"
    return _queue_holder(cfg, serial)


def _queue_holder(cfg: Config, serial: str) -> str:

    try:
        store = open_planner_store(cfg.queue_url, create=False)  # doctor creates no queue
        try:
            rows = store.phone_holds()
        finally:
            store.close()
    except QueueMissing:
        return ""  # no queue yet: nothing holds the phone there
    except (LifecycleError, QueueUrlError, OSError) as exc:
        return f"unknown (the queue was not read: {exc})"
    row = holds.live(rows, time.time()).get(serial)
    return "" if row is None else f"held by {row.describe()} (the queue's hold)"
