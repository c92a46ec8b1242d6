"""Seed 003 acceptance: no repeated action without verification, superseded instructions
not accepted, explicit uncertainty when reconciliation is impossible.

Every test drives what production runs: the real ``phoned run`` process (its worker, the
executor's reconciliation and admission gate, the device actions, the reports) serving a
simulated phone through the real adb server; a fault strikes the phone at a named point
(the transport drops after the send tap, or at the effect's command; an amendment arrives
while revision 1 reads the phone). The assertions read the queue's journal and evidence
and the phone itself.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from phoned.daemon.lifecycle.errors import TaskTerminal
from phoned.daemon.lifecycle.records import JournalEntry, JournalOutcome, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.sim import scenarios
from phoned.sim.server import Simulator

# the real-daemon helper the integration tests use
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from phoned_process import BeforeLine, Daemon, daemon_env, fresh_daemon

pytestmark = pytest.mark.integration

TO, BODY = "+15551234567", "seed 003: on my way"
TERMINAL = (TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED)


@pytest.fixture
def daemon(adb_server, tmp_path: Path) -> Iterator[Daemon]:
    env = daemon_env(adb_server.port, tmp_path / "state", PHONED_SETTLE_TIMEOUT="3")
    with fresh_daemon(env, tmp_path) as made:
        yield made


def _phone(sim_factory, hook: Callable[[str], None] = lambda line: None) -> Simulator:
    sim: Simulator = sim_factory(sdk=34, shell_factory=BeforeLine.factory(hook))
    return sim


def _read(daemon: Daemon, task_id: str) -> tuple[list[JournalEntry], list[dict[str, Any]]]:
    """The task's journal and evidence documents."""
    return daemon.using(lambda store: (store.journal(task_id), store.evidence(task_id)))


def _approve(daemon: Daemon, task_id: str) -> None:
    daemon.approve(daemon.state(task_id, TaskState.APPROVAL))


def _amend(daemon: Daemon, task_id: str, params: dict[str, Any]) -> TaskRecord:
    return daemon.using(lambda store: store.amend(task_id, "conv-e2e", params, time.time()))


def _sent(sim: Simulator) -> int:
    return len(sim.phone.sms.messages("sent"))


def _taps(sim: Simulator) -> int:
    clicks = sim.phone.log.entries("click")
    return len(clicks) + sum(1 for a in sim.phone.log.argvs() if a[:2] == ("input", "tap"))


def _send_entry(journal: list[JournalEntry]) -> JournalEntry:
    (entry,) = [e for e in journal if e.action == "sms.send"]
    return entry


def _send_cut_after_the_tap(daemon: Daemon, sim: Simulator) -> TaskRecord:
    """An approved ``sms.send`` whose transport drops right after the send tap: attempt 1
    cannot tell whether the message left (entry ``unknown``, ``device_offline``, requeued);
    attempt 2 runs once the phone is back. Returns the task's end."""
    daemon.start()
    task_id = daemon.submit({"method": "sms.send", "params": {"to": TO, "body": BODY}})
    daemon.state(task_id, TaskState.APPROVAL)
    sim.phone.faults.drop_at = "sms.after_send_tap"
    _approve(daemon, task_id)
    task = daemon.state(task_id, *TERMINAL, timeout=45)
    assert task.attempt == 2 and task.failure is not None
    _, evidence = _read(daemon, task_id)
    first = [d["body"]["status"] for d in evidence if d["attempt"] == 1 and d["kind"] == "outcome"]
    assert first == ["needs_approval", "unknown"]  # the preview, then the cut-off send
    return task


def test_no_repeated_action_without_verification(daemon: Daemon, sim_factory) -> None:
    sim = _phone(sim_factory)
    task = _send_cut_after_the_tap(daemon, sim)
    assert task.state is TaskState.COMPLETED and task.observed_target == "sms.sent"
    journal, evidence = _read(daemon, task.id)
    entry = _send_entry(journal)
    assert (entry.attempt, entry.outcome) == (1, JournalOutcome.CONFIRMED_SUCCESS)
    assert entry.detail == "reconciled: happened"
    (reconciled,) = [d for d in evidence if d["kind"] == "reconcile"]
    assert reconciled["attempt"] == 2 and reconciled["ref"] in task.evidence_refs
    assert reconciled["body"]["target"] == {"reconciling": "sms.send", "answer": "happened"}
    # completed from the read-back alone: never tapped or sent again
    assert (_taps(sim), _sent(sim)) == (1, 1)


