"""The Store contract: every backend must pass these (see conftest.STORE_FACTORIES)."""

from __future__ import annotations

from typing import Any

import pytest
from contract_specs import spec
from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.contract import validate_task, validate_workflow
from phoned.daemon.lifecycle.errors import (
    ApprovalExpired,
    ApprovalMismatch,
    ConversationMismatch,
    IdempotencyConflict,
    IllegalTransition,
    InvalidTask,
    LeaseLost,
    RevisionSuperseded,
    StaleAttempt,
    StopRequested,
    TargetNotObserved,
    TaskNotFound,
    TaskTerminal,
    UnreconciledOutcome,
)
from phoned.daemon.lifecycle.records import Failure, JournalOutcome, Preview, StopSummary
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.store.sweeper import sweep
from pytest_mock import MockerFixture

T0 = 1_000.0


def _running(store: Store, method: str = "dnd.set", conversation: str = "conv-a", **kw: object):
    store.submit(spec(method, conversation, **kw), T0)
    claimed = store.claim("daemon-1/w0", "SERIAL1", T0 + 1)
    assert claimed is not None
    return store.start(claimed.ticket, T0 + 2)


def _preview(task_id: str, conversation: str = "conv-a", body: str = "hi") -> Preview:
    return Preview(task_id, conversation, "sms.send", "+4915112345678", {"body": body}, "sha256:s")


def test_submit_queues_with_version_one_and_announces_it(store: Store) -> None:
    task = store.submit(spec(), T0)
    assert (task.state, task.state_version, task.revision, task.attempt) == (
        TaskState.QUEUED,
        1,
        1,
        0,
    )
    [event] = store.events()
    assert (event.task_id, event.state, event.state_version, event.requires_decision) == (
        task.id,
        "queued",
        1,
        False,
    )


def test_idempotency_key_returns_the_first_task_per_conversation(store: Store) -> None:
    first = store.submit(spec(idempotency_key="k1"), T0)
    again = store.submit(spec(idempotency_key="k1"), T0 + 5)
    other_conv = store.submit(spec(conversation="conv-b", idempotency_key="k1"), T0 + 6)
    assert again.id == first.id and again.params == {"mode": "priority"}
    # the same key for a different task is a named conflict, not the first task (#13 item 9)
    with pytest.raises(IdempotencyConflict, match=r"k1.*params"):
        store.submit(spec(idempotency_key="k1", params={"mode": "off"}), T0 + 7)
    assert other_conv.id != first.id
    assert store.queue_status()["queued"] == 2


def test_claim_leases_to_one_owner_and_counts_the_attempt(store: Store) -> None:
    task = store.submit(spec(), T0)
    claimed = store.claim("d/w0", "S1", T0 + 1, lease_s=30)
    assert claimed is not None and claimed.id == task.id
    assert (claimed.state, claimed.attempt, claimed.lease_owner, claimed.lease_until) == (
        TaskState.DISPATCHED,
        1,
        "d/w0",
        T0 + 31,
    )
    assert claimed.device == "S1"
    assert store.claim("d/w1", "S1", T0 + 2) is None


def test_claim_honours_device_binding(store: Store) -> None:
    store.submit(spec(device="S2"), T0)
    assert store.claim("d/w0", "S1", T0 + 1) is None
    assert store.claim("d/w1", "S2", T0 + 1) is not None


def test_claim_any_device_takes_bound_and_unbound_tasks(store: Store) -> None:
    store.submit(spec(device="S2"), T0)
    store.submit(spec(), T0 + 1)
    assert store.claim("d/w0", None, T0 + 2) is not None
    assert store.claim("d/w0", None, T0 + 3) is not None


