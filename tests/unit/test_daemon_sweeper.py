"""The sweeper's timeouts and TTLs, with an injected clock (no sleeping)."""

from __future__ import annotations

import pytest

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.errors import GuardError
from phoned.daemon.lifecycle.records import Failure, Preview, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.store.sweeper import sweep

T0 = 10_000.0


def _claimed(store: SqliteStore, method: str = "dnd.get", lease_s: float = 3600) -> TaskRecord:
    params = {"to": "+4915112345678", "body": "hi"} if method == "sms.send" else {}
    store.submit(validate_task({"method": method, "params": params, "conversation_id": "c"}), T0)
    task = store.claim("d/w0", "S", T0, lease_s=lease_s)
    assert task is not None
    return task


def _reason(task: TaskRecord) -> FailureReason | None:
    return task.failure.reason if task.failure else None


def test_dispatch_timeout_after_five_minutes(store: SqliteStore) -> None:
    task = _claimed(store)
    assert sweep(store, T0 + 299) == []
    [swept] = sweep(store, T0 + 301)
    assert (swept.id, swept.state, _reason(swept)) == (
        task.id,
        TaskState.QUEUED,
        FailureReason.TIMEOUT,
    )


def test_lease_expiry_is_runtime_offline(store: SqliteStore) -> None:
    _claimed(store, lease_s=60)
    [swept] = sweep(store, T0 + 61)
    assert _reason(swept) is FailureReason.RUNTIME_OFFLINE and swept.state is TaskState.QUEUED


def test_run_timeout_ignores_time_spent_waiting(store: SqliteStore) -> None:
    task = store.start(_claimed(store).ticket, T0)
    store.pause(task.ticket, TaskState.WAITING, T0 + 500, waiting_for="unlock")
    assert sweep(store, T0 + 5000) == []  # waiting is not running
    store.resume(task.id, "c", T0 + 5000)
    again = store.claim("d/w0", "S", T0 + 5000, lease_s=3600)
    assert again is not None and again.attempt == 1
    again = store.start(again.ticket, T0 + 5000)
    assert sweep(store, T0 + 5099) == []  # 500 + 99 active seconds
    [swept] = sweep(store, T0 + 5101)  # 500 + 101 > 600
    assert _reason(swept) is FailureReason.TIMEOUT


def test_approval_ttl_expires_to_failed(store: SqliteStore) -> None:
    task = store.start(_claimed(store, "sms.send").ticket, T0)
    preview = Preview(task.id, "c", "sms.send", "+49", {"body": "hi"}, "sha256:0")
    store.request_approval(task.ticket, preview, T0 + 1)
    assert sweep(store, T0 + 900) == []
    [swept] = sweep(store, T0 + 902)
    assert (swept.state, _reason(swept)) == (TaskState.FAILED, FailureReason.APPROVAL_EXPIRED)
    assert swept.approval_status == "expired"


def test_permission_ttl_expires_to_permission_denied(store: SqliteStore) -> None:
    task = store.start(_claimed(store).ticket, T0)
    store.pause(task.ticket, TaskState.PERMISSION, T0 + 1, waiting_for="dnd_access")
    assert sweep(store, T0 + 600) == []
    [swept] = sweep(store, T0 + 602)
    assert (swept.state, _reason(swept)) == (TaskState.FAILED, FailureReason.PERMISSION_DENIED)


def test_second_timeout_exhausts_attempts(store: SqliteStore) -> None:
    _claimed(store, lease_s=60)
    sweep(store, T0 + 61)
    assert store.claim("d/w0", "S", T0 + 62, lease_s=60) is not None
    [swept] = sweep(store, T0 + 123)
    assert (swept.state, swept.attempt) == (TaskState.FAILED, 2)


def test_worker_report_wins_a_race_with_the_sweeper(store: SqliteStore) -> None:
    task = store.start(_claimed(store, lease_s=60).ticket, T0)
    [due] = store.due_for_sweep(T0 + 61)  # the sweeper read the task ...
    store.pause(task.ticket, TaskState.WAITING, T0 + 59, waiting_for="input")  # ... worker wrote
    with pytest.raises(GuardError):
        store.expire(due.id, due.state_version, Failure(FailureReason.RUNTIME_OFFLINE), T0 + 61)
    assert sweep(store, T0 + 61) == []
    assert store.get(task.id).state is TaskState.WAITING