def test_explicit_uncertainty_when_reconciliation_is_impossible(
    daemon: Daemon, sim_factory
) -> None:
    sim = _phone(sim_factory)
    scenarios.apply(sim.phone, "chat-send:stuck")  # no sent-box row, the bubble says Sending
    task = _send_cut_after_the_tap(daemon, sim)
    assert task.state is TaskState.FAILED and task.failure is not None
    assert task.failure.reason is FailureReason.OUTCOME_UNKNOWN
    assert not task.failure.retryable
    journal, evidence = _read(daemon, task.id)
    entry = _send_entry(journal)
    assert entry.outcome is JournalOutcome.UNKNOWN and entry.op_id in task.failure.message
    (reconciled,) = [d for d in evidence if d["kind"] == "reconcile"]
    assert reconciled["body"]["target"]["answer"] == "cannot_tell"
    time.sleep(1.0)  # a few poll intervals: the final failure is never claimed again
    assert daemon.task(task.id).attempt == 2
    assert (_taps(sim), _sent(sim)) == (1, 0)


def test_superseded_instructions_are_not_accepted(daemon: Daemon, sim_factory) -> None:
    amended: list[TaskRecord] = []

    def amend_at_the_first_read(line: str) -> None:  # while revision 1 reads the phone
        if "zen_mode" in line and task_ids and not amended:
            amended.append(_amend(daemon, task_ids[0], {"mode": "alarms"}))

    task_ids: list[str] = []
    sim = _phone(sim_factory, amend_at_the_first_read)
    daemon.start()
    task_ids.append(daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}}))
    done = daemon.state(task_ids[0], *TERMINAL)
    assert amended and amended[0].revision == 2
    assert (done.state, done.revision, done.attempt) == (TaskState.COMPLETED, 2, 1)
    assert done.observed_target == "dnd.alarms" and sim.phone.notification.zen_mode == 3
    # the gate refused revision 1's effect: only revision 2's ran, once
    sets = [a for a in sim.phone.log.argvs() if a[:3] == ("cmd", "notification", "set_dnd")]
    assert sets == [("cmd", "notification", "set_dnd", "alarms")]
    journal, _ = _read(daemon, done.id)
    assert [(e.action, e.revision, e.outcome) for e in journal] == [
        ("dnd.set", 2, JournalOutcome.CONFIRMED_SUCCESS)
    ]
    with pytest.raises(TaskTerminal, match="successor_of"):
        _amend(daemon, done.id, {"mode": "off"})


def test_a_transport_lost_during_an_effect_is_journaled_unknown_and_read_before_a_retry(
    daemon: Daemon, sim_factory
) -> None:
    dropped: list[str] = []

    def drop_at_the_effect(line: str) -> None:  # the effect's command drops instead of running
        if "set_dnd" in line and not dropped:
            dropped.append(line)
            sim.phone.faults.drop_after_commands = sim.phone.commands_started

    sim = _phone(sim_factory, drop_at_the_effect)
    daemon.start()
    task_id = daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}})
    done = daemon.state(task_id, *TERMINAL, timeout=45)
    assert (done.state, done.attempt) == (TaskState.COMPLETED, 2) and dropped
    assert done.failure is not None and done.failure.reason is FailureReason.DEVICE_OFFLINE
    journal, evidence = _read(daemon, task_id)
    # attempt 1's entry was left unknown by the lost transport; attempt 2 read zen_mode
    # (still off) before anything else and only then applied again
    assert [(e.attempt, e.outcome, e.detail) for e in journal] == [
        (1, JournalOutcome.CONFIRMED_FAILURE, "reconciled: did_not_happen"),
        (2, JournalOutcome.CONFIRMED_SUCCESS, "exit 0"),
    ]
    assert [(d["attempt"], d["kind"]) for d in evidence] == [
        (1, "outcome"),
        (2, "reconcile"),
        (2, "outcome"),
    ]
    assert evidence[0]["body"]["status"] == "unknown"
    sets = [a for a in sim.phone.log.argvs() if a[:3] == ("cmd", "notification", "set_dnd")]
    assert sets == [("cmd", "notification", "set_dnd", "priority")]  # the dropped one never ran
