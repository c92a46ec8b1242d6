"""``thread_stacks``: what ``kill -USR1`` prints of a running daemon: every thread's stack,
each under its thread's name, the calling thread marked, read while the GIL holds them;
``write_all`` puts it on a file descriptor whole."""

from __future__ import annotations

import linecache
import os
import threading
from pathlib import Path

import pytest
from phoned.foundation.threads import spawn, thread_stacks, write_all, write_thread_stacks
from pytest_mock import MockerFixture


def _parked_in_a_named_frame(release: threading.Event, parked: threading.Event) -> None:
    parked.set()
    release.wait(10)


def test_every_thread_is_under_its_name_with_its_frames_and_the_caller_is_marked() -> None:
    release, parked = threading.Event(), threading.Event()
    thread = spawn("worker-emu-7", _parked_in_a_named_frame, release, parked)
    try:
        assert parked.wait(5)
        text = thread_stacks()
    finally:
        release.set()
        thread.join(5)
    header = f'Thread 0x{thread.ident:016x} "worker-emu-7" (most recent call first):'
    assert header in text
    worker_part = text.split(header, 1)[1].split("\n\n", 1)[0]
    assert "in _parked_in_a_named_frame" in worker_part and "in wait" in worker_part
    main = f'Current thread 0x{threading.get_ident():016x} "{threading.current_thread().name}"'
    assert main in text
    main_part = text.split(main, 1)[1].split("\n\n", 1)[0]
    assert "in test_every_thread_is_under_its_name_with_its_frames" in main_part


def _busy_in_generator_expressions(stop: threading.Event, started: threading.Event) -> None:
    started.set()
    while not stop.is_set():
        sum(x for x in range(200))


def test_a_thread_inside_a_generator_shows_its_whole_stack_in_every_dump() -> None:
    """A stack read frame by frame in Python while the thread runs on: a generator's frame
    loses its ``f_back`` once the generator suspends, and the daemon's worker showed two
    lines of ``typing.py`` and nothing of ``worker.py`` (a CI run, December 2026). As in
    the daemon, a thread parked in a frame is read before the busy one (started last),
    and the source files are not cached yet (a walk that reads them gives the GIL up to
    the busy thread); the Python walk failed here in 274 of 300 dumps."""
    stop, started = threading.Event(), threading.Event()
    busy = spawn("worker-busy", _busy_in_generator_expressions, stop, started)
    assert started.wait(5)
    parked = spawn("parked", stop.wait, 10)
    try:
        for _ in range(40):
            linecache.clearcache()
            text = thread_stacks()
            part = text.split('"worker-busy"', 1)[1].split("\n\n", 1)[0]
            assert "in _busy_in_generator_expressions" in part, text
    finally:
        stop.set()
        busy.join(5)
        parked.join(5)


def test_the_handler_writes_the_named_stacks_to_the_descriptor(tmp_path: Path) -> None:
    out = tmp_path / "stderr"
    with out.open("wb") as sink:
        write_thread_stacks(sink.fileno())
    main = f'Current thread 0x{threading.get_ident():016x} "{threading.current_thread().name}"'
    assert main in out.read_text()


def test_without_a_temporary_file_faulthandler_writes_the_stacks_by_id_alone(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    """A service whose temporary directories are read-only: the dump still comes, each
    thread under its id, and nothing is raised into the interrupted main thread."""
    mocker.patch("tempfile.TemporaryFile", side_effect=OSError(30, "Read-only file system"))
    with pytest.raises(OSError):
        thread_stacks()
    out = tmp_path / "stderr"
    with out.open("wb") as sink:
        write_thread_stacks(sink.fileno())
    text = out.read_text()
    assert f"Current thread 0x{threading.get_ident():016x} (most recent call first):" in text
    assert "in test_without_a_temporary_file_faulthandler_writes_the_stacks_by_id" in text


def test_a_descriptor_nobody_reads_gets_nothing_and_nothing_is_raised() -> None:
    read, write = os.pipe()
    os.close(read)  # a journal gone: the write fails with EPIPE (Python ignores SIGPIPE)
    try:
        write_thread_stacks(write)  # must not raise into the main thread it interrupts
    finally:
        os.close(write)


def test_write_all_puts_a_long_text_on_the_descriptor_whole(tmp_path: Path) -> None:
    text = "é" + "stack line\n" * 20_000  # past a pipe's buffer, not ASCII
    read, write = os.pipe()
    out = tmp_path / "out"
    with out.open("wb") as sink:
        reader = threading.Thread(target=lambda: sink.write(_drain(read)))
        reader.start()
        write_all(write, text)
        os.close(write)
        reader.join(10)
    assert out.read_text("utf-8") == text


def _drain(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)
