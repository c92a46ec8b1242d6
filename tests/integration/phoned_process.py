"""``Daemon``: one real ``phoned run`` process and the SQLite queue it serves (test helper)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon.lifecycle.ingress import parse_ingress
from daemon.lifecycle.records import TaskRecord
from daemon.lifecycle.states import TaskState
from daemon.store.sqlite_store import SqliteStore

REPO = Path(__file__).resolve().parents[2]


class Daemon:
    """One ``phoned run`` process and the queue it serves."""

    def __init__(self, env: dict[str, str], queue: Path, log: Path) -> None:
        self.env = env
        self.queue = queue
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, *args: str, umask: int = -1) -> Daemon:
        """Launch ``phoned run ARGS`` (with ``umask``: under that umask)."""
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "daemon.cli", "run", *args],
                env=self.env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                umask=umask,
            )
        return self

    def signal(self, signum: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 30) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def store(self) -> SqliteStore:
        return SqliteStore(str(self.queue))

    def submit(self, raw: dict[str, Any]) -> str:
        spec = parse_ingress({"conversation_id": "conv-e2e", **raw})
        store = self.store()
        try:
            return store.submit(spec, time.time()).id  # type: ignore[arg-type]
        finally:
            store.close()

    def task(self, task_id: str) -> TaskRecord:
        store = self.store()
        try:
            return store.get(task_id)
        finally:
            store.close()

    def wait_for(
        self, task_id: str, done: Callable[[TaskRecord], bool], timeout: float = 30
    ) -> TaskRecord:
        deadline = time.monotonic() + timeout
        task = self.task(task_id)
        while not done(task):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"task {task_id} stuck in {task}\n{self.log.read_text()[-3000:]}"
                )
            time.sleep(0.1)
            task = self.task(task_id)
        return task

    def approve(self, task: TaskRecord) -> None:
        """Approve ``task``'s pending preview as its conversation, quoting its digest."""
        assert task.approval_digest is not None
        store = self.store()
        try:
            store.approve(
                task.id, task.conversation_id, task.revision, task.approval_digest, time.time()
            )
        finally:
            store.close()

    def evidence(self, task_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The task's evidence documents (of ``kind`` when given), oldest first."""
        store = self.store()
        try:
            return [d for d in store.evidence(task_id) if kind is None or d["kind"] == kind]
        finally:
            store.close()

    def state(self, task_id: str, *states: TaskState, timeout: float = 30) -> TaskRecord:
        return self.wait_for(task_id, lambda t: t.state in states, timeout)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
