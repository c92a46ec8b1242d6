"""The fault matrix: the real daemon killed, the phone dropped, the adb server restarted,
a second daemon started on the same phone.

Every row runs the real ``phoned run`` process (``phoned_process.Daemon``) against a
simulated phone through the private adb server, injects one fault at one point of an
attempt, lets the system recover by itself (a restart without the fault, the phone coming
back, the adb server back up with the daemon connecting its network phone again, the
second daemon waiting for the phone's hold) and then asserts, in this order:

1. safety: no task lost (it reached a terminal state or a resumable pause), and the
   non-idempotent effect never repeated: exactly one message in the sent box and exactly
   one ``input tap`` on the send button (``phone.log``);
2. correctness: the state SPEC §4/§9 asks for (for example a crash after the send tap but
   before ``journal_after`` is reconciled as happened: ``completed``, not re-sent).

A row whose state differs from the SPEC's in a way already known (``Case.gap``) is
reported ``xfail`` with the reason, after its safety checks passed; any other difference
fails. The table of every row is printed at the end of the module (and written to
``$PHONED_FAULT_MATRIX_OUT`` when set, which ``scripts/fault_matrix.py`` uses).

``PHONED_FAULT_MATRIX=full`` adds rows (a drop after every command of the attempt);
the default is the short matrix CI runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.runtime.faults import POINTS
from phoned_process import BeforeLine, Daemon, Hooks

pytestmark = pytest.mark.integration

TO = "+15551234567"
BODY = "fault matrix: on my way"
FULL = os.environ.get("PHONED_FAULT_MATRIX") == "full"
TERMINAL = (TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED)
PAUSED = (TaskState.WAITING, TaskState.APPROVAL, TaskState.PERMISSION)
SETTLED = TERMINAL + PAUSED
FAST_ENV = {
    "PHONED_POLL_INTERVAL": "0.2",
    "PHONED_SWEEP_INTERVAL": "1",
    "PHONED_LEASE_SECONDS": "5",
    "PHONED_HEARTBEAT_INTERVAL": "0.5",
    "PHONED_SETTLE_TIMEOUT": "5",
}


@dataclass(frozen=True)
class Case:
    """One row: a fault, where it strikes, on which task, and the state SPEC asks for."""

    fault: str  # crash | drop | adb-restart | two-drivers | locked-queue | full-disk
    at: str  # crash point, drop point (cmd+N / sms.after_send_tap) or phase
    task: str  # dnd.set | sms.send | sms.draft (locked phone: pauses waiting for unlock)
    expect: str = "completed"
    gap: str = ""  # a known divergence from SPEC: "<state>/<reason>: why" (xfail)

    @property
    def id(self) -> str:
        return f"{self.fault}:{self.at}:{self.task}"


@dataclass
class Row:
    """What one row observed, for the table."""

    case: Case
    state: str = "-"
    attempts: int = 0
    sent: int | None = None
    taps: int | None = None
    seconds: float = 0.0
    verdict: str = "FAIL"
    asks: str = "-"  # approval requests per task (the converging row: one each)


# --- the matrix -----------------------------------------------------------------------------

# every crash point of an attempt; ``while_paused`` needs a paused task: its own cases below
CRASH_POINTS = tuple(point for point in POINTS if point != "while_paused")


def _crash_case(point: str, task: str) -> Case:
    return Case("crash", point, task)


CASES: list[Any] = [
    *(_crash_case(point, task) for point in CRASH_POINTS for task in ("dnd.set", "sms.send")),
    Case("crash", "while_paused", "sms.draft"),
    Case("crash", "while_paused", "sms.send"),
    *(Case("drop", f"cmd+{n}", "dnd.set") for n in ((0, 1, 2, 3, 4) if FULL else (0, 2))),
    *(Case("drop", f"cmd+{n}", "sms.send") for n in ((0, 1, 2, 3, 4, 5) if FULL else (1,))),
    Case("drop", "sms.after_send_tap", "sms.send"),
    # the simulated phone is a network phone (adb connect 127.0.0.1:PORT): the restarted
    # server does not know it, the daemon connects it again
    Case("adb-restart", "network-phone:mid-transition", "bluetooth.set"),
    Case("adb-restart", "network-phone:after_send_tap", "sms.send"),
    Case("two-drivers", "second-run:send-in-flight", "sms.send"),
    Case("locked-queue", "after_apply:two-leases", "dnd.set"),
    Case("locked-queue", "after_send_tap:two-leases", "sms.send"),
    Case("full-disk", "after_send_tap:two-leases", "sms.send"),
]


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def matrix(request: pytest.FixtureRequest) -> Iterator[list[Row]]:
    """Collects every row; prints the table (and writes it to the out file) at the end."""
    rows: list[Row] = []
    yield rows
    table = render(rows)
    out = os.environ.get("PHONED_FAULT_MATRIX_OUT")
    if out:
        Path(out).write_text(table + "\n", encoding="utf-8")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if capture is not None and reporter is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            for line in table.splitlines():
                reporter.write_line(line)


def render(rows: list[Row]) -> str:
    """A Markdown table of the rows, in the order they ran."""
    head = (
        "| fault | at | task | expected | observed | attempts | sent | taps | asks | s | verdict |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        c = r.case
        lines.append(
            f"| {c.fault} | {c.at} | {c.task} | {c.expect} | {r.state} | {r.attempts} | "
            f"{_dash(r.sent)} | {_dash(r.taps)} | {r.asks} | {r.seconds:.1f} | {r.verdict} |"
        )
    return "\n".join(lines)


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


@pytest.fixture
def fast_daemon(daemon: Daemon, daemon_env: dict[str, str]) -> Daemon:
    daemon.env = {**daemon_env, **FAST_ENV}
    return daemon


# --- helpers --------------------------------------------------------------------------------


def start(daemon: Daemon, crash_at: str | None = None) -> Daemon:
    """Launch ``phoned run``; with ``crash_at`` it SIGKILLs itself at that crash point."""
    env = {k: v for k, v in daemon.env.items() if k != "PHONED_CRASH_AT"}
    if crash_at:
        env["PHONED_CRASH_AT"] = crash_at
    daemon.env = env
    return daemon.start()


def expect_crash(daemon: Daemon, point: str, timeout: float = 30) -> None:
    """The daemon killed itself with SIGKILL at ``point`` (proves the point was reached)."""
    code = daemon.wait(timeout=timeout)
    assert code == -signal.SIGKILL, f"exit {code}, not SIGKILL at {point}\n{_log(daemon)}"


def stop(daemon: Daemon) -> None:
    daemon.signal(signal.SIGTERM)
    assert daemon.wait(timeout=30) == 0


def _log(daemon: Daemon) -> str:
    return daemon.log.read_text(errors="replace")[-3000:]


def sent(sim: Any) -> int:
    return len(sim.phone.sms.messages("sent"))


def send_taps(sim: Any) -> int:
    return sum(1 for e in sim.phone.log.entries("click") if e.argv[:1] == ("tap",))


def command_count(sim: Any, *prefix: str) -> int:
    return sum(1 for a in sim.phone.log.argvs() if a[: len(prefix)] == prefix)


def submit(daemon: Daemon, task: str) -> str:
    params: dict[str, dict[str, Any]] = {
        "dnd.set": {"mode": "priority"},
        "bluetooth.set": {"enabled": True},
        "sms.send": {"to": TO, "body": BODY},
        "sms.draft": {"to": TO, "body": BODY},
    }
    return daemon.submit({"method": task, "params": params[task]})


def approve(daemon: Daemon, task_id: str) -> None:
    """Approve the pending preview through the store, as ``phoned approve`` would."""
    daemon.approve(daemon.state(task_id, TaskState.APPROVAL))


def to_approval(daemon: Daemon, crash_at: str | None = None) -> str:
    """Queue an ``sms.send`` and run the daemon until it asks for approval; it keeps running."""
    start(daemon, crash_at)
    task_id = submit(daemon, "sms.send")
    if crash_at:
        expect_crash(daemon, crash_at)
        start(daemon)
    daemon.state(task_id, TaskState.APPROVAL)
    return task_id


def settle(daemon: Daemon, task_id: str, timeout: float = 45) -> TaskRecord:
    return daemon.state(task_id, *SETTLED, timeout=timeout)


# --- fault runners: each returns the task's settled record ---------------------------------


def run_crash(case: Case, daemon: Daemon, sim: Any, adb: Any, hooks: Hooks) -> TaskRecord:
    point = case.at
    if case.task == "sms.send" and point == "while_paused":
        task_id = to_approval(daemon, crash_at=point)  # killed right after approval reported
        assert daemon.task(task_id).state is TaskState.APPROVAL
        approve(daemon, task_id)
        return daemon.state(task_id, *TERMINAL, timeout=45)
    if case.task == "sms.draft":  # locked: pauses waiting for unlock, killed there
        sim.phone.ui.sleep()
        start(daemon, point)
        task_id = submit(daemon, "sms.draft")
        expect_crash(daemon, point)
        assert daemon.task(task_id).state is TaskState.WAITING
        start(daemon)
        sim.phone.ui.unlock()
        return daemon.state(task_id, *TERMINAL, timeout=45)
    if case.task == "sms.send":
        task_id = to_approval(daemon)
        stop(daemon)
        approve(daemon, task_id)
    else:
        task_id = ""
    start(daemon, point)
    task_id = task_id or submit(daemon, case.task)
    expect_crash(daemon, point)
    start(daemon)
    return settle(daemon, task_id)


def _warm(daemon: Daemon) -> None:
    """One read-only task so the worker's identity and capability reads are done."""
    warm = daemon.submit({"method": "dnd.get", "params": {}})
    daemon.state(warm, TaskState.COMPLETED)


