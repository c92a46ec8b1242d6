"""Seed 003 acceptance: no repeated action without verification, superseded
instructions not accepted, explicit uncertainty when reconciliation is impossible."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.journal import Reconciler, Verdict, journaled, reconcile_task
from daemon.lifecycle.contract import validate_task
from daemon.lifecycle.errors import RevisionSuperseded, TaskTerminal, UnreconciledOutcome
from daemon.lifecycle.records import JournalEntry, Outcome, TaskRecord
from daemon.lifecycle.states import FailureReason, TaskState
from daemon.store.sqlite_store import SqliteStore
from daemon.sweeper import sweep

T0 = 3_000.0


class FixedReconciler:
    """A device read-back that always answers the same verdict, and records calls."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.asked: list[str] = []

    def reconcile(self, entry: JournalEntry) -> Verdict:
        self.asked.append(entry.op_id)
        return self.verdict


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(str(tmp_path / "q.db"))
    yield s
    s.close()


def _sending(store: SqliteStore) -> TaskRecord:
    raw = {"method": "sms.send", "params": {"to": "+4915112345678", "body": "hi"},
           "conversation_id": "c"}  # fmt: skip
    store.submit(validate_task(raw), T0)
    task = store.claim("d/w0", "S", T0, lease_s=60)
    assert task is not None
    return store.start(task.ticket, T0)


def _crash_mid_send(store: SqliteStore) -> TaskRecord:
    """The send was journaled, then the daemon died before reading back; sweep requeues."""
    task = _sending(store)
    store.journal_before(task.ticket, "op-send", "sms.send", "+4915112345678", "sha256:b", T0 + 1)
    sweep(store, T0 + 61)
    again = store.claim("d/w1", "S", T0 + 62, lease_s=60)
    assert again is not None and again.attempt == 2
    return store.start(again.ticket, T0 + 62)


def test_no_repeated_action_without_verification(store: SqliteStore) -> None:
    retry = _crash_mid_send(store)
    with pytest.raises(UnreconciledOutcome):
        store.journal_before(retry.ticket, "op-2", "sms.send", "+49151", "sha256:b", T0 + 63)
    reconciler = FixedReconciler(Verdict.HAPPENED)
    result = reconcile_task(store, retry.ticket, reconciler, T0 + 64)
    assert not result.blocked and reconciler.asked == ["op-send"]
    assert store.journal(retry.id)[0].outcome is Outcome.CONFIRMED_SUCCESS
    # the effect happened: the worker completes from the read-back, without sending again
    assert store.complete(retry.ticket, T0 + 65).state is TaskState.COMPLETED
    assert [e.op_id for e in store.journal(retry.id)] == ["op-send"]


def test_explicit_uncertainty_when_reconciliation_is_impossible(store: SqliteStore) -> None:
    retry = _crash_mid_send(store)
    check: Reconciler = FixedReconciler(Verdict.CANNOT_TELL)
    result = reconcile_task(store, retry.ticket, check, T0 + 64)
    assert result.blocked and result.task is not None
    assert result.task.state is TaskState.FAILED
    assert result.task.failure is not None
    assert result.task.failure.reason is FailureReason.OUTCOME_UNKNOWN
    assert not result.task.failure.retryable
    assert "op-send" in result.task.failure.message
    assert store.unknown_entries(retry.id)[0].outcome is Outcome.UNKNOWN
    assert store.claim("d/w0", "S", T0 + 999) is None  # never retried automatically


def test_superseded_instructions_are_not_accepted(store: SqliteStore) -> None:
    task = _sending(store)
    amended = store.amend(task.id, "c", {"to": "+4915112345678", "body": "changed"}, T0 + 1)
    with pytest.raises(RevisionSuperseded):
        store.journal_before(task.ticket, "op-old", "sms.send", "+49", "sha256:old", T0 + 2)
    with pytest.raises(RevisionSuperseded):
        store.complete(task.ticket, T0 + 2)  # a late result of revision 1
    entry = journaled(
        store, amended.ticket, "sms.send", "+4915112345678", amended.params,
        lambda: Outcome.CONFIRMED_SUCCESS, lambda: T0 + 3,
    )  # fmt: skip
    assert (entry.revision, entry.outcome) == (2, Outcome.CONFIRMED_SUCCESS)
    done = store.complete(amended.ticket, T0 + 4)
    with pytest.raises(TaskTerminal, match="successor_of"):
        store.amend(done.id, "c", {"to": "+4915112345678", "body": "again"}, T0 + 5)


def test_exception_during_effect_is_journaled_unknown(store: SqliteStore) -> None:
    task = _sending(store)

    def boom() -> Outcome:
        raise ConnectionError("adb transport closed")

    with pytest.raises(ConnectionError):
        journaled(store, task.ticket, "sms.send", "+49", {"b": 1}, boom, lambda: T0 + 1)
    [entry] = store.unknown_entries(task.id)
    assert entry.outcome is Outcome.UNKNOWN and "adb transport closed" in entry.detail
