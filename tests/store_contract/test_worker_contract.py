"""The WorkerStore contract: what a daemon needs of its queue, over every store.

The same tests run over SQLite, PostgreSQL and HTTP (``HttpStore`` against ``phoned
serve``'s app over a real SQLite queue; see ``conftest.queue``). The planner's side of each
test (submit, approve, cancel, amend) goes through the queue's ``PlannerStore``: the SQL
store itself, or the plane's API. Times are the wall clock: the plane stamps claims and
heartbeats with its own.
"""

from __future__ import annotations

import threading
import time

import pytest
from contract_specs import spec
from served_plane import Queue

from phoned.daemon.lifecycle.errors import (
    LeaseLost,
    RevisionSuperseded,
    StaleAttempt,
    StopRequested,
    TargetNotObserved,
    TaskNotFound,
)
from phoned.daemon.lifecycle.records import (
    Failure,
    JournalOutcome,
    Preview,
    StopSummary,
    TaskRecord,
    Ticket,
)
from phoned.daemon.lifecycle.states import FailureReason, TaskState

OWNER = "daemon-1/SERIAL1"


def now() -> float:
    return time.time()


def _claimed(queue: Queue, method: str = "dnd.set", **kw: object) -> TaskRecord:
    queue.planner.submit(spec(method, **kw), now())
    claimed = queue.worker.claim(OWNER, "SERIAL1", now())
    assert claimed is not None
    return claimed


def _running(queue: Queue, method: str = "dnd.set", **kw: object) -> TaskRecord:
    return queue.worker.start(_claimed(queue, method, **kw).ticket, now())


def test_claim_leases_the_oldest_task_for_the_device_once(queue: Queue) -> None:
    first = queue.planner.submit(spec(), now())
    queue.planner.submit(spec(device="OTHER"), now())
    claimed = queue.worker.claim(OWNER, "SERIAL1", now(), lease_s=120)
    assert claimed is not None and claimed.id == first.id
    assert (claimed.state, claimed.attempt, claimed.lease_owner) == (
        TaskState.DISPATCHED,
        1,
        OWNER,
    )
    assert claimed.device == "SERIAL1" and claimed.lease_until is not None
    assert queue.worker.claim("daemon-2/SERIAL1", "SERIAL1", now()) is None
    assert queue.worker.get(first.id).lease_owner == OWNER


def test_claim_by_id_takes_only_that_task(queue: Queue) -> None:
    queue.planner.submit(spec(), now())
    second = queue.planner.submit(spec(), now())
    claimed = queue.worker.claim(OWNER, "SERIAL1", now(), task_id=second.id)
    assert claimed is not None and claimed.id == second.id


def test_heartbeat_renews_and_stale_tickets_are_refused(queue: Queue) -> None:
    task = _running(queue)
    renewed = queue.worker.heartbeat(task.ticket, now(), lease_s=300)
    assert renewed.lease_until is not None and task.lease_until is not None
    assert renewed.lease_until > task.lease_until
    with pytest.raises(LeaseLost):
        queue.worker.heartbeat(Ticket(task.id, "intruder/X", task.attempt, 1), now())
    with pytest.raises(StaleAttempt):
        queue.worker.complete(Ticket(task.id, OWNER, task.attempt - 1, 1), now())


