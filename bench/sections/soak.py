"""A long run of one daemon: does it plateau? (issue #24 point 4)

``phoned sim --connect`` and ``phoned run`` as processes on a SQLite queue, with a small
``retention.max_tasks`` (1000; 100 in ``--short``) and a sweep every 2 s so that retention
prunes while the soak runs (one batch of at most 500 tasks per sweep). Tasks are submitted
in blocks of ``BLOCK`` and run one after another on the phone: ``dnd.get``, ``volume.set``
to 3 and to 7 (a journaled effect), and every 50th a ``screen.snapshot`` (a hierarchy and a
screenshot in the task's artifacts folder). At 0, 1k, 5k and 10k tasks (short: 0, 200,
500) it reads the daemon's RSS, open file descriptors and threads from ``/proc``, the
tasks/s since the previous mark, and what the queue keeps: tasks, the file's used bytes
(pages not on the freelist), the artifacts folders. At the end, once the sweeper caught
up, the bytes per task the queue keeps after retention: its used bytes over those of the
empty queue, divided by the tasks it keeps.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.config import Config
from bench.sections import Section, row, section
from bench.sections.daemon import daemon_stack
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import TERMINAL, TaskState
from phoned.daemon.store import retention
from phoned.daemon.store.sqlite_store import SqliteStore
from scripts.bench_daemon import rss_mib
from scripts.stack import AdbEnv, adb_server

TITLE = "soak (phoned run, SQLite queue, retention on)"
MARKS = {False: (0, 1000, 5000, 10000), True: (0, 200, 500)}
MAX_TASKS = {False: 1000, True: 100}  # retention.max_tasks during the soak
SWEEP_S = 2.0
BLOCK = 50  # tasks submitted at once; the phone runs them one after another
SNAPSHOT_EVERY = 50
CYCLE: tuple[tuple[str, dict[str, Any]], ...] = (
    ("dnd.get", {}),
    ("volume.set", {"stream": "music", "level": 3}),
    ("volume.set", {"stream": "music", "level": 7}),
)
GOAL_KIB_PER_TASK = 0.5  # RSS growth from the second mark to the last, per task


@dataclasses.dataclass(frozen=True)
class Mark:
    """What the daemon and its queue hold after ``tasks`` tasks."""

    tasks: int
    seconds: float  # since the soak started
    tasks_per_s: float | None  # since the previous mark
    rss_mib: float
    fds: int
    threads: int
    queue_tasks: int  # rows the queue keeps (every state)
    queue_used_bytes: int  # the file's pages minus its free pages
    queue_file_bytes: int  # the file on disk (its WAL not included)
    artifacts_folders: int


def _task(i: int) -> dict[str, Any]:
    method, params = ("screen.snapshot", {}) if i % SNAPSHOT_EVERY == 0 else CYCLE[i % 3]
    return {"method": method, "params": params, "conversation_id": "soak"}


def _run_block(store: SqliteStore, start: int, count: int) -> int:
    """Submit ``count`` tasks and wait until each ended; the number that did not complete."""
    ids = [
        store.submit(validate_task(_task(i)), time.time()).id for i in range(start, start + count)
    ]
    deadline = time.monotonic() + 60 + count
    while True:
        states = [store.get(i).state for i in ids]  # fmt: skip
        if all(s in TERMINAL for s in states):
            return sum(1 for s in states if s is not TaskState.COMPLETED)
        if time.monotonic() > deadline:
            raise RuntimeError(f"soak: tasks still running after {count + 60} s: {states}")
        time.sleep(0.02)


def _proc(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def _mark(
    pid: int, store: SqliteStore, work: Path, tasks: int, t0: float, last: Mark | None
) -> Mark:
    now = time.monotonic() - t0
    rate = None if last is None else round((tasks - last.tasks) / max(1e-9, now - last.seconds), 1)
    free = store.db.one("retention_free_pages") or {}
    file_bytes = retention.queue_bytes(store.db)
    artifacts = work / "artifacts"
    return Mark(
        tasks=tasks, seconds=round(now, 1), tasks_per_s=rate, rss_mib=round(rss_mib(pid), 1),
        fds=len(os.listdir(f"/proc/{pid}/fd")), threads=_proc(pid, "Threads"),
        queue_tasks=sum(store.queue_status().values()),
        queue_used_bytes=file_bytes - int(free.get("pages", 0)) * int(free.get("page_size", 0)),
        queue_file_bytes=file_bytes,
        artifacts_folders=len(list(artifacts.iterdir())) if artifacts.exists() else 0,
    )  # fmt: skip


def _caught_up(store: SqliteStore, cap: int, timeout: float) -> None:
    """Wait until the sweeper pruned the queue down to ``cap`` finished tasks."""
    deadline = time.monotonic() + timeout
    while retention.kept_terminal(store.db) > cap and time.monotonic() < deadline:
        time.sleep(0.2)


def soak(adb: AdbEnv, work: Path, cfg: Config) -> tuple[list[Mark], int, int]:
    """The marks of one soak, the tasks that did not complete, and the finished tasks kept."""
    cap, marks = MAX_TASKS[cfg.short], MARKS[cfg.short]
    env = dict(adb.env, PHONED_RETENTION_MAX_TASKS=str(cap), PHONED_SWEEP_INTERVAL=str(SWEEP_S))
    with daemon_stack(AdbEnv(adb.port, adb.adb, env), work, cfg.sdk) as (pid, _):
        store = SqliteStore(str(work / "queue.db"))
        try:
            t0, done, failed = time.monotonic(), 0, 0
            taken = [_mark(pid, store, work, 0, t0, None)]
            for target in marks[1:]:
                while done < target:
                    count = min(BLOCK, target - done)
                    failed += _run_block(store, done, count)
                    done += count
                taken.append(_mark(pid, store, work, done, t0, taken[-1]))
            _caught_up(store, cap, timeout=4 * SWEEP_S + 10)
            final = dataclasses.replace(_mark(pid, store, work, done, t0, None), tasks_per_s=None)
            return [*taken, final], failed, retention.kept_terminal(store.db)
        finally:
            store.close()


def _describe(m: Mark) -> str:
    rate = f"{m.tasks_per_s} tasks/s since the previous mark; " if m.tasks_per_s else ""
    return (
        f"{rate}RSS {m.rss_mib} MiB, {m.fds} fds, {m.threads} threads; queue keeps "
        f"{m.queue_tasks} tasks in {m.queue_used_bytes / 2**20:.2f} MiB "
        f"(file {m.queue_file_bytes / 2**20:.2f} MiB), {m.artifacts_folders} artifacts folders"
    )


def run(cfg: Config) -> Section:
    """The soak, its marks as rows, then the RSS slope and the bytes kept per task."""
    with adb_server() as adb, tempfile.TemporaryDirectory(prefix="phoned-soak-") as tmp:
        marks, failed, kept = soak(adb, Path(tmp), cfg)
    *during, final = marks
    rows = [row(f"after {m.tasks} tasks", value=_describe(m)) for m in during]
    first, last = during[1], during[-1]
    slope = (last.rss_mib - first.rss_mib) * 1024 / max(1, last.tasks - first.tasks)
    elapsed = last.seconds - during[0].seconds
    # what the tasks take: the used bytes over those of the empty queue (schema, indexes)
    per_task = (final.queue_used_bytes - during[0].queue_used_bytes) / max(1, final.queue_tasks)
    rows += [
        row(f"RSS from {first.tasks} to {last.tasks} tasks",
            value=f"{slope:+.3f} KiB per task ({first.rss_mib} -> {last.rss_mib} MiB)",
            note=f"goal < {GOAL_KIB_PER_TASK} KiB per task: {cfg.verdict(slope < GOAL_KIB_PER_TASK)}"),
        row("throughput", value=f"{last.tasks / elapsed:.1f} tasks/s over {last.tasks} tasks "
            f"({failed} did not complete)"),
        row(f"queue after retention (max_tasks {MAX_TASKS[cfg.short]}, swept every {SWEEP_S:g} s)",
            value=f"{per_task:.0f} bytes per task kept "
                  f"({final.queue_tasks} tasks, {kept} finished, in "
                  f"{final.queue_used_bytes / 2**20:.2f} MiB; file "
                  f"{final.queue_file_bytes / 2**20:.2f} MiB); {final.artifacts_folders} "
                  f"artifacts folders"),
    ]  # fmt: skip
    data = {
        "marks": [dataclasses.asdict(m) for m in during],
        "after_retention": dataclasses.asdict(final),
        "rss_kib_per_task": round(slope, 3),
        "tasks_per_s": round(last.tasks / elapsed, 1),
        "not_completed": failed,
        "max_tasks": MAX_TASKS[cfg.short],
        "sweep_interval_s": SWEEP_S,
        "bytes_per_task_kept": round(per_task),
    }
    return section(TITLE, rows, None, data)
