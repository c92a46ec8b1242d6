"""The daemon's threads, named for the operating system too.

``top -H -p PID``, ``/proc/PID/task/*/comm`` and the idle benchmark's wake-ups per thread
(``scripts/bench_daemon.py``) then say which thread is which: Python before 3.14 names only
its own ``Thread`` object, every OS thread of the process being called ``python``. Linux
keeps 15 bytes of a name (``prctl(PR_SET_NAME)``, prctl(2)); elsewhere names stay Python's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import traceback
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
    """Every thread's stack, each under its thread's name and id, the caller's marked.

    For a ``SIGUSR1`` handler (``phoned run``): Python runs it on the main thread between
    two bytecodes, holding the GIL, so every other thread is paused at a whole frame while
    it is read. ``faulthandler``'s dump instead walks them from inside the signal itself,
    while they run, and can crash the process it was asked to look at when that process is
    busy (python/cpython#116008; gh-140815 of November 2025 makes it check each frame).
    """
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    current = threading.get_ident()
    parts: list[str] = []
    for ident, frame in sys._current_frames().items():
        name = names.get(ident, "?")
        what = "Current thread" if ident == current else "Thread"
        parts.append(f'{what} 0x{ident:016x} "{name}" (most recent call last):\n')
        parts.extend(traceback.format_stack(frame))
        parts.append("\n")
    return "".join(parts)


def write_all(fd: int, text: str) -> None:
    """Write ``text`` to file descriptor ``fd`` unbuffered: from a signal handler, where
    ``sys.stderr``'s buffer may be half-way through a write of the interrupted code (a
    second write into it would raise "reentrant call")."""
    data = text.encode("utf-8", "replace")
    while data:
        data = data[os.write(fd, data) :]
