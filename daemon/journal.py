"""The action journal around external effects, and reconciliation of unknown outcomes.

Every external action is recorded before it runs (``Store.journal_before``, which is
also the admission gate) and after (``journal_after``). After a crash or disconnect,
open entries are reconciled by reading the device through a ``Reconciler`` the device
actions implement; if the device cannot tell, the task fails ``outcome_unknown`` and
is never retried automatically (seed 003 step 4).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from daemon.lifecycle.records import Failure, JournalEntry, Outcome, TaskRecord, Ticket, digest
from daemon.lifecycle.states import FailureReason
from daemon.store.protocol import Store


class Verdict(str, Enum):
    """What reading the device says about one journal entry."""

    HAPPENED = "happened"  # the effect is visible on the device
    DID_NOT_HAPPEN = "did_not_happen"  # the device shows the effect absent
    CANNOT_TELL = "cannot_tell"  # the device cannot show either way


class Reconciler(Protocol):
    """Implemented by device actions: decide an open entry by reading the device."""

    def reconcile(self, entry: JournalEntry) -> Verdict:
        """Read the device and say whether ``entry``'s effect happened."""
        ...


_OUTCOME = {
    Verdict.HAPPENED: Outcome.CONFIRMED_SUCCESS,
    Verdict.DID_NOT_HAPPEN: Outcome.CONFIRMED_FAILURE,
    Verdict.CANNOT_TELL: Outcome.UNKNOWN,
}


@dataclass(frozen=True)
class Reconciliation:
    """The result of reconciling one task's open entries."""

    entries: tuple[JournalEntry, ...]
    task: TaskRecord | None  # set when the task was failed outcome_unknown

    @property
    def blocked(self) -> bool:
        """True when some outcome stays unknown and the task may not go on."""
        return self.task is not None


def reconcile_task(
    store: Store, ticket: Ticket, reconciler: Reconciler, now: float
) -> Reconciliation:
    """Decide every open entry of the ticket's task; fail it ``outcome_unknown`` if any stays open."""
    decided: list[JournalEntry] = []
    unresolved: list[str] = []
    for entry in store.unknown_entries(ticket.task_id):
        verdict = reconciler.reconcile(entry)
        detail = f"reconciled: {verdict.value}"
        decided.append(store.journal_after(entry.op_id, _OUTCOME[verdict], detail, now))
        if verdict is Verdict.CANNOT_TELL:
            unresolved.append(f"{entry.action} {entry.target} (op {entry.op_id})")
    if not unresolved:
        return Reconciliation(tuple(decided), None)
    message = "outcome unknown, retry blocked: " + "; ".join(unresolved)
    failed = store.fail(ticket, Failure(FailureReason.OUTCOME_UNKNOWN, message), now)
    return Reconciliation(tuple(decided), failed)


def journaled(
    store: Store,
    ticket: Ticket,
    action: str,
    target: str,
    inputs: Any,
    effect: Callable[[], Outcome],
    clock: Callable[[], float],
    approval_digest: str | None = None,
) -> JournalEntry:
    """Admit, record, run ``effect`` and record its outcome; an exception records ``unknown``.

    ``effect`` must return an outcome confirmed by reading the device back.
    """
    op_id = uuid.uuid4().hex
    store.journal_before(
        ticket, op_id, action, target, digest(inputs), clock(), approval_digest=approval_digest
    )
    try:
        outcome = effect()
    except Exception as exc:
        store.journal_after(op_id, Outcome.UNKNOWN, f"{type(exc).__name__}: {exc}", clock())
        raise
    return store.journal_after(op_id, outcome, "", clock())
