"""``dump_stacks``: what ``kill -USR1`` prints of a running daemon: every thread's stack,
each under its thread's name, the calling thread marked, read while the GIL holds them."""

from __future__ import annotations

import io
import threading

from phoned.foundation.threads import dump_stacks, spawn


def _parked_in_a_named_frame(release: threading.Event, parked: threading.Event) -> None:
    parked.set()
    release.wait(10)


def test_every_thread_is_under_its_name_with_its_frames_and_the_caller_is_marked() -> None:
    release, parked = threading.Event(), threading.Event()
    thread = spawn("worker-emu-7", _parked_in_a_named_frame, release, parked)
    try:
        assert parked.wait(5)
        out = io.StringIO()
        dump_stacks(out)
    finally:
        release.set()
        thread.join(5)
    text = out.getvalue()
    header = f'Thread 0x{thread.ident:016x} "worker-emu-7" (most recent call last):'
    assert header in text
    worker_part = text.split(header, 1)[1].split("\n\n", 1)[0]
    assert "_parked_in_a_named_frame" in worker_part and "release.wait(10)" in worker_part
    main = f'Current thread 0x{threading.get_ident():016x} "{threading.current_thread().name}"'
    assert main in text
    assert "dump_stacks(out)" in text.split(main, 1)[1].split("\n\n", 1)[0]