def test_a_workflow_step_waits_for_the_one_before_and_follows_its_phone(store: Store) -> None:
    """A device claim leases the first step, binds it and pins the rest of its workflow to
    that phone; the next step is claimable once the first completed, only on that phone.
    A claim for any phone never takes a step whose earlier step has not completed."""
    raw = {
        "conversation_id": "conv-a",
        "steps": [
            {"method": "dnd.set", "params": {"mode": "priority"}},
            {"method": "dnd.set", "params": {"mode": "off"}},
        ],
    }
    first, second = store.submit_workflow(validate_workflow(raw), T0)
    claimed = store.claim("d/w0", "S1", T0 + 1)
    assert claimed is not None and (claimed.id, claimed.device) == (first.id, "S1")
    assert store.get(second.id).device == "S1"
    assert store.claim("d/w1", None, T0 + 2) is None  # step 2 waits for step 1
    running = store.start(claimed.ticket, T0 + 3)
    store.complete(running.ticket, T0 + 4, "dnd.priority", evidence_refs=("ev:1",))
    assert store.claim("d/w2", "S2", T0 + 5) is None  # pinned to S1
    following = store.claim("d/w0", "S1", T0 + 6)
    assert following is not None and following.id == second.id


def test_heartbeat_renews_and_stale_reports_are_refused(store: Store) -> None:
    task = _running(store)
    renewed = store.heartbeat(task.ticket, T0 + 50, lease_s=60)
    assert renewed.lease_until == T0 + 110
    intruder = task.ticket.__class__(task.id, "other/w9", task.attempt, task.revision)
    with pytest.raises(LeaseLost):
        store.heartbeat(intruder, T0 + 51)
    stale = task.ticket.__class__(task.id, task.lease_owner or "", task.attempt - 1, 1)
    with pytest.raises(StaleAttempt):
        store.complete(stale, T0 + 52)
    with pytest.raises(LeaseLost):  # a lease past its time admits no new effect
        store.admit(task.ticket, T0 + 500)


def test_a_late_report_counts_until_the_sweeper_acted_on_the_lease(store: Store) -> None:
    """Issue #24: a heartbeat a busy or full queue kept out does not cost the attempt. Past
    its lease, an unswept task's report is still its worker's (nobody else could claim
    it); once the sweeper expired the lease, the same report is refused."""
    late = _running(store)
    done = store.complete(
        late.ticket, T0 + 500, "dnd.priority", evidence_refs=("ev:1",)
    )  # the lease ran out at T0 + 1 + 60
    assert done.state is TaskState.COMPLETED and done.attempt == 1
    swept = _running(store, conversation="conv-b")
    for task in sweep(store, T0 + 500):
        assert task.id == swept.id and task.state is TaskState.QUEUED  # retried
    with pytest.raises((LeaseLost, StaleAttempt)):
        store.complete(swept.ticket, T0 + 501)


def test_complete_needs_the_completion_target_observed(store: Store) -> None:
    task = _running(store, completion_target="dnd.priority")
    with pytest.raises(TargetNotObserved):
        store.complete(task.ticket, T0 + 3, observed_target="dnd.off")
    done = store.complete(task.ticket, T0 + 3, "dnd.priority", evidence_refs=("ev:1",))
    assert done.state is TaskState.COMPLETED and done.evidence_refs == ("ev:1",)
    assert done.state_version == 4


def test_terminal_task_refuses_every_change_and_points_to_successor(store: Store) -> None:
    task = _running(store)
    store.complete(task.ticket, T0 + 3, "dnd.priority", ("ev:1",))
    with pytest.raises(TaskTerminal, match=f"successor_of='{task.id}'"):
        store.amend(task.id, "conv-a", {"mode": "off"}, T0 + 4)
    with pytest.raises(TaskTerminal):
        store.cancel(task.id, "conv-a", T0 + 4)
    with pytest.raises((LeaseLost, IllegalTransition, TaskTerminal)):
        store.fail(task.ticket, Failure(FailureReason.ACTION_ERROR), T0 + 4)
    successor = store.submit(spec(params={"mode": "off"}), T0 + 5, successor_of=task.id)
    assert successor.successor_of == task.id and successor.state is TaskState.QUEUED


