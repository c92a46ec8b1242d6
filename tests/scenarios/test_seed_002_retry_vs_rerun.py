"""Seed 002: which failures retry automatically, the 2-attempt ceiling, schedule tasks,
and manual rerun as a new task with a fresh attempt count and session."""

from __future__ import annotations

import pytest

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.records import Failure, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.store.sweeper import sweep

T0 = 2_000.0


def _run(store: SqliteStore, source: str = "cloud", at: float = T0) -> TaskRecord:
    raw = {"method": "dnd.get", "conversation_id": "c", "source": source}
    store.submit(validate_task(raw), at)
    task = store.claim("d/w0", "S", at + 1)
    assert task is not None
    return store.start(task.ticket, at + 2)


@pytest.mark.parametrize(
    ("reason", "requeued"),
    [
        (FailureReason.RUNTIME_OFFLINE, True),
        (FailureReason.RUNTIME_RECOVERY, True),
        (FailureReason.TIMEOUT, True),
        (FailureReason.DEVICE_OFFLINE, True),
        (FailureReason.ACTION_ERROR, False),  # seed 002's agent_error: never retried
        (FailureReason.UNSUPPORTED, False),
        (FailureReason.OUTCOME_UNKNOWN, False),
    ],
)
def test_retry_classes(store: SqliteStore, reason: FailureReason, requeued: bool) -> None:
    task = _run(store)
    after = store.fail(task.ticket, Failure(reason), T0 + 3)
    assert (after.state is TaskState.QUEUED) is requeued


def test_at_most_two_attempts_then_final(store: SqliteStore) -> None:
    _run(store)
    sweep(store, T0 + 1 + 61)  # lease lost: runtime_offline, attempt 1 -> requeued
    second = store.claim("d/w0", "S", T0 + 100)
    assert second is not None and second.attempt == 2
    sweep(store, T0 + 100 + 61)
    final = store.get(second.id)
    assert (final.state, final.attempt) == (TaskState.FAILED, 2)
    assert store.claim("d/w0", "S", T0 + 500) is None


def test_schedule_tasks_never_auto_retry(store: SqliteStore) -> None:
    task = _run(store, source="schedule")
    [swept] = sweep(store, T0 + 1 + 61)
    assert swept.id == task.id and swept.state is TaskState.FAILED


def test_manual_rerun_is_a_new_task_with_attempt_one(store: SqliteStore) -> None:
    task = _run(store)
    store.fail(task.ticket, Failure(FailureReason.TIMEOUT), T0 + 3)
    retry = store.claim("d/w0", "S", T0 + 4)
    assert retry is not None and retry.attempt == 2  # auto retry: same task, same session
    store.fail(store.start(retry.ticket, T0 + 5).ticket, Failure(FailureReason.TIMEOUT), T0 + 6)
    rerun = store.rerun(task.id, T0 + 7)
    assert rerun.id != task.id and rerun.rerun_of == task.id  # fresh session = new task id
    claimed = store.claim("d/w0", "S", T0 + 8)
    assert claimed is not None and claimed.id == rerun.id and claimed.attempt == 1
    assert store.get(task.id).state is TaskState.FAILED  # the original stays as it ended
