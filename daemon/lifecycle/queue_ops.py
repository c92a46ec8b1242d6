"""The operations that add tasks to the queue, and a restarted daemon's recovery
(``phoned.daemon.lifecycle.ops``). They insert rows rather than move one, so the SQL stores
run them with statements of their own; the checks (idempotency, correlation, the
conversation of a successor) are ``phoned.daemon.store.sql_store``'s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from phoned.daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from phoned.daemon.lifecycle.operation import Delivery, Op
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.wire import plain, task_from
from phoned.daemon.lifecycle.worker_ops import Claim


class _Tasks(Op[list[TaskRecord]]):
    """An operation answering a list of tasks (``{"tasks": [...]}``)."""

    answer_key: ClassVar[str] = "tasks"

    def answer_json(self, result: list[TaskRecord]) -> dict[str, Any]:
        return {"tasks": [plain(t) for t in result]}

    def answer_from(self, body: Mapping[str, Any]) -> list[TaskRecord]:
        return [task_from(t) for t in body["tasks"]]


@dataclass(frozen=True)
class Submit(Op[TaskRecord]):
    """Queue ``spec`` (following up the terminal ``successor_of``, if given); with a known
    idempotency key the first task of that key instead."""

    route: ClassVar[str] = "/v1/tasks"
    spec: TaskSpec
    now: float
    successor_of: str | None = None

    def path(self) -> str:
        return self.route

    def to_wire(self) -> dict[str, Any]:
        return self.spec.model_dump(mode="json")

    def query(self) -> dict[str, Any] | None:
        return {"successor_of": self.successor_of} if self.successor_of else None


@dataclass(frozen=True)
class SubmitWorkflow(_Tasks):
    """Queue every step of ``spec`` in order as one workflow; the steps (with a known
    idempotency key, the steps of the first workflow of that key)."""

    route: ClassVar[str] = "/v1/workflows"
    spec: WorkflowSpec
    now: float

    def path(self) -> str:
        return self.route

    def to_wire(self) -> dict[str, Any]:
        return self.spec.model_dump(mode="json")

    def answer_json(self, result: list[TaskRecord]) -> dict[str, Any]:
        return {"workflow_id": result[0].workflow_id, **super().answer_json(result)}


@dataclass(frozen=True)
class SubmitClaimed(Op[TaskRecord]):
    """Queue ``spec`` and lease it to ``owner`` on ``device`` at once (``run --once
    --task``), so no other worker claims it first; an idempotency key naming an existing
    task answers that task. Only a queue held directly takes it (not on the wire)."""

    route: ClassVar[str] = ""
    spec: TaskSpec
    owner: str
    device: str
    now: float
    lease_s: float = 60.0

    def to_wire(self) -> None:
        return None


@dataclass(frozen=True)
class HandedOver:
    """What ``HandOver`` did: the submitted ``task`` as queued, and what the first of its
    claims that leased a task took (``by``: that claim's index), else None."""

    task: TaskRecord
    taken: TaskRecord | None = None
    by: int | None = None


@dataclass(frozen=True)
class HandOver(Op[HandedOver]):
    """``submit``, then each of ``claims`` in turn until one leases a task: ``phoned
    serve`` hands a submitted task to the claims waiting for its phone. Each claim leases
    what it would lease on its own; a store that can runs them in the submit's own
    transaction (one commit fewer on the pickup, issue #35). A claim that fails is undone
    alone and ends the turns; the submit stands. Only a queue held directly takes it (not
    on the wire)."""

    route: ClassVar[str] = ""
    submit: Submit
    claims: tuple[Claim, ...] = ()

    def to_wire(self) -> None:
        return None


@dataclass(frozen=True)
class Recover(_Tasks):
    """Fail (``runtime_recovery``) every task leased to ``<owner_prefix><serial>`` (only
    ``device``'s when given: a worker that just took the hold on its phone).

    The plane's ``/v1/recover`` takes its wire form and applies its own reading of it
    (the daemon id exactly, under claims granted to the caller's token)."""

    route: ClassVar[str] = "/v1/recover"
    offline: ClassVar[Delivery] = "retry"  # the plane's answer says what was recovered
    owner_prefix: str
    now: float
    device: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"daemon_id": self.owner_prefix.rstrip("/"), "at": self.now, "device": self.device}