def run_drop(case: Case, daemon: Daemon, sim: Any, adb: Any, hooks: Hooks) -> TaskRecord:
    faults = sim.phone.faults
    if case.task == "sms.send":
        task_id = to_approval(daemon)
    else:
        task_id = ""
        _warm(start(daemon))
    time.sleep(0.3)  # the pause watcher's reads are done before the fault is armed
    if case.at.startswith("cmd+"):
        faults.drop_after_commands = sim.phone.commands_started + int(case.at[4:])
    else:
        faults.drop_at = case.at
    if task_id:
        approve(daemon, task_id)
    else:
        task_id = submit(daemon, case.task)
    return daemon.state(task_id, *TERMINAL, timeout=45)


def _restart_adb(adb: Any, sim: Any, daemon: Daemon) -> None:
    """``adb kill-server``, ``start-server``; then the daemon, not the test, connects the
    phone again (``phoned.device.network_phones``) and says so."""
    assert adb.adb("kill-server").returncode == 0
    assert adb.adb("start-server").returncode == 0
    said = f"adb server restarted: reconnected {sim.serial}"
    _wait(lambda: said in daemon.log.read_text(errors="replace"), "the daemon's reconnect", 30)
    assert adb.wait_state(sim.serial, {"device"}, timeout=20) == "device"


