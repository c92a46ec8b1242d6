"""One real ``phoned run`` process and the SQLite queue it serves (test helpers).

* ``QueueFile``: a SQLite queue opened per call (submit, read, approve), as another process.
* ``Daemon``: the process and its queue (submit, wait for a state, approve, read evidence,
  run a ``phoned`` verb on the queue, start ``phoned mcp`` over it).
* ``RUN_ONCE``: the argv of ``phoned run --once --json`` (one task, its record printed).
* ``daemon_env(adb_port, state_dir, **overrides)``: the environment it runs with (the private
  adb server's port, short poll, heartbeat and sweep intervals, JSON logs).
* ``fresh_daemon(env, tmp)``: a ``Daemon`` over ``tmp/state/queue.db`` with its schema made,
  killed on exit (integration and scenario tests alike).
* ``supervised_here(cfg, adb_port, name)``: the same daemon (its ``Supervisor``) on threads
  of this process, for a test that looks inside it; a store on its queue to submit with.
* ``BeforeLine`` / ``Hooks``: a simulated phone's shell that calls hooks with each command
  line before it runs it, so a test acts at a named point of an attempt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypeVar

from mcp import ClientSession, StdioServerParameters, stdio_client
from phoned.daemon.config import Config
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.runtime.supervisor import Supervisor
from phoned.daemon.store.open import WorkerStores
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.device.adb import AdbServer
from phoned.sim.adb.stream_services import default_shell_factory
from phoned.sim.phone import Phone

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")
# ``phoned run --once --json`` from this checkout, as a child process's argv
RUN_ONCE = (sys.executable, "-m", "phoned.daemon.cli", "run", "--once", "--json")


def daemon_env(adb_port: int, state_dir: Path, **overrides: str) -> dict[str, str]:
    """The environment of a test's ``phoned run``; ``overrides`` are more ``PHONED_*``."""
    return dict(
        os.environ,
        ANDROID_ADB_SERVER_PORT=str(adb_port),
        PHONED_STATE_DIR=str(state_dir),
        PHONED_POLL_INTERVAL="0.2",
        PHONED_HEARTBEAT_INTERVAL="1",
        PHONED_SWEEP_INTERVAL="1",
        PHONED_LOG_FORMAT="json",
        **overrides,
    )


@contextlib.contextmanager
def fresh_daemon(env: dict[str, str], tmp: Path) -> Iterator[Daemon]:
    """A ``Daemon`` (not started) over ``tmp/state/queue.db``, its schema made before the
    first submit; its process is killed on exit."""
    made = Daemon(env, tmp / "state" / "queue.db", tmp / "phoned.log")
    (tmp / "state").mkdir()
    made.store().close()
    try:
        yield made
    finally:
        made.stop()


@contextlib.contextmanager
def supervised_here(cfg: Config, adb_port: int, name: str) -> Iterator[SqliteStore]:
    """What ``phoned run`` runs (a ``Supervisor`` named ``name``), on a thread of this
    process so a test can measure or hook inside it; yields a store on its queue, and stops
    the daemon at once on exit."""
    supervisor = Supervisor(
        cfg, AdbServer(port=adb_port), WorkerStores(cfg.queue_url, cfg.state_path), name
    )
    thread = threading.Thread(target=supervisor.run, name="daemon", daemon=True)
    thread.start()
    store = SqliteStore(str(cfg.state_path / "queue.db"))
    try:
        yield store
    finally:
        supervisor.stop(now=True)
        thread.join(timeout=30)
        store.close()


class BeforeLine:
    """The phone's shell, calling ``hook(line)`` before each command line it runs."""

    def __init__(self, phone: Phone, hook: Callable[[str], None]) -> None:
        self.shell = default_shell_factory(phone)
        self.hook = hook

    def run(self, line: str, *args: Any, **kwargs: Any) -> int:
        self.hook(line)
        result: int = self.shell.run(line, *args, **kwargs)
        return result

    @classmethod
    def factory(cls, hook: Callable[[str], None]) -> Callable[[Phone], BeforeLine]:
        """A ``shell_factory`` for ``sim_factory``: every shell of the phone calls ``hook``."""
        return lambda phone: cls(phone, hook)


class Hooks(list[Callable[[str], None]]):
    """Hooks a test adds while the phone runs; called in order with each command line."""

    def __call__(self, line: str) -> None:
        for hook in list(self):
            hook(line)