def test_a_whole_attempt_journal_evidence_and_completion(queue: Queue) -> None:
    task = _running(queue, completion_target="dnd.priority")
    assert task.state is TaskState.RUNNING
    entry = queue.worker.journal_before(
        task.ticket, "op-1", "dnd.set", "zen_mode", "sha256:in", now()
    )
    assert entry.open and entry.task_id == task.id
    done = queue.worker.journal_after(
        "op-1", JournalOutcome.CONFIRMED_SUCCESS, "read back 1", now()
    )
    assert done.outcome is JournalOutcome.CONFIRMED_SUCCESS
    [kept] = queue.worker.journal(task.id)
    assert (kept.op_id, kept.outcome, kept.open) == (
        "op-1",
        JournalOutcome.CONFIRMED_SUCCESS,
        False,
    )
    ref = queue.worker.put_evidence(task.ticket, "outcome", {"status": "met"}, now())
    with pytest.raises(TargetNotObserved):
        queue.worker.complete(task.ticket, now(), observed_target="dnd.off")
    completed = queue.worker.complete(task.ticket, now(), "dnd.priority", (ref,))
    assert completed.state is TaskState.COMPLETED and completed.evidence_refs == (ref,)
    [doc] = queue.worker.evidence(task.id)
    assert (doc["ref"], doc["kind"], doc["attempt"], doc["body"]) == (
        ref,
        "outcome",
        1,
        {"status": "met"},
    )


def test_evidence_artifacts_stay_readable_to_the_store_s_readers(queue: Queue, tmp_path) -> None:
    task = _running(queue)
    folder = tmp_path / task.id  # the executor writes a task's artifacts in its own folder
    folder.mkdir()
    shot = folder / "snapshot_screenshot.png"
    shot.write_bytes(b"\x89PNG fake pixels")
    body = {"evidence": {"artifacts": {"snapshot_screenshot": str(shot)}, "commands": []}}
    queue.worker.put_evidence(task.ticket, "pause_snapshot", body, now())
    [doc] = queue.planner.evidence(task.id)
    named = doc["body"]["evidence"]["artifacts"]["snapshot_screenshot"]
    assert queue.artifact(named) == b"\x89PNG fake pixels"


def test_retryable_failure_requeues_then_the_last_attempt_fails(queue: Queue) -> None:
    task = _running(queue, max_attempts=2)
    again = queue.worker.fail(task.ticket, Failure(FailureReason.DEVICE_OFFLINE, "gone"), now())
    assert again.state is TaskState.QUEUED
    second = queue.worker.claim(OWNER, "SERIAL1", now())
    assert second is not None and second.attempt == 2
    second = queue.worker.start(second.ticket, now())
    final = queue.worker.fail(second.ticket, Failure(FailureReason.DEVICE_OFFLINE), now())
    assert final.state is TaskState.FAILED and final.attempt == 2
    with pytest.raises((LeaseLost, StaleAttempt)):
        queue.worker.complete(second.ticket, now())  # a report after the end is refused


def test_pause_watch_lists_and_resumes_the_same_attempt(queue: Queue) -> None:
    task = _running(queue)
    paused = queue.worker.pause(task.ticket, TaskState.WAITING, now(), waiting_for="unlock")
    assert (paused.state, paused.waiting_for, paused.lease_owner) == (
        TaskState.WAITING,
        "unlock",
        None,
    )
    listed = queue.worker.list_tasks(
        states=(TaskState.WAITING, TaskState.PERMISSION), device="SERIAL1"
    )
    assert [t.id for t in listed] == [task.id]
    assert queue.worker.resume(task.id, task.conversation_id, now()).state is TaskState.QUEUED
    again = queue.worker.claim(OWNER, "SERIAL1", now())
    assert again is not None and again.id == task.id and again.attempt == task.attempt


def test_approval_round_trip_admits_the_approved_effect(queue: Queue) -> None:
    task = _running(queue, "sms.send")
    preview = Preview(task.id, task.conversation_id, "sms.send", "+4915112345678", {}, "sha256:s")
    pending = queue.worker.request_approval(task.ticket, preview, now())
    assert (pending.state, pending.approval_status) == (TaskState.APPROVAL, "pending")
    assert pending.approval_digest == preview.digest
    queue.approver.approve(task.id, task.conversation_id, 1, preview.digest, now())
    resumed = queue.worker.claim(OWNER, "SERIAL1", now())
    assert resumed is not None and resumed.attempt == task.attempt
    resumed = queue.worker.start(resumed.ticket, now())
    entry = queue.worker.journal_before(
        resumed.ticket, "op-send", "sms.send", "+4915112345678", "sha256:in", now(),
        approval_digest=preview.digest,
    )  # fmt: skip
    assert entry.open


