"""Seed 004 release gate, items 2, 5, 6 and 7, on the queue side of the loop.

2: fields and repeated steps pass losslessly; 5: the same correlation ids come back;
6: cancel/block/fail arrive with a structured reason; 7: normal progress continues
without an upstream decision.
"""

from __future__ import annotations

from typing import Any

from phoned.daemon.lifecycle.contract import WorkflowSpec
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.lifecycle.records import Failure
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.planning.classify import classify_ingress
from phoned.daemon.store.sqlite_store import SqliteStore
from seed004_examples import SEED004_WORKFLOW_ENVELOPE

T0 = 4_000.0
SERIAL = "SIM34"

WORKFLOW: dict[str, Any] = {
    **SEED004_WORKFLOW_ENVELOPE,
    "cloud_workflow_id": "wf_voice_001",
    "cloud_plan_id": "plan_meeting",
    "conversation_id": "conv-voice",
    "subTasks": [
        {"taskMethod": "volume.set", "stream": "ring", "percent": 0,
         "cloud_step_id": "s1", "completionTarget": "volume.ring.0"},
        {"taskMethod": "dnd.set", "mode": "priority", "cloud_step_id": "s2",
         "completionTarget": "dnd.priority"},
        {"taskMethod": "volume.set", "stream": "ring", "percent": 0,
         "cloud_step_id": "s3", "completionTarget": "volume.ring.0"},
    ],
}  # fmt: skip


def _submit(store: SqliteStore) -> list[str]:
    spec = parse_ingress(WORKFLOW)
    assert isinstance(spec, WorkflowSpec)
    return [t.id for t in store.submit_workflow(spec, T0)]


def _finish_step(store: SqliteStore, at: float, expect: str) -> None:
    task = store.claim("d/w0", SERIAL, at)
    assert task is not None and task.step_id == expect
    store.complete(store.start(task.ticket, at).ticket, at, task.completion_target, ("ev:1",))


def test_item2_repeated_steps_and_fields_are_kept(store: SqliteStore) -> None:
    ids = _submit(store)
    steps = store.list_tasks(workflow_id="wf_voice_001")
    assert [s.id for s in steps] == ids
    assert [(s.method, s.step_id, s.step_index) for s in steps] == [
        ("volume.set", "s1", 0), ("dnd.set", "s2", 1), ("volume.set", "s3", 2),
    ]  # fmt: skip
    assert steps[0].params == steps[2].params == {"stream": "ring", "percent": 0}
    assert steps[1].spec["execution_mode"] == "queued_wait"
    assert steps[1].spec["force_task_manager"] is True
    verdict = classify_ingress(WORKFLOW, frozenset({"volume.set", "dnd.set"}))
    assert verdict.accepted and verdict.methods == ("volume.set", "dnd.set", "volume.set")
    assert store.queue_status()["queued"] == 3  # classify queued nothing more


def test_item5_correlation_ids_round_trip_in_events(store: SqliteStore) -> None:
    _submit(store)
    for n, step in enumerate(("s1", "s2", "s3")):
        _finish_step(store, T0 + 10 * (n + 1), step)
    events = store.events(limit=1000)
    task_events = [e for e in events if e.kind == "task"]
    assert {(e.workflow_id, e.plan_id, e.conversation_id) for e in task_events} == {
        ("wf_voice_001", "plan_meeting", "conv-voice")
    }
    assert {e.step_id for e in task_events} == {"s1", "s2", "s3"}
    [done] = [e for e in events if e.kind == "workflow"]
    assert (done.workflow_id, done.state, done.requires_decision) == (
        "wf_voice_001", "completed", False,
    )  # fmt: skip


def test_item6_failure_halts_with_structured_reason(store: SqliteStore) -> None:
    _submit(store)
    _finish_step(store, T0 + 1, "s1")
    second = store.claim("d/w0", SERIAL, T0 + 2)
    assert second is not None and second.step_id == "s2"
    second = store.start(second.ticket, T0 + 2)
    store.fail(second.ticket, Failure(FailureReason.VERIFICATION_FAILED, "zen_mode 0"), T0 + 3)
    third = store.list_tasks(workflow_id="wf_voice_001")[2]
    assert third.state is TaskState.STOPPED and third.failure is not None
    assert third.failure.reason is FailureReason.WORKFLOW_HALTED
    assert "step 1 (s2) ended failed (verification_failed)" in third.failure.message
    wf = store.workflow("wf_voice_001")
    assert (wf.state, wf.halted_reason) == ("halted", "verification_failed")
    [halt] = [e for e in store.events(limit=1000) if e.kind == "workflow"]
    assert halt.requires_decision and halt.reason == "verification_failed"
    assert store.claim("d/w0", SERIAL, T0 + 4) is None


def test_item6_cancel_is_reported_with_reason(store: SqliteStore) -> None:
    ids = _submit(store)
    store.cancel(ids[0], "conv-voice", T0 + 1)
    reasons = {e.task_id: e.reason for e in store.events(limit=1000) if e.state == "stopped"}
    assert reasons == {
        ids[0]: "stop_requested",
        ids[1]: "workflow_halted",
        ids[2]: "workflow_halted",
    }


def test_item7_normal_progress_needs_no_decision(store: SqliteStore) -> None:
    _submit(store)
    assert store.claim("d/w0", SERIAL, T0 + 1) is not None
    assert store.claim("d/w1", SERIAL, T0 + 1) is None  # step 2 waits for step 1's target
    store.recover("d/", T0 + 2)  # clean slate for the happy path below
    for n, step in enumerate(("s1", "s2", "s3")):
        _finish_step(store, T0 + 10 * (n + 1), step)
    assert not any(e.requires_decision for e in store.events(limit=1000))