def test_retryable_failure_requeues_until_max_attempts(store: Store) -> None:
    task = _running(store)
    again = store.fail(task.ticket, Failure(FailureReason.DEVICE_OFFLINE, "unplugged"), T0 + 3)
    assert again.state is TaskState.QUEUED and again.failure is not None
    second = store.claim("d/w0", "SERIAL1", T0 + 4)
    assert second is not None and second.attempt == 2
    second = store.start(second.ticket, T0 + 5)
    final = store.fail(second.ticket, Failure(FailureReason.DEVICE_OFFLINE), T0 + 6)
    assert final.state is TaskState.FAILED and final.attempt == 2
    assert final.failure is not None and final.failure.retryable


def test_final_failure_is_not_retried(store: Store) -> None:
    task = _running(store)
    ended = store.fail(task.ticket, Failure(FailureReason.VERIFICATION_FAILED), T0 + 3)
    assert ended.state is TaskState.FAILED and ended.attempt == 1
    assert store.events()[-1].requires_decision is True


def test_schedule_tasks_are_never_auto_retried(store: Store) -> None:
    task = _running(store, source="schedule")
    ended = store.fail(task.ticket, Failure(FailureReason.TIMEOUT), T0 + 3)
    assert ended.state is TaskState.FAILED


def test_cancel_queued_stops_at_once_with_summary(store: Store) -> None:
    task = store.submit(spec(), T0)
    stopped = store.cancel(task.id, "conv-a", T0 + 1)
    assert stopped.state is TaskState.STOPPED and stopped.stop_summary is not None
    assert stopped.stop_summary.not_done == ("dnd.set",)


def test_cancel_running_requests_stop_until_worker_confirms(store: Store) -> None:
    task = _running(store)
    requested = store.cancel(task.id, "conv-a", T0 + 3)
    assert requested.state is TaskState.RUNNING and requested.stop_requested
    with pytest.raises(StopRequested):
        store.admit(task.ticket, T0 + 4)
    done = StopSummary(done=("opened composer",), not_done=("send",))
    stopped = store.confirm_stopped(task.ticket, done, T0 + 5)
    assert stopped.state is TaskState.STOPPED and stopped.stop_summary == done
    assert stopped.failure is not None and stopped.failure.reason is FailureReason.STOP_REQUESTED


def test_cancel_from_another_conversation_is_refused(store: Store) -> None:
    task = store.submit(spec(), T0)
    with pytest.raises(ConversationMismatch):
        store.cancel(task.id, "conv-b", T0 + 1)


def test_amend_makes_a_revision_and_the_gate_refuses_the_old_one(store: Store) -> None:
    task = _running(store)
    amended = store.amend(task.id, "conv-a", {"mode": "alarms"}, T0 + 3)
    assert (amended.revision, amended.params, amended.state) == (
        2,
        {"mode": "alarms"},
        TaskState.RUNNING,
    )
    with pytest.raises(RevisionSuperseded):
        store.admit(task.ticket, T0 + 4)
    with pytest.raises(RevisionSuperseded):
        store.complete(task.ticket, T0 + 4)
    fresh = store.admit(amended.ticket, T0 + 4)
    assert fresh.revision == 2


def test_amend_validates_params(store: Store) -> None:
    task = store.submit(spec(), T0)
    with pytest.raises(InvalidTask) as err:
        store.amend(task.id, "conv-a", {"mode": "loud"}, T0 + 1)
    assert err.value.errors[0]["field"] == "params.mode"
    assert store.get(task.id).revision == 1