class QueueFile:
    """A SQLite queue file, opened for each call only (as another process would): submit
    as ``conversation``, read a task, approve one."""

    conversation = "conv-e2e"

    def __init__(self, queue: Path) -> None:
        self.queue = queue

    def store(self) -> SqliteStore:
        return SqliteStore(str(self.queue))

    def using(self, use: Callable[[SqliteStore], T]) -> T:
        """``use(store)`` with a store of the queue opened for this call only."""
        store = self.store()
        try:
            return use(store)
        finally:
            store.close()

    def submit(self, raw: dict[str, Any]) -> str:
        spec = parse_ingress({"conversation_id": self.conversation, **raw})
        return self.using(lambda store: store.submit(spec, time.time()).id)  # type: ignore[arg-type]

    def task(self, task_id: str) -> TaskRecord:
        return self.using(lambda store: store.get(task_id))

    def approve(self, task: TaskRecord) -> None:
        """Approve ``task``'s pending preview as its conversation, quoting its digest."""
        digest = task.approval_digest
        assert digest is not None
        self.using(
            lambda s: s.approve(task.id, task.conversation_id, task.revision, digest, time.time())
        )


class Daemon(QueueFile):
    """One ``phoned run`` process and the queue it serves."""

    def __init__(self, env: dict[str, str], queue: Path, log: Path) -> None:
        super().__init__(queue)
        self.env = env
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, *args: str, umask: int = -1) -> Daemon:
        """Launch ``phoned run ARGS`` (with ``umask``: under that umask)."""
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "phoned.daemon.cli", "run", *args],
                env=self.env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                umask=umask,
            )
        return self

    def phoned(self, *args: str) -> str:
        """``phoned ARGS --queue`` this daemon's queue, in a child process with its
        environment: the stdout; fails with the stderr unless it exits 0."""
        result = subprocess.run(
            [sys.executable, "-m", "phoned.daemon.cli", *args, "--queue", f"sqlite:///{self.queue}"],
            env=self.env, cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return result.stdout

    def mcp_stdio(self, conversation: str, wait: int) -> StdioServerParameters:
        """How an MCP client starts ``phoned mcp`` over this daemon's queue, speaking for
        ``conversation`` and waiting up to ``wait`` s for a task's outcome."""
        args = ["-m", "phoned.daemon.cli", "mcp", "--queue", f"sqlite:///{self.queue}",
                "--conversation", conversation, "--wait", str(wait)]  # fmt: skip
        return StdioServerParameters(command=sys.executable, args=args, env=self.env, cwd=str(REPO))

    async def mcp_session(
        self, stack: AsyncExitStack, conversation: str, wait: int, **options: Any
    ) -> ClientSession:
        """An MCP client session (``options``: ``ClientSession``'s, e.g. an elicitation
        callback) with ``phoned mcp`` over this daemon's queue, initialized; ``stack`` closes
        both."""
        read, write = await stack.enter_async_context(
            stdio_client(self.mcp_stdio(conversation, wait))
        )
        session = await stack.enter_async_context(ClientSession(read, write, **options))
        await session.initialize()
        return session

    def signal(self, signum: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 30) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def wait_for(
        self, task_id: str, done: Callable[[TaskRecord], bool], timeout: float = 30
    ) -> TaskRecord:
        deadline = time.monotonic() + timeout
        task = self.task(task_id)
        while not done(task):
            if time.monotonic() > deadline:
                raise AssertionError(f"task {task_id} stuck in {task}\n{self.stacks()}")
            time.sleep(0.1)
            task = self.task(task_id)
        return task

    def evidence(self, task_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The task's evidence documents (of ``kind`` when given), oldest first."""
        found = self.using(lambda store: store.evidence(task_id))
        return [d for d in found if kind is None or d["kind"] == kind]

    def state(self, task_id: str, *states: TaskState, timeout: float = 30) -> TaskRecord:
        return self.wait_for(task_id, lambda t: t.state in states, timeout)

    def serving(self, serial: str, timeout: float = 30) -> None:
        """Wait until the queue's presence rows say this daemon serves ``serial`` (what
        ``phoned status`` shows; ``phoned.daemon.store.presence``)."""
        deadline = time.monotonic() + timeout
        while not any(p.serial == serial for p in self.using(lambda s: s.presence())):
            if time.monotonic() > deadline:
                raise AssertionError(f"{serial} not served\n{self.stacks()}")
            time.sleep(0.1)

    def stacks(self) -> str:
        """The end of the log, with every thread's stack when the daemon still runs (it
        dumps them on SIGUSR1): what a timed-out wait reports."""
        before = self.log.read_text()
        if self.proc is None or self.proc.poll() is not None:
            return before[-3000:]
        return before[-3000:] + self.dump()

    def dump(self) -> str:
        """What the running daemon writes on SIGUSR1 (every thread's stack), alone."""
        assert self.proc is not None and self.proc.poll() is None
        start = len(self.log.read_text())
        self.proc.send_signal(signal.SIGUSR1)
        # the main thread writes the dump in one write(2) once it next runs Python, which
        # on a loaded machine can be seconds away: wait for it rather than for a fixed time
        deadline = time.monotonic() + 20
        while "Current thread" not in self.log.read_text()[start:]:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(0.2)  # and the rest of it, had write(2) taken it in two
        return self.log.read_text()[start:]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
