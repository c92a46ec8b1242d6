"""Issue #23 point 4 through the real ``phoned run --once`` process: a task that needs
approval can be finished.

* ``--sim --sim-port PORT``: the first run pauses for approval (exit 4) and leaves the
  simulated phone up at ``127.0.0.1:PORT``; ``phoned approve`` as printed; a second run on
  the same port adopts the phone, sends the message (exit 0) and stops the phone.
* At a terminal (a pseudo-terminal here): ``Approve? [y/N]`` after the preview; ``y``
  approves and the same process sends the message once (exit 0); ``n`` leaves the task in
  approval (exit 4); ``--no-prompt`` asks nothing.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned_process import REPO, daemon_env

from scripts.stack import free_port

pytestmark = pytest.mark.integration

TASK_FILE = str(REPO / "examples" / "sms.send.yaml")  # to +15551234567: "See you at 8"
BODY = "See you at 8"
PROMPT = "Approve? [y/N]"


class Run:
    """``phoned ARGS --queue Q`` processes over one SQLite queue and state folder."""

    def __init__(self, adb_port: int, tmp: Path) -> None:
        self.state = tmp / "state"
        self.queue_path = tmp / "queue.db"
        self.queue = f"sqlite:///{self.queue_path}"
        self.env = daemon_env(adb_port, self.state, PHONED_CONFIG="/dev/null")

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "phoned.daemon.cli", *args, "--queue", self.queue]

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args), stdin=subprocess.DEVNULL, capture_output=True, text=True,
            env=self.env, cwd=REPO, timeout=90, check=False,
        )  # fmt: skip

    def only_task(self) -> tuple[str, TaskState, list[str]]:
        """The queue's one task: id, state, and the journal's actions (``sms.send`` once)."""
        store = SqliteStore(str(self.queue_path))
        try:
            (task,) = store.list_tasks()
            actions = [entry.action for entry in store.journal(task.id)]
            return task.id, task.state, actions
        finally:
            store.close()


@pytest.fixture
def run(adb_server, tmp_path: Path) -> Run:
    return Run(adb_server.port, tmp_path)


def _approve_line(stdout: str) -> str:
    lines = stdout.splitlines()
    return lines[lines.index("  to approve:") + 1].strip()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextlib.contextmanager
def _kept_phone_cleanup(run: Run, adb_server, port: int) -> Iterator[Path]:
    """The pid file of the phone kept at ``port``; whatever a failed test left is killed."""
    pid_file = run.state / "sim" / f"{port}.pid"
    try:
        yield pid_file
    finally:
        if pid_file.exists():
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
        adb_server.adb("disconnect", f"127.0.0.1:{port}")


def test_a_paused_task_is_resumed_by_a_second_run_on_the_same_sim_port(
    run: Run, adb_server
) -> None:
    port = free_port()
    serial = f"127.0.0.1:{port}"
    assert not any(state == "device" for state in adb_server.devices().values())
    with _kept_phone_cleanup(run, adb_server, port) as pid_file:
        first = run("run", "--once", "--sim", "--sim-port", str(port), "--task", TASK_FILE)
        assert first.returncode == 4, first.stderr
        assert PROMPT not in first.stdout  # no terminal: nothing asked
        assert f"device {serial}" in first.stdout
        assert f"keeps running (pid {pid_file.read_text().strip()})" in first.stderr
        # the phone is up at its fixed address with the draft, and nothing was sent
        assert adb_server.state(serial) == "device"
        sent = adb_server.adb("-s", serial, "shell", "content", "query", "--uri",
                              "content://sms/sent")  # fmt: skip
        assert sent.stdout.strip() == "No result found."

        approve = shlex.split(_approve_line(first.stdout))
        assert approve[:2] == ["phoned", "approve"] and approve[-2:] == ["--queue", run.queue]
        approved = subprocess.run(
            [sys.executable, "-m", "phoned.daemon.cli", *approve[1:]], capture_output=True, text=True,
            env=run.env, cwd=REPO, timeout=60, check=False,
        )  # fmt: skip
        assert approved.returncode == 0, approved.stderr
        task_id, state, _ = run.only_task()
        assert state is TaskState.QUEUED

        second = run("run", "--once", "--sim", "--sim-port", str(port))
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr
        assert f"task {task_id}  sms.send  completed" in second.stdout
        assert "kept by an earlier run" in second.stderr
        assert "resumes: continue" in second.stderr  # the draft it paused on, not a fresh one
        assert run.only_task() == (task_id, TaskState.COMPLETED, ["sms.draft", "sms.send"])
        # nothing unfinished is left on it: the phone is stopped and detached
        pid = int(pid_file.read_text()) if pid_file.exists() else None
        assert pid is None
        assert adb_server.wait_state(serial, {None}, timeout=10) is None


def test_sim_port_needs_sim(run: Run) -> None:
    refused = run("run", "--once", "--sim-port", "7411")
    assert refused.returncode == 2 and "--sim-port needs --sim" in refused.stderr


class Terminal:
    """One ``phoned`` process whose stdin and stdout are a pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str], stderr: Path) -> None:
        master, slave = pty.openpty()
        with stderr.open("w") as err:
            self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=err,
                                         env=env, cwd=REPO)  # fmt: skip
        os.close(slave)
        self.master = master
        self.stderr = stderr
        self.seen = ""

    def read_until(self, text: str, timeout: float = 60) -> bool:
        """Read the terminal until ``text`` shows (True) or the process ended (False)."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {text!r} within {timeout}s:\n{self.seen[-3000:]}")
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the process closed the terminal
                chunk = b""
            if not chunk:
                return False
            self.seen += chunk.decode(errors="replace").replace("\r\n", "\n")
        return True

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 90) -> int:
        """Read to the end of the output; the exit code."""
        self.read_until("\0never printed\0", timeout)
        code = self.proc.wait(timeout=30)
        os.close(self.master)
        return code


def _at_terminal(run: Run, tmp_path: Path, *args: str) -> Terminal:
    argv = run.argv("run", "--once", "--sim", "--task", TASK_FILE, *args)
    return Terminal(argv, run.env, tmp_path / "stderr.txt")


def _at_the_prompt(run: Run, sim_factory: Any, tmp_path: Path) -> tuple[Any, Terminal]:
    """A fresh simulated phone and ``run --once --sim`` at a terminal, once it asks."""
    sim = sim_factory()
    term = _at_terminal(run, tmp_path)
    assert term.read_until(PROMPT), term.seen + term.stderr.read_text()
    return sim, term


def test_at_a_terminal_yes_approves_and_the_same_run_sends_the_message_once(
    run: Run, sim_factory, tmp_path: Path
) -> None:
    sim, term = _at_the_prompt(run, sim_factory, tmp_path)
    asked = term.seen
    # the preview as `phoned show` presents it, before the question
    block = asked[asked.index("pending approval") :]
    assert "  effect      sms.send" in block and "  recipient   +15551234567" in block
    assert f"  text        {BODY!r}" in block
    approve = _approve_line(block)
    assert approve.startswith("phoned approve ") and "--digest sha256:" in approve
    assert sim.phone.sms.messages("sent") == []  # asked before anything was sent
    term.type("y\n")
    code = term.finish()
    assert code == 0, term.seen[-3000:] + term.stderr.read_text()
    task_id, state, actions = run.only_task()
    assert f"{task_id} queued revision 1" in term.seen  # what `phoned approve` prints
    assert state is TaskState.COMPLETED and actions == ["sms.draft", "sms.send"]
    assert f"task {task_id}  sms.send  completed" in term.seen
    assert [(m["address"], m["body"]) for m in sim.phone.sms.messages("sent")] == [
        ("+15551234567", BODY)
    ]
    assert term.seen.count(PROMPT) == 1


def test_at_a_terminal_no_leaves_the_task_in_approval(
    run: Run, sim_factory, tmp_path: Path
) -> None:
    sim, term = _at_the_prompt(run, sim_factory, tmp_path)
    term.type("n\n")
    assert term.finish() == 4, term.seen[-3000:] + term.stderr.read_text()
    task_id, state, actions = run.only_task()
    assert state is TaskState.APPROVAL and actions == ["sms.draft"]
    after = term.seen[term.seen.index(PROMPT) :]
    assert f"phoned approve {task_id} --revision 1 --digest sha256:" in after  # to run later
    assert sim.phone.sms.messages("sent") == []


def test_no_prompt_at_a_terminal_asks_nothing(run: Run, sim_factory, tmp_path: Path) -> None:
    sim_factory()
    term = _at_terminal(run, tmp_path, "--no-prompt")
    assert term.finish() == 4, term.seen[-3000:] + term.stderr.read_text()
    assert PROMPT not in term.seen and "  to approve:" in term.seen
    assert run.only_task()[1] is TaskState.APPROVAL
