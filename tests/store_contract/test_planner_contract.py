"""The PlannerStore contract: what planners and the ``phoned`` verbs ask, over every store.

SQLite and PostgreSQL answer from the SQL store itself; HTTP through ``PlaneClient`` (the
plane's API, with a planner's and an approver's token). A task is moved along by the
queue's worker side (``conftest.queue``). The answers, and the named errors of refusals,
must be the same.
"""

from __future__ import annotations

import time

import pytest
from contract_specs import spec
from served_plane import Queue

from phoned.daemon.lifecycle.contract import validate_workflow
from phoned.daemon.lifecycle.errors import (
    ApprovalMismatch,
    ConversationMismatch,
    IdempotencyConflict,
    InvalidTask,
    RerunOfActiveTask,
    TaskNotFound,
    TaskTerminal,
)
from phoned.daemon.lifecycle.records import Preview
from phoned.daemon.lifecycle.states import FailureReason, TaskState

OWNER = "daemon-1/SERIAL1"


def now() -> float:
    return time.time()


def _completed(queue: Queue) -> str:
    task = queue.planner.submit(spec(device="SERIAL1"), now())
    claimed = queue.worker.claim(OWNER, "SERIAL1", now())
    assert claimed is not None and claimed.id == task.id
    running = queue.worker.start(claimed.ticket, now())
    ref = queue.worker.put_evidence(running.ticket, "outcome", {"status": "met"}, now())
    queue.worker.complete(running.ticket, now(), "dnd.priority", (ref,))
    return task.id


def test_submit_with_an_idempotency_key_returns_the_first_task(queue: Queue) -> None:
    first = queue.planner.submit(spec(idempotency_key="k1"), now())
    again = queue.planner.submit(spec(idempotency_key="k1"), now())
    assert again.id == first.id and again.params == {"mode": "priority"}
    with pytest.raises(IdempotencyConflict):  # the same key for different params is refused
        queue.planner.submit(spec(idempotency_key="k1", params={"mode": "off"}), now())
    assert queue.planner.get(first.id) == first
    assert queue.planner.queue_status()["queued"] == 1


def test_a_workflow_is_queued_in_order_and_readable(queue: Queue) -> None:
    raw = {
        "conversation_id": "conv-a",
        "workflow_name": "evening",
        "steps": [
            {"method": "dnd.set", "params": {"mode": "priority"}},
            {"method": "volume.set", "params": {"stream": "music", "percent": 10}},
        ],
    }
    steps = queue.planner.submit_workflow(validate_workflow(raw), now())
    assert [s.method for s in steps] == ["dnd.set", "volume.set"]
    workflow = queue.planner.workflow(steps[0].workflow_id or "")
    assert (workflow.name, workflow.step_count, workflow.state) == ("evening", 2, "active")
    listed = queue.planner.list_tasks(workflow_id=workflow.id)
    assert [t.id for t in listed] == [s.id for s in steps]


def test_list_tasks_filters_and_events_keep_order(queue: Queue) -> None:
    a = queue.planner.submit(spec(conversation="conv-a"), now())
    b = queue.planner.submit(spec(conversation="conv-b", device="S2"), now())
    assert [t.id for t in queue.planner.list_tasks(conversation_id="conv-b")] == [b.id]
    assert [t.id for t in queue.planner.list_tasks(device="S2")] == [b.id]
    assert [t.id for t in queue.planner.list_tasks(states=(TaskState.QUEUED,))] == [a.id, b.id]
    events = queue.planner.events(after=0, limit=100)
    assert [(e.task_id, e.state) for e in events] == [(a.id, "queued"), (b.id, "queued")]
    assert queue.planner.events(after=events[0].cursor, limit=100) == events[1:]


def test_rerun_and_successor_of_a_terminal_task(queue: Queue) -> None:
    done = _completed(queue)
    rerun = queue.planner.rerun(done, now())
    assert rerun.rerun_of == done and rerun.state is TaskState.QUEUED and rerun.attempt == 0
    successor = queue.planner.submit(spec(params={"mode": "off"}), now(), successor_of=done)
    assert successor.successor_of == done
    with pytest.raises(TaskTerminal, match=f"successor_of='{done}'"):
        queue.planner.amend(done, "conv-a", {"mode": "off"}, now())
    with pytest.raises(RerunOfActiveTask):
        queue.planner.rerun(rerun.id, now())  # not terminal yet: cancel first


def test_amend_and_cancel_check_the_conversation_and_the_params(queue: Queue) -> None:
    task = queue.planner.submit(spec(), now())
    with pytest.raises(ConversationMismatch):
        queue.planner.cancel(task.id, "conv-other", now())
    with pytest.raises(InvalidTask) as refused:
        queue.planner.amend(task.id, "conv-a", {"mode": "loud"}, now())
    assert refused.value.errors and refused.value.errors[0]["field"].startswith("params")
    amended = queue.planner.amend(task.id, "conv-a", {"mode": "off"}, now())
    assert (amended.revision, amended.params) == (2, {"mode": "off"})
    stopped = queue.planner.cancel(task.id, "conv-a", now())
    assert stopped.state is TaskState.STOPPED
    assert stopped.failure is not None and stopped.failure.reason is FailureReason.STOP_REQUESTED


def test_deny_needs_the_pending_preview_and_stops_the_task(queue: Queue) -> None:
    task = queue.planner.submit(spec("sms.send", device="SERIAL1"), now())
    claimed = queue.worker.claim(OWNER, "SERIAL1", now())
    assert claimed is not None
    running = queue.worker.start(claimed.ticket, now())
    preview = Preview(task.id, "conv-a", "sms.send", "+4915112345678", {}, "sha256:s")
    queue.worker.request_approval(running.ticket, preview, now())
    with pytest.raises(ApprovalMismatch):
        queue.approver.deny(task.id, "conv-a", 1, "sha256:other", now())
    denied = queue.approver.deny(task.id, "conv-a", 1, preview.digest, now())
    assert denied.state is TaskState.STOPPED and denied.approval_status == "denied"
    assert denied.failure is not None and denied.failure.reason is FailureReason.APPROVAL_DENIED


def test_unknown_ids_are_task_not_found(queue: Queue) -> None:
    with pytest.raises(TaskNotFound):
        queue.planner.get("no-such-task")
    with pytest.raises(TaskNotFound):
        queue.planner.workflow("no-such-workflow")
    with pytest.raises(TaskNotFound):
        queue.planner.cancel("no-such-task", "conv-a", now())