def test_a_stop_request_refuses_the_effect_and_the_worker_confirms_it(queue: Queue) -> None:
    task = _running(queue)
    queue.planner.cancel(task.id, task.conversation_id, now())
    with pytest.raises(StopRequested):
        queue.worker.journal_before(task.ticket, "op-1", "dnd.set", "zen_mode", "d", now())
    assert queue.worker.get(task.id).stop_requested
    summary = StopSummary(done=(), not_done=("dnd.set",))
    stopped = queue.worker.confirm_stopped(task.ticket, summary, now())
    assert stopped.state is TaskState.STOPPED
    assert stopped.stop_summary == summary


def test_an_amended_task_refuses_the_old_revision_s_effect(queue: Queue) -> None:
    task = _running(queue)
    queue.planner.amend(task.id, task.conversation_id, {"mode": "off"}, now())
    with pytest.raises(RevisionSuperseded):
        queue.worker.journal_before(task.ticket, "op-1", "dnd.set", "zen_mode", "d", now())
    current = queue.worker.get(task.id)
    assert current.revision == 2 and current.params == {"mode": "off"}


def test_recover_fails_what_this_daemon_held_and_requeues_it(queue: Queue) -> None:
    held = _running(queue)
    recovered = queue.worker.recover("daemon-1/", now())
    assert [t.id for t in recovered] == [held.id]
    [task] = recovered
    assert task.state is TaskState.QUEUED and task.lease_owner is None
    assert task.failure is not None and task.failure.reason is FailureReason.RUNTIME_RECOVERY
    assert queue.worker.recover("daemon-1/", now()) == []


def test_get_of_an_unknown_task_is_task_not_found(queue: Queue) -> None:
    with pytest.raises(TaskNotFound):
        queue.worker.get("no-such-task")


def test_register_device_is_accepted_and_changes_no_task(queue: Queue) -> None:
    task = queue.planner.submit(spec(device="SERIAL1"), now())
    read: list[str] = []

    def context() -> dict[str, object]:
        read.append("context")
        return {"model": {"value": "Pixel", "observed_at": now(), "source": "getprop"}}

    queue.worker.register_device("daemon-1", "SERIAL1", ["dnd.get", "dnd.set"], context)
    assert read == ([] if queue.kind != "http" else ["context"])  # read only when published
    assert queue.worker.get(task.id) == task


def test_wait_for_work_ends_on_stop_and_on_new_work(queue: Queue) -> None:
    stop = threading.Event()
    stop.set()
    queue.worker.wait_for_work(60, stop)  # returns: stop is set
    stop.clear()
    queue.worker.wait_for_work(0.1, stop)  # a first wait learns where the queue is
    waiter = threading.Thread(target=queue.worker.wait_for_work, args=(0.5, stop))
    waiter.start()
    queue.planner.submit(spec(), now())
    waiter.join(timeout=20)
    alive = waiter.is_alive()
    stop.set()
    waiter.join(timeout=5)
    assert not alive
    assert queue.worker.claim(OWNER, "SERIAL1", now()) is not None


def test_only_files_in_the_tasks_own_folder_become_artifacts(queue: Queue, tmp_path) -> None:
    task = _running(queue)
    stray = tmp_path / "passwd"  # a path outside the task's folder is text, never read
    stray.write_text("root:x:0:0")
    body = {"evidence": {"artifacts": {"x": str(stray)}, "commands": []}}
    queue.worker.put_evidence(task.ticket, "outcome", body, now())
    [doc] = queue.planner.evidence(task.id)
    named = doc["body"]["evidence"]["artifacts"]["x"]
    assert "root:x" not in str(doc)
    if named != str(stray):  # a store that names an upload must not have read the file
        assert b"root:x" not in (queue.artifact(named) or b"")
