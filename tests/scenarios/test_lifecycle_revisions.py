"""Issue #13, seed 003 revisions: an amend after the effect was admitted, revisions kept with
their checkpoint, the decision flag of an amend, a user pause at the safe point.

Every test drives the real ``phoned run`` process serving a simulated phone through the real
adb server; the amendment or pause arrives from the phone's shell hook at a named command,
so it lands at a known point of the attempt. The assertions read the queue and the phone.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from phoned.daemon.lifecycle.records import JournalOutcome, TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.sim.server import Simulator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from phoned_process import BeforeLine, Daemon, daemon_env, fresh_daemon

pytestmark = pytest.mark.integration

TERMINAL = (TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED)
CONV = "conv-e2e"


@pytest.fixture
def daemon(adb_server, tmp_path: Path) -> Iterator[Daemon]:
    env = daemon_env(adb_server.port, tmp_path / "state", PHONED_SETTLE_TIMEOUT="3")
    with fresh_daemon(env, tmp_path) as made:
        yield made


def _phone(sim_factory, hook: Callable[[str], None]) -> Simulator:
    sim: Simulator = sim_factory(sdk=34, shell_factory=BeforeLine.factory(hook))
    return sim


def _dnd_sets(sim: Simulator) -> list[tuple[str, ...]]:
    return [a for a in sim.phone.log.argvs() if a[:3] == ("cmd", "notification", "set_dnd")]


def test_an_amend_after_the_effect_was_admitted_replans_in_the_same_attempt(
    daemon: Daemon, sim_factory
) -> None:
    """#13 item 1: the old revision's late result is rejected and the current revision runs
    at once, in the same attempt, with evidence of both (not a stranded ``running`` task and
    a ``runtime_offline`` retry when the lease runs out)."""
    amended: list[TaskRecord] = []
    task_ids: list[str] = []

    def amend_while_the_effect_runs(line: str) -> None:  # revision 1's effect was admitted
        if "set_dnd priority" in line and not amended:
            amended.append(
                daemon.using(lambda s: s.amend(task_ids[0], CONV, {"mode": "alarms"}, time.time()))
            )

    sim = _phone(sim_factory, amend_while_the_effect_runs)
    daemon.start()
    task_ids.append(daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}}))
    done = daemon.state(task_ids[0], *TERMINAL, timeout=20)  # far below the 60 s lease
    assert amended and amended[0].revision == 2
    assert (done.state, done.revision, done.attempt) == (TaskState.COMPLETED, 2, 1)
    assert done.failure is None and done.observed_target == "dnd.alarms"
    assert sim.phone.notification.zen_mode == 3
    assert _dnd_sets(sim) == [
        ("cmd", "notification", "set_dnd", "priority"),
        ("cmd", "notification", "set_dnd", "alarms"),
    ]
    journal = daemon.using(lambda s: s.journal(done.id))
    assert [(e.action, e.revision, e.attempt, e.outcome) for e in journal] == [
        ("dnd.set", 1, 1, JournalOutcome.CONFIRMED_SUCCESS),
        ("dnd.set", 2, 1, JournalOutcome.CONFIRMED_SUCCESS),
    ]
    evidence = daemon.evidence(done.id)
    assert [(d["revision"], d["kind"]) for d in evidence] == [
        (1, "outcome"),
        (1, "replan"),
        (2, "outcome"),
    ]
    assert evidence[0]["body"]["status"] == "met"  # revision 1's result, kept, not accepted
    assert evidence[1]["body"]["rejected_outcome"] == evidence[0]["ref"]
    # seed 003 step 5: the checkpoint of revision 1, kept with it, names the pending effect
    revisions = daemon.using(lambda s: s.revisions(done.id))
    assert [(r.revision, r.params, r.conversation_id) for r in revisions] == [
        (1, {"mode": "priority"}, CONV),
        (2, {"mode": "alarms"}, CONV),
    ]
    checkpoint = revisions[0].checkpoint
    assert checkpoint is not None and revisions[1].checkpoint is None
    assert [op["op_id"] for op in checkpoint["pending_ops"]] == [journal[0].op_id]
    assert checkpoint["remaining"] == {"method": "dnd.set", "params": {"mode": "alarms"}}
    assert checkpoint["budget"]["retries_left"] == 1
    # the amend is a decision candidate (seed 004 §2), plain progress is not
    events = daemon.using(lambda s: s.events(after=0, limit=1000))
    flags = {(e.state, e.revision): e.requires_decision for e in events if e.task_id == done.id}
    assert flags[("running", 2)] is True and flags[("completed", 2)] is False


def test_a_user_pause_holds_the_task_before_its_effect_and_resume_continues_it(
    daemon: Daemon, sim_factory
) -> None:
    """Seed 003 step 1: a person pauses a running task: no new effect after the safe point;
    the daemon's pause watcher never resumes it; the person's resume continues the attempt."""
    paused: list[TaskRecord] = []
    task_ids: list[str] = []

    def pause_while_it_reads(line: str) -> None:  # before the admission gate of the effect
        if "zen_mode" in line and task_ids and not paused:
            paused.append(daemon.using(lambda s: s.user_pause(task_ids[0], CONV, time.time())))

    sim = _phone(sim_factory, pause_while_it_reads)
    daemon.start()
    task_ids.append(daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}}))
    held = daemon.state(task_ids[0], TaskState.WAITING)
    assert paused and paused[0].pause_requested and held.waiting_for == "user"
    assert _dnd_sets(sim) == []  # the effect was refused at the gate
    time.sleep(2.5)  # the pause watcher checks every second: it never resumes a user hold
    assert daemon.task(held.id).state is TaskState.WAITING
    daemon.using(lambda s: s.user_resume(held.id, CONV, time.time()))
    done = daemon.state(held.id, *TERMINAL)
    assert (done.state, done.attempt, done.pause_requested) == (TaskState.COMPLETED, 1, False)
    assert _dnd_sets(sim) == [("cmd", "notification", "set_dnd", "priority")]
    kinds = [d["kind"] for d in daemon.evidence(done.id)]
    assert kinds[0] == "pause_snapshot" and "resume_check" in kinds


def test_an_automatic_timeout_requeue_is_a_decision_candidate(daemon: Daemon, sim_factory) -> None:
    """Seed 004 §2: TIMEOUT is a decision candidate even when the queue retries it itself."""
    from phoned.sim import scenarios

    sim: Simulator = sim_factory(sdk=34)
    scenarios.apply(sim.phone, "slow:700")  # every command takes 0.7 s; the run bound is 1 s
    daemon.start()
    task_id = daemon.submit(
        {"method": "dnd.set", "params": {"mode": "priority"}, "timeouts": {"run_s": 1}}
    )
    daemon.wait_for(task_id, lambda t: t.attempt == 2 or t.terminal, timeout=40)
    events = daemon.using(lambda s: s.events(after=0, limit=1000))
    requeued = [e for e in events if e.task_id == task_id and e.reason == "timeout"]
    assert requeued and requeued[0].state == "queued" and requeued[0].attempt == 1
    assert requeued[0].requires_decision is True
    started = [e for e in events if e.task_id == task_id and e.state == "running"]
    assert started and started[0].requires_decision is False  # plain progress
