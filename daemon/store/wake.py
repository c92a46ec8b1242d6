"""Local wake-ups for the SQLite queue: Unix datagram sockets beside the queue file.

An idle worker binds one socket in ``<queue>.wake/`` and sleeps in ``select``; a process
that commits a task into ``queued`` (``phoned submit``, amend, approve, cancel, rerun, a
daemon's requeue) sends one byte to every socket there after its commit. The worker wakes
within the kernel's scheduling latency instead of at its next ``PRAGMA data_version``
poll, which stays as the slow fallback (another host on a network file system, a writer
that does not poke, a system without ``/proc`` whose queue path is too long for a socket).

A socket's address is a path of at most 107 bytes (``sun_path``, unix(7)); a queue deeper
than that (a long ``XDG_STATE_HOME``, a test's temporary folder) binds and pokes through
the folder's descriptor, ``/proc/self/fd/N/<name>``, a short path the kernel resolves to the
folder itself (proc(5): ``/proc/pid/fd/`` entries are links to the open files). Until
2026-12-07 such a queue polled only: a task waited up to a second for its pickup.

It is the SQLite counterpart of PostgreSQL's ``LISTEN phoned_work`` (``tasks_notify_work``
in ``sql/postgres/0001_initial.sql``): it fires on the same rows, a task row written in
state ``queued``, except one the same transaction also moved on: a task that ``phoned
serve`` queues and hands to a waiting claim in one transaction wakes no one here (nothing
is left to claim; a poke costs the pickup about 0.2 ms, issue #35), where PostgreSQL still
notifies and its listeners find nothing. The folder is 0700 and each socket 0600: only the
queue's owner may wake its workers. The folder is made and opened without following a link
(``phoned.foundation.private_files``): a link planted in its place is refused (polling only), never
chmod-ed, bound into or poked. A socket whose process died is unlinked by the next poke that finds
no one listening on it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from phoned.foundation.private_files import UnsafePath, private_dir, shared_with_group

log = logging.getLogger(__name__)

# sockaddr_un.sun_path is 108 bytes on Linux, including the terminating NUL
_SUN_PATH_MAX = 107
STOP_CHECK_S = 1.0  # how soon a wait notices a plain Event's stop (an Alarm's: at once)


class Alarm(threading.Event):
    """A ``threading.Event`` a waiter can also ``select`` on: ``set()`` makes ``fileno()``
    readable, so a thread asleep on a socket wakes the moment it is set instead of looking
    at a flag every second (issue #24: an idle daemon's wake-ups)."""

    def __init__(self) -> None:
        super().__init__()
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        # its two sockets live as long as the Alarm (no one has to remember to close it)
        weakref.finalize(self, _close_all, self._read, self._write)

    def set(self) -> None:
        super().set()
        with contextlib.suppress(OSError):  # full: it is readable already
            self._write.send(b"!")

    def clear(self) -> None:
        # The flag first, then the bytes: a set() racing this leaves the flag set (with or
        # without its byte), never a byte without the flag. Draining first let a set() land
        # between the two and leave a byte behind a cleared flag: every select on this
        # Alarm then returned at once while is_set() said False, and a waiter spun until
        # its timeout (thousands of wake-ups a second in the dispatcher, issue #35).
        super().clear()
        self.drop_stale()

    def drop_stale(self) -> None:
        """Read away the bytes of earlier ``set()`` calls (the flag is left as it is)."""
        with contextlib.suppress(OSError):
            while self._read.recv(64):
                pass

    def fileno(self) -> int:
        return self._read.fileno()


def _close_all(*socks: socket.socket) -> None:
    for sock in socks:
        sock.close()


class WakeChannel:
    """The wake-up folder of one queue file."""

    def __init__(self, queue_path: str) -> None:
        self.folder = Path(f"{queue_path}.wake")
        self._prefix = len(os.fsencode(self.folder)) + 1  # a socket's path: folder/name

    def _address(self, folder_fd: int, name: str) -> str:
        """Where a socket ``name`` in the folder (open as ``folder_fd``) is bound or sent
        to: its path, or through the descriptor when that path is too long."""
        if self._prefix + len(os.fsencode(name)) <= _SUN_PATH_MAX:
            return os.path.join(self.folder, name)  # a str join: pathlib's was most of a poke
        return f"/proc/self/fd/{folder_fd}/{name}"

    def listener(self) -> Listener | None:
        """A bound socket to wait on, or None when the folder cannot hold one (poll only)."""
        name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}.sock"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        shared = shared_with_group(self.folder.parent)  # the group's queue: it pokes too
        folder = -1
        try:  # walked from the queue's folder, never through a link (UnsafePath)
            mode = 0o2770 if shared else 0o700  # explicit: the umask would take g+rwx
            private_dir(self.folder, own=shared, root=self.folder.parent, mode=mode, group=shared)
            folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            old = os.umask(0o007 if shared else 0o077)
            try:
                sock.bind(self._address(folder, name))
            finally:
                os.umask(old)
        except UnsafePath as exc:
            sock.close()
            log.warning("no wake-up socket: %s; polling the queue only", exc)
            return None
        except OSError as exc:
            sock.close()
            log.info("no wake-up socket in %s (%s); polling the queue only", self.folder, exc)
            return None
        finally:
            if folder >= 0:
                os.close(folder)
        path = self.folder / name
        sock.setblocking(False)
        return Listener(sock, path)

    def poke(self) -> int:
        """Wake every listener; return how many were reached. Never raises."""
        try:  # the folder itself, not a link planted in its place
            folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            return 0
        try:
            return self._poke_in(folder)
        finally:
            os.close(folder)

    def _poke_in(self, folder: int) -> int:
        """``poke`` with the folder's descriptor: a dead socket is unlinked relative to it."""
        try:
            names = [entry.name for entry in os.scandir(folder)]
        except OSError:
            return 0
        reached = 0
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            for name in names:
                if not name.endswith(".sock"):
                    continue
                try:
                    sock.sendto(b"w", self._address(folder, name))
                    reached += 1
                except BlockingIOError:
                    reached += 1  # its buffer is full of wake-ups already
                except OSError as exc:
                    if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
                        with contextlib.suppress(OSError):
                            os.unlink(name, dir_fd=folder)  # its process is gone
        return reached