def _wait(cond: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def run_adb_restart(case: Case, daemon: Daemon, sim: Any, adb: Any, hooks: Hooks) -> TaskRecord:
    if case.task == "sms.send":
        task_id = to_approval(daemon)
        approve(daemon, task_id)
        _wait(lambda: send_taps(sim) == 1, "the send tap")
    else:
        sim.phone.bluetooth.TURN_ON_S = 2.0
        start(daemon)
        task_id = submit(daemon, case.task)
        _wait(lambda: command_count(sim, "cmd", "bluetooth_manager", "enable") == 1, "enable")
    _restart_adb(adb, sim, daemon)
    return daemon.state(task_id, *TERMINAL, timeout=45)


def run_two_drivers(case: Case, daemon: Daemon, sim: Any, adb: Any, hooks: Hooks) -> TaskRecord:
    """A second ``phoned run`` on the same queue, state folder and phone (a second unit
    started by mistake) comes up while the approved send runs: held off by the phone's
    hold (``phoned.daemon.runtime.phone_hold``), it waits and sends the phone nothing."""
    task_id = to_approval(daemon)
    second = Daemon(daemon.env, daemon.queue, daemon.log.with_name("second.log"))
    waiting = f"phone {sim.serial} is held by daemon"
    in_flight: list[bool] = []

    def mid_attempt(line: str) -> None:  # the phone's shell thread, before the line runs
        if in_flight or daemon.task(task_id).state is not TaskState.RUNNING:
            return
        # the approved attempt's first command (its resume check): the tap is still to come
        second.start()
        deadline = time.monotonic() + 7  # within the command's 10 s timeout
        while waiting not in second.log.read_text(errors="replace"):
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        in_flight.append(waiting in second.log.read_text(errors="replace"))

    hooks.append(mid_attempt)
    try:
        approve(daemon, task_id)
        task = daemon.state(task_id, *TERMINAL, timeout=45)
        assert in_flight == [True], f"the second daemon did not wait\n{_log(second)}"
        time.sleep(0.5)  # the first daemon back to idle: it sends the phone nothing now
        before = sim.phone.commands_started
        time.sleep(1.0)  # the second retries the hold every poll_interval (0.2 s) meanwhile
        assert sim.phone.commands_started == before, "the waiting daemon drove the phone"
        assert daemon.proc is not None
        holds = daemon.using(lambda store: store.phone_holds())
        assert [(h.serial, h.pid) for h in holds] == [(sim.serial, daemon.proc.pid)]
        second.signal(signal.SIGTERM)
        assert second.wait(timeout=30) == 0
        assert "hold taken" not in _log(second)  # it never held the phone
    finally:
        second.stop()
    return task


# --- a busy or full queue (issue #24): weather, not a fault of the task ---------------------


@contextlib.contextmanager
def _queue_locked(queue: Path) -> Iterator[None]:
    """Another process holds the queue's write lock (``BEGIN IMMEDIATE``) meanwhile."""
    conn = sqlite3.connect(queue, isolation_level=None, timeout=30)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("COMMIT")
        conn.close()


@contextlib.contextmanager
def _disk_full(folder: Path) -> Iterator[None]:
    """The disk under ``folder`` (a tmpfs mounted there) has no space left meanwhile."""
    filler = folder / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as out:
        while True:
            out.write(b"\0" * 65536)
            out.flush()
    try:
        yield
    finally:
        filler.unlink()


def _on_tmpfs(daemon: Daemon) -> Path:
    """Mount a small tmpfs over the daemon's state folder (root only) with a fresh queue."""
    state = daemon.queue.parent
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs",
                              str(state)], capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill: {mounted.stderr.strip()} (needs root)")
    daemon.store().close()
    return state


