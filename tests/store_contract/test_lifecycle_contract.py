"""Issue #13 store rules, on every backend: revisions kept with their checkpoint, a person's
pause and resume, the release gate of a completion, decision flags, rerun of an active task."""

from __future__ import annotations

import pytest
from contract_specs import spec

from phoned.daemon.lifecycle.errors import (
    IllegalTransition,
    InvalidTask,
    PauseRequested,
    RerunOfActiveTask,
    StopRequested,
    TargetNotObserved,
)
from phoned.daemon.lifecycle.records import Failure, JournalOutcome
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store.protocol import Store

T0 = 1_000.0


def _running(store: Store, method: str = "dnd.set", **kw: object):
    store.submit(spec(method, "conv-a", **kw), T0)
    claimed = store.claim("daemon-1/w0", "SERIAL1", T0 + 1)
    assert claimed is not None
    return store.start(claimed.ticket, T0 + 2)


def test_every_revision_is_kept_with_who_when_and_the_checkpoint(store: Store) -> None:
    task = _running(store)
    store.journal_before(task.ticket, "op-1", "dnd.set", "dnd.priority", "sha256:x", T0 + 3)
    store.journal_after("op-1", JournalOutcome.CONFIRMED_SUCCESS, "exit 0", T0 + 4)
    store.journal_before(task.ticket, "op-2", "dnd.set", "dnd.priority", "sha256:y", T0 + 5)
    store.amend(task.id, "conv-a", {"mode": "alarms"}, T0 + 6)
    store.amend(task.id, "conv-a", {"mode": "off"}, T0 + 7)
    first, second, third = store.revisions(task.id)
    assert [
        (r.revision, r.params, r.conversation_id, r.created_at) for r in (first, second, third)
    ] == [
        (1, {"mode": "priority"}, "conv-a", T0),
        (2, {"mode": "alarms"}, "conv-a", T0 + 6),
        (3, {"mode": "off"}, "conv-a", T0 + 7),
    ]
    point = first.checkpoint
    assert point is not None and third.checkpoint is None
    assert [e["op_id"] for e in point["done"]] == ["op-1"]
    assert [e["op_id"] for e in point["pending_ops"]] == ["op-2"]
    assert point["remaining"] == {"method": "dnd.set", "params": {"mode": "alarms"}}
    assert point["budget"] == {"retries_left": 1, "run_s_left": 600 - 4}
    assert second.checkpoint is not None and second.checkpoint["superseded_by"] == 3


def test_an_amend_and_a_timeout_are_decision_candidates(store: Store) -> None:
    task = _running(store)
    store.amend(task.id, "conv-a", {"mode": "alarms"}, T0 + 3)
    expired = store.expire(task.id, store.get(task.id).state_version,
                           Failure(FailureReason.TIMEOUT, "slow"), T0 + 4)  # fmt: skip
    assert expired.state is TaskState.QUEUED  # requeued: attempts remain
    flags = [(e.state, e.requires_decision) for e in store.events() if e.task_id == task.id]
    assert flags[-2:] == [("running", True), ("queued", True)]
    assert ("dispatched", False) in flags


def test_an_amend_answers_a_choice_and_requeues_the_paused_attempt(store: Store) -> None:
    task = _running(store, "sms.draft")
    store.pause(task.ticket, TaskState.WAITING, T0 + 3, waiting_for="choice:to")
    store.amend(task.id, "conv-a", {"to": "+15550100", "body": "hi"}, T0 + 4)
    answered = store.get(task.id)
    assert (answered.state, answered.revision, answered.waiting_for) == (TaskState.QUEUED, 2, None)
    reclaimed = store.claim("daemon-1/w0", "SERIAL1", T0 + 5)
    assert reclaimed is not None and reclaimed.attempt == task.attempt  # the same attempt goes on