def test_approval_bound_to_task_revision_and_digest(store: Store) -> None:
    task = _running(store, "sms.send")
    preview = _preview(task.id)
    pending = store.request_approval(task.ticket, preview, T0 + 3)
    assert pending.state is TaskState.APPROVAL and pending.lease_owner is None
    with pytest.raises(ApprovalMismatch):
        store.approve(task.id, "conv-a", 1, _preview(task.id, body="other").digest, T0 + 4)
    with pytest.raises(ApprovalMismatch):
        store.approve(task.id, "conv-a", 2, preview.digest, T0 + 4)
    with pytest.raises(ConversationMismatch):
        store.approve(task.id, "conv-b", 1, preview.digest, T0 + 4)
    approved = store.approve(task.id, "conv-a", 1, preview.digest, T0 + 4)
    assert approved.state is TaskState.QUEUED and approved.approval_status == "approved"
    resumed = store.claim("d/w0", "SERIAL1", T0 + 5)
    assert resumed is not None and resumed.attempt == 1  # same attempt continues
    running = store.start(resumed.ticket, T0 + 6)
    assert store.admit(running.ticket, T0 + 7, approval_digest=preview.digest).id == task.id
    with pytest.raises(ApprovalMismatch):
        store.admit(running.ticket, T0 + 7, approval_digest=_preview(task.id, body="x").digest)


def test_preview_of_another_task_cannot_be_requested(store: Store) -> None:
    a = _running(store, "sms.send")
    with pytest.raises(ApprovalMismatch):
        store.request_approval(a.ticket, _preview("some-other-task"), T0 + 3)
    with pytest.raises(ConversationMismatch):
        store.request_approval(a.ticket, _preview(a.id, conversation="conv-b"), T0 + 3)


def test_deny_stops_and_is_never_reused(store: Store) -> None:
    task = _running(store, "sms.send")
    preview = _preview(task.id)
    store.request_approval(task.ticket, preview, T0 + 3)
    denied = store.deny(task.id, "conv-a", 1, preview.digest, T0 + 4)
    assert denied.state is TaskState.STOPPED
    assert denied.failure is not None and denied.failure.reason is FailureReason.APPROVAL_DENIED
    with pytest.raises(ApprovalMismatch, match="never reused"):
        store.approve(task.id, "conv-a", 1, preview.digest, T0 + 5)


def test_approval_after_ttl_is_refused(store: Store) -> None:
    task = _running(store, "sms.send")
    preview = _preview(task.id)
    store.request_approval(task.ticket, preview, T0 + 3)
    with pytest.raises(ApprovalExpired):
        store.approve(task.id, "conv-a", 1, preview.digest, T0 + 3 + 901)


def test_amend_during_approval_voids_it_and_replans(store: Store) -> None:
    task = _running(store, "sms.send")
    preview = _preview(task.id)
    store.request_approval(task.ticket, preview, T0 + 3)
    amended = store.amend(task.id, "conv-a", {"to": "+4915100000000", "body": "new"}, T0 + 4)
    assert amended.state is TaskState.QUEUED and amended.revision == 2
    with pytest.raises(ApprovalMismatch):
        store.approve(task.id, "conv-a", 1, preview.digest, T0 + 5)


def test_pause_releases_the_device_and_resume_requeues(store: Store) -> None:
    task = _running(store)
    waiting = store.pause(task.ticket, TaskState.WAITING, T0 + 3, waiting_for="unlock")
    assert waiting.waiting_for == "unlock" and waiting.lease_owner is None
    other = store.submit(spec(conversation="conv-b"), T0 + 4)
    claimed = store.claim("d/w0", "SERIAL1", T0 + 5)
    assert claimed is not None and claimed.id == other.id  # waiting does not block
    with pytest.raises(ConversationMismatch):
        store.resume(task.id, "conv-b", T0 + 6)
    assert store.resume(task.id, "conv-a", T0 + 6).state is TaskState.QUEUED


def test_journal_before_is_the_admission_gate(store: Store) -> None:
    task = _running(store, "sms.send")
    entry = store.journal_before(task.ticket, "op-1", "sms.send", "+49151", "sha256:x", T0 + 3)
    assert entry.outcome is None and entry.revision == 1
    with pytest.raises(UnreconciledOutcome):
        store.journal_before(task.ticket, "op-2", "sms.send", "+49151", "sha256:x", T0 + 4)
    with pytest.raises(UnreconciledOutcome):
        store.complete(task.ticket, T0 + 4)
    store.journal_after("op-1", JournalOutcome.CONFIRMED_SUCCESS, "in sent box", T0 + 5)
    assert store.unknown_entries(task.id) == []
    with pytest.raises(IllegalTransition):
        store.journal_after("op-1", JournalOutcome.UNKNOWN, "late", T0 + 6)
    assert store.complete(task.ticket, T0 + 7, "sms.sent", ("ev:1",)).state is TaskState.COMPLETED