def run_weather(case: Case, daemon: Daemon, sim: Any, adb: Any, hooks: Hooks) -> TaskRecord:
    """Lock the queue (or fill its disk) right after the phone acted, for two leases."""
    mounted = _on_tmpfs(daemon) if case.fault == "full-disk" else None
    try:
        if case.task == "sms.send":
            task_id = to_approval(daemon)
            approve(daemon, task_id)
            _wait(lambda: send_taps(sim) == 1, "the send tap")
        else:
            start(daemon)
            task_id = submit(daemon, case.task)
            _wait(lambda: command_count(sim, "cmd", "notification", "set_dnd") >= 1, "set_dnd")
        weather = _disk_full(mounted) if mounted else _queue_locked(daemon.queue)
        with weather:
            time.sleep(2 * float(FAST_ENV["PHONED_LEASE_SECONDS"]))
            assert daemon.proc is not None and daemon.proc.poll() is None, "the daemon exited"
        done = daemon.state(task_id, *TERMINAL, timeout=45)
        assert done.attempt == 1, f"the attempt was blamed: {done.failure}"
        return done
    finally:
        if mounted:
            daemon.stop()
            subprocess.run(["umount", "-l", str(mounted)], capture_output=True)


RUNNERS: dict[str, Callable[[Case, Daemon, Any, Any, Hooks], TaskRecord]] = {
    "crash": run_crash,
    "drop": run_drop,
    "adb-restart": run_adb_restart,
    "two-drivers": run_two_drivers,
    "locked-queue": run_weather,
    "full-disk": run_weather,
}


# --- checks ---------------------------------------------------------------------------------


def check_state_right(case: Case, task: TaskRecord, sim: Any) -> None:
    """The end state matches SPEC, with the phone showing the task's target."""
    assert task.state.value == case.expect, f"{task.state.value}: {task.failure}"
    targets: dict[str, Callable[[], bool]] = {
        "dnd.set": lambda: sim.phone.notification.zen_mode == 1,
        "bluetooth.set": lambda: sim.phone.bluetooth.state == "ON",
        "sms.send": lambda: sent(sim) == 1,
        "sms.draft": lambda: sent(sim) == 0,
    }
    assert targets[case.task](), f"the phone does not show {case.task}'s target"


@pytest.mark.parametrize("case", CASES, ids=[getattr(c, "id", None) for c in CASES])
def test_fault_matrix_row(
    case: Case, matrix: list[Row], fast_daemon: Daemon, sim_factory, adb_server
) -> None:
    hooks = Hooks()  # the phone's shell calls them before each command line
    sim = sim_factory(sdk=34, shell_factory=BeforeLine.factory(hooks))
    sim.phone.bluetooth.TURN_ON_S = 0.3
    row = Row(case)
    matrix.append(row)
    began = time.monotonic()
    try:
        task = RUNNERS[case.fault](case, fast_daemon, sim, adb_server, hooks)
    except pytest.skip.Exception:
        row.verdict = "skipped"
        raise
    row.seconds = time.monotonic() - began
    reason = (
        f"/{task.failure.reason.value}" if task.failure and task.state.value == "failed" else ""
    )
    row.state, row.attempts = task.state.value + reason, task.attempt
    if case.task.startswith("sms."):
        row.sent, row.taps = sent(sim), send_taps(sim)
        assert row.sent == row.taps <= 1, "the SMS was sent twice (or a tap did not send)"
    assert task.state in SETTLED, "task lost"
    if case.gap and row.state == case.gap.split(":", 1)[0]:
        row.verdict = "GAP"
        pytest.xfail(case.gap)
    check_state_right(case, task, sim)
    row.verdict = "ok"