class Listener:
    """One worker's bound wake-up socket."""

    def __init__(self, sock: socket.socket, path: Path) -> None:
        self._sock = sock
        self.path = path

    def wait(self, timeout: float, stop: threading.Event) -> bool:
        """Sleep up to ``timeout`` (less once an ``Alarm`` ``stop`` is set); True when
        poked. Drains queued wake-ups."""
        if stop.is_set():
            return False
        watched: list[Any] = [self._sock, stop] if isinstance(stop, Alarm) else [self._sock]
        readable, _, _ = select.select(watched, [], [], max(0.0, timeout))
        if self._sock not in readable:
            if isinstance(stop, Alarm) and stop in readable and not stop.is_set():
                stop.drop_stale()  # a byte without its flag must not wake the next select
            return False
        self._drain()
        return True

    def _drain(self) -> None:
        while True:
            try:
                self._sock.recv(64)
            except OSError:
                return

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self._sock.close()


def wait_for_commit(
    listener: Listener | None,
    changed: Callable[[], bool],
    timeout: float,
    stop: threading.Event,
    poll_s: float,
) -> None:
    """Return when poked, when ``changed()`` says another commit happened, after ``timeout``
    or once ``stop`` is set; ``changed`` is checked every ``poll_s`` (the fallback). An
    ``Alarm`` ``stop`` ends the wait at once; a plain Event is looked at every
    ``STOP_CHECK_S``."""
    start = time.monotonic()
    deadline, next_check = start + timeout, start + poll_s
    while not stop.is_set():
        now = time.monotonic()
        if now >= deadline:
            return
        step = min(deadline, next_check) - now
        if not isinstance(stop, Alarm):
            step = min(step, STOP_CHECK_S)
        if listener is not None:
            if listener.wait(step, stop):
                return
        elif stop.wait(step):
            return
        if time.monotonic() >= next_check:
            if changed():
                return
            next_check = time.monotonic() + poll_s
