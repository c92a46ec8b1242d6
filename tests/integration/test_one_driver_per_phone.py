"""One driver per phone (issue #24 point 1): two ``phoned run`` and a ``run --once`` on one
simulated phone and one queue, through the real adb server.

Two variants: ``one-host`` (both daemons and the ``--once`` share the state folder, as a
second unit started by mistake and a ``run --once`` beside the service do: the lock file
keeps them apart) and ``two-hosts`` (each has a state folder of its own and only the queue
is shared, as daemons on two hosts sharing a network phone: the queue's phone hold keeps
them apart). In both, every task runs exactly once (one attempt, completed, none failed
verification), the attempts on the phone never overlap, each approved ``sms.send`` is sent
once and recorded as sent, and the ``--once`` task ends as its exit code says.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned_process import REPO, Daemon, QueueFile, daemon_env

pytestmark = pytest.mark.integration

TO = "+15551234567"
TERMINAL = (TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED)
FAST = {"PHONED_LEASE_SECONDS": "5"}


class Queue(QueueFile):
    """The shared SQLite queue, opened per call (as another process would)."""

    conversation = "conv-one-driver"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        SqliteStore(str(path)).close()  # the schema, before any process opens it

    def running_intervals(self) -> list[tuple[float, float, str]]:
        """(start, end, task id) of every time a task was ``running``, from the outbox."""
        events = self.using(lambda s: s.events(after=0, limit=100_000))
        began: dict[str, float] = {}
        spans = []
        for e in events:
            if e.kind != "task" or e.task_id is None:
                continue
            if e.task_id in began:
                spans.append((began.pop(e.task_id), e.ts, e.task_id))
            if e.state == TaskState.RUNNING.value:
                began[e.task_id] = e.ts
        return sorted(spans)


def _settle(queue: Queue, ids: list[str], logs: list[Path], timeout: float = 100) -> None:
    """Approve pending ``sms.send`` tasks one at a time, as a person reading each card
    would (the newest preview first: it is what the screen shows), until every task in
    ``ids`` is terminal."""
    deadline = time.monotonic() + timeout
    approved: str | None = None
    while True:
        tasks = [queue.task(t) for t in ids]
        if all(t.state in TERMINAL for t in tasks):
            return
        if approved is None or queue.task(approved).state in TERMINAL:
            pending = [t for t in tasks if t.state is TaskState.APPROVAL]
            if pending:
                newest = max(pending, key=lambda t: t.updated_at)
                queue.approve(newest)
                approved = newest.id
        elif queue.task(approved).state is TaskState.APPROVAL:  # voided: a fresh preview
            queue.approve(queue.task(approved))
        if time.monotonic() > deadline:
            tails = "\n".join(p.read_text(errors="replace")[-2000:] for p in logs if p.exists())
            raise AssertionError(f"not settled: {[(t.id, t.state.value) for t in tasks]}\n{tails}")
        time.sleep(0.1)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("hosts", ["one-host", "two-hosts"])
def test_two_daemons_and_a_once_drive_one_phone_one_task_at_a_time(
    hosts: str, adb_server, sim_factory, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    queue = Queue(tmp_path / "queue.db")
    url = f"sqlite:///{queue.queue}"

    def env(name: str) -> dict[str, str]:
        state = tmp_path / ("state" if hosts == "one-host" else f"state-{name}")
        state.mkdir(exist_ok=True)
        return {**daemon_env(adb_server.port, state, PHONED_QUEUE=url), **FAST}

    daemons = [Daemon(env(n), queue.queue, tmp_path / f"{n}.log") for n in ("a", "b")]
    once: subprocess.Popen[str] | None = None
    try:
        for daemon in daemons:
            daemon.start("--serial", sim.serial)
        time.sleep(1.5)  # both up, one of them serving the phone
        modes = ["priority", "alarms"] * 6
        ids = [queue.submit({"method": "dnd.set", "params": {"mode": m}}) for m in modes]
        bodies = [f"one driver {n}" for n in range(3)]
        ids += [
            queue.submit({"method": "sms.send", "params": {"to": TO, "body": b}}) for b in bodies
        ]
        task_file = tmp_path / "once.json"
        task_file.write_text(json.dumps({
            "conversation_id": "conv-one-driver", "method": "dnd.set",
            "params": {"mode": "total_silence"},
        }))  # fmt: skip
        once = subprocess.Popen(
            [sys.executable, "-m", "phoned.daemon.cli", "run", "--once", "--json",
             "--serial", sim.serial, "--task", str(task_file)],
            env=env("once"), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        _settle(queue, ids, [d.log for d in daemons])
        out, err = once.communicate(timeout=60)
        for daemon in daemons:
            daemon.signal(signal.SIGTERM)
        assert [d.wait(timeout=30) for d in daemons] == [0, 0]
    finally:
        if once is not None and once.poll() is None:
            once.kill()
            once.communicate(timeout=10)
        for daemon in daemons:
            daemon.stop()

    logs = "\n".join(d.log.read_text(errors="replace")[-3000:] for d in daemons)
    assert once.returncode == 0, f"--once exit {once.returncode}: {err}\n{logs}"
    once_task = json.loads(out)["task"]
    assert once_task["state"] == "completed"
    ids.append(once_task["id"])

    tasks = [queue.task(t) for t in ids]
    summary = [(t.method, t.state.value, t.attempt, t.failure) for t in tasks]
    assert all(t.state is TaskState.COMPLETED for t in tasks), f"{summary}\n{logs}"
    assert all(t.attempt == 1 for t in tasks), summary  # each ran exactly once
    sent = sim.phone.sms.messages("sent")
    assert sorted(str(m["body"]) for m in sent) == sorted(bodies), sent  # one row per task
    spans = queue.running_intervals()
    overlaps = [(a, b) for a, b in itertools.pairwise(spans) if b[0] < a[1]]
    assert not overlaps, f"two attempts drove the phone at once: {overlaps}"


def _phoned(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", *args], env=env, cwd=REPO, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip


def _wait(cond: Any, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_waiting_daemon_names_the_holder_and_sends_the_phone_nothing(
    adb_server, sim_factory, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    queue = Queue(tmp_path / "queue.db")

    def env(name: str) -> dict[str, str]:
        (tmp_path / name).mkdir(exist_ok=True)
        url = f"sqlite:///{queue.queue}"
        return {**daemon_env(adb_server.port, tmp_path / name, PHONED_QUEUE=url), **FAST}

    first = Daemon(env("a"), queue.queue, tmp_path / "a.log").start("--serial", sim.serial)
    second = Daemon(env("b"), queue.queue, tmp_path / "b.log")
    try:
        warm = queue.submit({"method": "dnd.get", "params": {}, "device": sim.serial})
        _wait(lambda: queue.task(warm).state is TaskState.COMPLETED, "the first daemon")
        assert first.proc is not None
        holds = queue.using(lambda s: s.phone_holds())
        assert [(h.serial, h.pid) for h in holds] == [(sim.serial, first.proc.pid)]
        time.sleep(0.5)  # the first daemon is idle: it sends the phone nothing now
        sent_before = sim.phone.commands_started

        second.start("--serial", sim.serial)
        _wait(lambda: "is held by daemon" in second.log.read_text(), "the waiting line")
        once = _phoned(env("c"), "run", "--once", "--serial", sim.serial, "--wait", "1")
        time.sleep(1.0)
        assert sim.phone.commands_started == sent_before, "a waiting process drove the phone"
        line = next(json.loads(x)["msg"] for x in second.log.read_text().splitlines()
                    if "is held by" in x)  # fmt: skip
        assert f"pid {first.proc.pid}" in line and "`phoned run`" in line
        assert once.returncode == 3, once.stderr
        assert f"the phone is held by daemon {holds[0].holder}" in once.stderr

        status = json.loads(_phoned(env("c"), "status", "--json").stdout)
        assert [(h["serial"], h["pid"]) for h in status["holds"]] == [(sim.serial, first.proc.pid)]
        text = _phoned(env("c"), "status").stdout
        assert f"phone   {sim.serial} held by daemon {holds[0].holder}" in text
        doctor = json.loads(_phoned(env("a"), "doctor", "--json", "--serial", sim.serial).stdout)
        assert f"pid {first.proc.pid}" in doctor["devices"][0]["holder"]  # its lock file
        doctor = json.loads(_phoned(env("c"), "doctor", "--json", "--serial", sim.serial).stdout)
        assert "the queue's hold" in doctor["devices"][0]["holder"]  # another state folder

        first.signal(signal.SIGTERM)
        assert first.wait(timeout=30) == 0
        after = queue.submit({"method": "dnd.get", "params": {}, "device": sim.serial})
        _wait(lambda: queue.task(after).state is TaskState.COMPLETED, "the second daemon")
        assert second.proc is not None
        assert [h.pid for h in queue.using(lambda s: s.phone_holds())] == [second.proc.pid]
        second.signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0
        assert queue.using(lambda s: s.phone_holds()) == []  # released on the way out
    finally:
        first.stop()
        second.stop()
