"""The daemon's threads, named for the operating system too.

``top -H -p PID``, ``/proc/PID/task/*/comm`` and the idle benchmark's wake-ups per thread
(``scripts/bench_daemon.py``) then say which thread is which: Python before 3.14 names only
its own ``Thread`` object, every OS thread of the process being called ``python``. Linux
keeps 15 bytes of a name (``prctl(PR_SET_NAME)``, prctl(2)); elsewhere names stay Python's.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import faulthandler
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import Any

_PR_SET_NAME = 15  # <linux/prctl.h>
_libc: Any = None


def name_os_thread(name: str) -> None:
    """Give the calling thread ``name`` (its first 15 bytes) in the operating system."""
    global _libc
    if not sys.platform.startswith("linux"):
        return
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    _libc.prctl(_PR_SET_NAME, name.encode("utf-8", "replace")[:15], 0, 0, 0)


def spawn(name: str, target: Callable[..., object], *args: Any) -> threading.Thread:
    """Start ``target(*args)`` on a daemon thread called ``name`` in Python and the OS."""

    def run() -> None:
        name_os_thread(name)
        target(*args)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def thread_stacks() -> str:
    """Every thread's stack (most recent call first), each under its thread's name and id,
    the caller's marked ``Current thread``.

    For a ``SIGUSR1`` handler (``phoned run``), which Python runs on the main thread. The
    stacks are read by ``faulthandler.dump_traceback`` called from Python: C code that
    holds the GIL from the first thread to the last, so no other thread moves meanwhile.
    Walking ``sys._current_frames()`` in Python does not: the walk gives the GIL up (at
    the switch interval, around each file read for a source line), and a thread whose
    captured frame is a generator's that then suspended shows that frame alone (its
    ``f_back`` is None once suspended): a worker in a generator expression showed two
    lines of ``typing.py`` and nothing of ``worker.py``. faulthandler called from the
    signal itself (``faulthandler.register``) is not used: it walks the threads while they
    run and can crash a busy process (python/cpython#116008).
    """
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    with tempfile.TemporaryFile() as out:  # faulthandler writes to a file descriptor
        faulthandler.dump_traceback(out, all_threads=True)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    # faulthandler names a thread by its id only (``Thread 0x%016lx (most recent call
    # first):``, Python/traceback.c): add the name threading knows it by
    for ident, name in names.items():
        if ident is not None:
            text = text.replace(f"0x{ident:016x} (", f'0x{ident:016x} "{name}" (', 1)
    return text


def write_thread_stacks(fd: int) -> None:
    """``thread_stacks`` on file descriptor ``fd``: the ``SIGUSR1`` handler's body, which
    never raises into the main thread it interrupts. Without a temporary file to read the
    dump back from (no writable temporary directory), faulthandler writes it to ``fd``
    itself, each thread by its id only; a descriptor that cannot be written to (a closed
    stderr) gets nothing."""
    try:
        text = thread_stacks()
    except OSError:
        with contextlib.suppress(OSError):
            faulthandler.dump_traceback(fd, all_threads=True)
        return
    with contextlib.suppress(OSError):
        write_all(fd, text)


def write_all(fd: int, text: str) -> None:
    """Write ``text`` to file descriptor ``fd`` unbuffered: from a signal handler, where
    ``sys.stderr``'s buffer may be half-way through a write of the interrupted code (a
    second write into it would raise "reentrant call")."""
    data = text.encode("utf-8", "replace")
    while data:
        data = data[os.write(fd, data) :]