def test_an_amend_of_a_task_waiting_for_a_condition_leaves_it_waiting(store: Store) -> None:
    task = _running(store)
    store.pause(task.ticket, TaskState.WAITING, T0 + 3, waiting_for="unlock")
    store.amend(task.id, "conv-a", {"mode": "alarms"}, T0 + 4)
    assert store.get(task.id).state is TaskState.WAITING


def test_completion_needs_an_observed_target_and_its_evidence(store: Store) -> None:
    task = _running(store)
    with pytest.raises(TargetNotObserved, match="no observed target"):
        store.complete(task.ticket, T0 + 3)
    with pytest.raises(TargetNotObserved, match="evidence"):
        store.complete(task.ticket, T0 + 3, observed_target="dnd.priority")
    store.cancel(task.id, "conv-a", T0 + 4)
    with pytest.raises(StopRequested):
        store.complete(task.ticket, T0 + 5, "dnd.priority", ("ev:1",))
    assert store.get(task.id).state is TaskState.RUNNING


def test_a_person_pauses_a_queued_task_at_once_and_a_running_one_at_the_gate(
    store: Store,
) -> None:
    queued = store.submit(spec(conversation="conv-b"), T0)
    held = store.user_pause(queued.id, "conv-b", T0 + 1)
    assert (held.state, held.waiting_for, held.pause_requested) == (TaskState.WAITING, "user", True)
    with pytest.raises(IllegalTransition, match="paused by a person"):
        store.resume(queued.id, "conv-b", T0 + 2)  # the pause watcher's verb never resumes it
    back = store.user_resume(queued.id, "conv-b", T0 + 3)
    assert (back.state, back.pause_requested, back.waiting_for) == (TaskState.QUEUED, False, None)
    claimed = store.claim("d/w0", "SERIAL1", T0 + 4)
    assert claimed is not None and claimed.attempt == 1
    running = store.start(claimed.ticket, T0 + 5)
    asked = store.user_pause(running.id, "conv-b", T0 + 6)
    assert (asked.state, asked.pause_requested) == (TaskState.RUNNING, True)
    with pytest.raises(PauseRequested):
        store.journal_before(running.ticket, "op-1", "dnd.set", "t", "sha256:x", T0 + 7)
    paused = store.pause(running.ticket, TaskState.WAITING, T0 + 8, waiting_for="user")
    resumed = store.user_resume(paused.id, "conv-b", T0 + 9)
    again = store.claim("d/w0", "SERIAL1", T0 + 10)
    assert resumed.state is TaskState.QUEUED and again is not None
    assert again.attempt == 1  # the paused attempt continues
    with pytest.raises(IllegalTransition, match="no pause"):
        store.user_resume(again.id, "conv-b", T0 + 11)


def test_rerun_of_an_active_task_is_refused_naming_cancel(store: Store) -> None:
    task = _running(store)
    with pytest.raises(RerunOfActiveTask, match=f"phoned cancel {task.id}"):
        store.rerun(task.id, T0 + 3)
    assert store.queue_status()["queued"] == 0


def test_correlation_ids_are_never_shared_across_tasks_or_conversations(store: Store) -> None:
    """#13 item 3: events are deduped by (workflow, step, state_version): two tasks must never
    carry the same workflow step, and a workflow id belongs to one conversation."""
    first = store.submit(spec(workflow_id="wf-1", step_id="s1"), T0)
    with pytest.raises(InvalidTask) as other_conversation:
        store.submit(spec(conversation="conv-z", workflow_id="wf-1", step_id="s2"), T0 + 1)
    assert other_conversation.value.errors[0]["field"] == "workflow_id"
    with pytest.raises(InvalidTask) as same_step:
        store.submit(spec(workflow_id="wf-1", step_id="s1"), T0 + 2)
    assert same_step.value.errors[0]["field"] == "step_id"
    assert first.id in same_step.value.errors[0]["message"]
    assert store.submit(spec(workflow_id="wf-1", step_id="s2"), T0 + 3).workflow_id == "wf-1"
    assert store.queue_status()["queued"] == 2