def test_events_are_read_by_cursor_with_unique_keys(store: Store) -> None:
    task = _running(store)
    store.complete(task.ticket, T0 + 3, "dnd.priority", ("ev:1",))
    first = store.events(after=0, limit=2)
    rest = store.events(after=first[-1].cursor)
    keys = [e.key for e in first + rest]
    assert keys == [(task.id, v) for v in (1, 2, 3, 4)]
    assert len(set(keys)) == len(keys)


def test_queries_list_and_count(store: Store) -> None:
    a = store.submit(spec(), T0)
    store.submit(spec(conversation="conv-b", device="S9"), T0 + 1)
    assert [t.id for t in store.list_tasks(conversation_id="conv-a")] == [a.id]
    assert len(store.list_tasks(states=(TaskState.QUEUED,))) == 2
    assert store.queue_status("S9")["queued"] == 1
    with pytest.raises(TaskNotFound):
        store.get("nope")


def test_recover_fails_owned_tasks_as_runtime_recovery(store: Store) -> None:
    task = _running(store)
    [recovered] = store.recover("daemon-1/", T0 + 3)
    assert recovered.id == task.id and recovered.state is TaskState.QUEUED
    assert recovered.failure is not None
    assert recovered.failure.reason is FailureReason.RUNTIME_RECOVERY


def test_recover_leaves_a_run_once_lease_beside_the_daemon_alone(store: Store) -> None:
    spec = validate_task({"method": "dnd.get", "conversation_id": "c1"})
    once = store.submit_claimed(spec, "daemon-1/once/S1", "S1", T0)
    assert store.recover("daemon-1/", T0 + 1) == []  # the daemon's restart: not its lease
    assert store.get(once.id).lease_owner == "daemon-1/once/S1"
    [recovered] = store.recover("daemon-1/once/", T0 + 2)  # the next run --once's
    assert recovered.id == once.id and recovered.state is TaskState.QUEUED


def test_rerun_is_a_new_task_with_fresh_attempts(store: Store) -> None:
    task = _running(store, max_attempts=1)
    store.fail(task.ticket, Failure(FailureReason.TIMEOUT), T0 + 3)
    rerun = store.rerun(task.id, T0 + 4)
    assert rerun.id != task.id and rerun.rerun_of == task.id
    assert (rerun.attempt, rerun.state) == (0, TaskState.QUEUED)
    claimed = store.claim("d/w0", None, T0 + 5)
    assert claimed is not None and claimed.attempt == 1


def test_evidence_documents_are_kept_per_attempt_in_order(store: Store) -> None:
    task = _running(store)
    first = store.put_evidence(task.ticket, "outcome", {"target": {"met": False}}, T0 + 3)
    second = store.put_evidence(task.ticket, "snapshot", {"digest": "abc", "ü": "✓"}, T0 + 4)
    assert first != second
    docs = store.evidence(task.id)
    assert [d["ref"] for d in docs] == [first, second]
    assert [d["kind"] for d in docs] == ["outcome", "snapshot"]
    assert docs[1]["body"] == {"digest": "abc", "ü": "✓"}
    assert docs[0]["attempt"] == task.attempt and docs[0]["revision"] == task.revision


def test_evidence_of_an_unknown_task_is_refused(store: Store) -> None:
    with pytest.raises(TaskNotFound):
        store.evidence("no-such-task")


def test_claim_by_id_takes_only_that_task(store: Store) -> None:
    older = store.submit(spec("dnd.get", "conv-a"), T0)
    newer = store.submit(spec("bluetooth.get", "conv-a"), T0 + 1)
    claimed = store.claim("daemon-1/w0", "SERIAL1", T0 + 2, task_id=newer.id)
    assert claimed is not None and claimed.id == newer.id
    assert store.get(older.id).state is TaskState.QUEUED
    assert store.claim("daemon-1/w0", "SERIAL1", T0 + 3, task_id=newer.id) is None


