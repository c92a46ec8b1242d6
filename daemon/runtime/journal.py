"""The action journal of ``phoned.device.actions``, written into the task store (SPEC §4).

An action calls ``before`` ahead of its effect and ``after`` once the effect's command
returned. ``before`` is the admission gate too: the store admits and records the action
in one transaction, so a stop request or a newer revision refuses it atomically
(``Superseded``, the action does not run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from phoned.daemon.lifecycle.errors import GuardError
from phoned.daemon.lifecycle.records import JournalOutcome, Ticket
from phoned.daemon.runtime.faults import fault_point
from phoned.daemon.store.protocol import WorkerStore
from phoned.device.actions.base import Superseded


@dataclass
class StoreJournal:
    """The journal of one attempt's effects (``ticket``'s), gated by the store.

    ``approval_digest``: the approval the effects run under (None: none given, or void).
    """

    store: WorkerStore
    ticket: Ticket
    clock: Callable[[], float]
    approval_digest: str | None = None

    def before(self, op_id: str, action: str, target: str, input_digest: str) -> None:
        try:
            self.store.journal_before(
                self.ticket,
                op_id,
                action,
                target,
                input_digest,
                self.clock(),
                approval_digest=self.approval_digest,
            )
        except GuardError as exc:
            raise Superseded(f"{type(exc).__name__}: {exc}") from exc
        fault_point("after_journal_before")

    def after(self, op_id: str, outcome: str, detail: str = "") -> None:
        fault_point("after_apply")
        self.store.journal_after(op_id, JournalOutcome(outcome), detail, self.clock())