# --- approved tasks waiting on one phone converge (issue 34) ---------------------------------

CONVERGE_SENDS = (  # (conversation, recipient, text): three sends of two conversations
    ("conv-a", "+15550000001", "converge: first from A"),
    ("conv-b", "+15550000002", "converge: from B"),
    ("conv-a", "+15550000003", "converge: second from A"),
)


def approval_requests(daemon: Daemon, task_id: str) -> int:
    """How many times ``task_id`` asked a person: its outcomes that asked for approval."""
    outcomes = daemon.evidence(task_id, "outcome")
    return sum(1 for d in outcomes if d["body"].get("status") == "needs_approval")


def converge(daemon: Daemon, sim: Any) -> tuple[dict[str, int], list[TaskRecord]]:
    """N approval-gated sends of two conversations on one phone under two daemons, each
    card approved once by a person who approves what they are shown, once: the approval
    requests per task and how each task stands once nothing moves any more."""
    first = start(daemon)
    second = Daemon(daemon.env, daemon.queue, daemon.log.with_name("second.log")).start()
    ids: list[str] = []
    try:
        for conv, to, body in CONVERGE_SENDS:  # each drafts over the one before, and waits
            ids.append(daemon.submit({"conversation_id": conv, "method": "sms.send",
                                      "params": {"to": to, "body": body}}))  # fmt: skip
            daemon.state(ids[-1], TaskState.APPROVAL, timeout=45)
        # the person approves each card once: all but the last while the first daemon holds
        # the phone (it may carry the second one out or leave it, as its stop falls) ...
        for task_id in ids[:-1]:
            daemon.approve(daemon.task(task_id))
        # ... the first daemon stops after the first send: the second takes the phone over
        daemon.wait_for(ids[0], lambda t: t.state in (*TERMINAL, TaskState.APPROVAL), 45)
        first.signal(signal.SIGTERM)
        assert first.wait(timeout=30) == 0
        # the last card is approved once the first daemon is gone: left for the second, which
        # a slow machine cannot take from it (before, the first could finish all three)
        daemon.approve(daemon.task(ids[-1]))
        ended = [
            second.wait_for(i, lambda t: t.state in TERMINAL or (
                t.state is TaskState.APPROVAL and t.approval_status == "pending"), 60)
            for i in ids
        ]  # fmt: skip
        asks = {i: approval_requests(daemon, i) for i in ids}
    finally:
        second.stop()
    return asks, ended


def test_fault_matrix_approved_sends_on_one_phone_converge(
    matrix: list[Row], fast_daemon: Daemon, sim_factory: Any, adb_server: Any
) -> None:
    """Issue 34: three approval-gated ``sms.send`` of two conversations wait on one phone
    served by two daemons (the first stops after the first send, the second takes the
    phone's hold over); each card approved once: each message is in the sent box exactly
    once, each task completed, and no task asked a person twice."""
    sim = sim_factory(sdk=34)
    row = Row(Case("converge", "two-daemons:3-approved-sends", "sms.send", "completed x3"))
    matrix.append(row)
    began = time.monotonic()
    asks, ended = converge(fast_daemon, sim)
    row.seconds = time.monotonic() - began
    row.state = ",".join(t.state.value for t in ended)
    row.attempts = max(t.attempt for t in ended)
    row.sent, row.taps = sent(sim), send_taps(sim)
    row.asks = ",".join(str(asks[t.id]) for t in ended)
    got = sorted((m["address"], m["body"]) for m in sim.phone.sms.messages("sent"))
    assert got == sorted((to, body) for _, to, body in CONVERGE_SENDS), "each sent exactly once"
    assert row.taps == len(CONVERGE_SENDS)
    assert [t.state for t in ended] == [TaskState.COMPLETED] * len(CONVERGE_SENDS), ended
    assert set(asks.values()) == {1}, f"a card was shown twice: {asks}"
    # the second daemon took the phone over and carried out what was left
    assert "ended this attempt as completed" in _log_of(fast_daemon.log.with_name("second.log"))
    row.verdict = "ok"


def _log_of(path: Path) -> str:
    return path.read_text(errors="replace")