def test_wait_for_work_wakes_on_another_connections_submit(
    store: Store, second_store: Store
) -> None:
    import threading
    import time

    stop = threading.Event()
    woke: list[float] = []

    def waiter() -> None:
        started = time.monotonic()
        store.wait_for_work(10.0, stop)
        woke.append(time.monotonic() - started)

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.2)
    second_store.submit(spec("dnd.get", "conv-a"), T0)
    thread.join(timeout=5)
    stop.set()
    assert woke and woke[0] < 5.0  # far below the 10 s timeout


def test_wait_for_work_returns_at_the_timeout_or_on_stop(store: Store) -> None:
    import threading
    import time

    started = time.monotonic()
    store.wait_for_work(0.3, threading.Event())
    assert 0.25 <= time.monotonic() - started < 3.0
    stop = threading.Event()
    stop.set()
    started = time.monotonic()
    store.wait_for_work(10.0, stop)
    assert time.monotonic() - started < 1.0


def test_a_hand_over_leases_to_the_first_claim_that_takes_the_task(store: Store) -> None:
    """``phoned serve``'s hand-over: the submit, then the waiting claims in turn."""
    claims = (ops.Claim("d/other", "OTHER", T0 + 1), ops.Claim("d/w0", "SERIAL1", T0 + 1, 30))
    handed = store.apply(ops.HandOver(ops.Submit(spec(device="SERIAL1"), T0), claims))
    assert handed.task.state is TaskState.QUEUED  # the submit's answer: the task as queued
    assert handed.by == 1 and handed.taken is not None and handed.taken.id == handed.task.id
    task = store.get(handed.task.id)
    assert (task.state, task.lease_owner, task.lease_until) == (
        TaskState.DISPATCHED,
        "d/w0",
        T0 + 31,
    )
    assert [(e.state, e.state_version) for e in store.events()] == [
        ("queued", 1),
        ("dispatched", 2),
    ]


def test_a_hand_over_claim_leases_what_it_would_alone(store: Store) -> None:
    """A claim takes the oldest claimable task, not the one just submitted; with none
    that it may take, the submit alone is done."""
    older = store.submit(spec("dnd.get"), T0)
    claim = ops.Claim("d/w0", "SERIAL1", T0 + 2)
    handed = store.apply(ops.HandOver(ops.Submit(spec(), T0 + 1), (claim,)))
    assert handed.taken is not None and handed.taken.id == older.id
    assert store.get(handed.task.id).state is TaskState.QUEUED
    nothing = store.apply(ops.HandOver(ops.Submit(spec(device="S2"), T0 + 3), ()))
    assert (nothing.taken, nothing.by) == (None, None)
    assert store.get(nothing.task.id).state is TaskState.QUEUED


def test_a_hand_over_claim_that_fails_is_undone_alone(store: Store, mocker: MockerFixture) -> None:
    """The claim fails after its lease was written (SQLite: in the submit's transaction;
    PostgreSQL: in its own statement): the lease is undone, the submit stands and no
    later claim is tried."""
    if isinstance(store, SqliteStore):
        lease = store._lease

        def written_then_refused(row: Any, op: ops.Claim) -> Any:
            lease(row, op)
            raise IllegalTransition("refused after the write")

        mocker.patch.object(store, "_lease", side_effect=written_then_refused)
    else:
        mocker.patch.object(store, "_claim", side_effect=IllegalTransition("refused"))
    claims = (ops.Claim("d/w0", "SERIAL1", T0 + 1), ops.Claim("d/w1", "SERIAL1", T0 + 1))
    handed = store.apply(ops.HandOver(ops.Submit(spec(), T0), claims))
    assert (handed.taken, handed.by) == (None, None)
    task = store.get(handed.task.id)
    assert (task.state, task.attempt, task.lease_owner) == (TaskState.QUEUED, 0, None)
    assert [e.state for e in store.events()] == ["queued"]
