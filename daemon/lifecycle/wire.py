"""The JSON wire format of the control plane: records to JSON and back, errors by name.

Shared by the server (``phoned.daemon.server``) and its clients (``phoned.daemon.store.http_store``,
``phoned.daemon.store.plane_client``) so a ``TaskRecord`` that crosses the wire comes back equal;
the operations' bodies are in ``phoned.daemon.lifecycle.ops``. Errors travel as
``{"error": "<class name>", "message": ..., "errors": [...]}`` and are raised again on
the client as the same class of ``phoned.daemon.lifecycle.errors``.
"""

from __future__ import annotations

import dataclasses
import functools
from enum import Enum
from typing import Annotated, Any

from phoned.daemon.lifecycle import errors as lifecycle_errors
from phoned.daemon.lifecycle.records import (
    Event,
    Failure,
    JournalEntry,
    JournalOutcome,
    Preview,
    StopSummary,
    TaskRecord,
    Ticket,
    WorkflowRecord,
)
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from pydantic import BaseModel, ConfigDict, Field

MAX_TIME = 253402300799.0  # 9999-12-31T23:59:59Z
# When something happened on the daemon (POSIX s); the server never stores a later time.
At = Annotated[float | None, Field(ge=0, le=MAX_TIME, allow_inf_nan=False)]


class WireBody(BaseModel):
    """Every request body the plane takes: unknown fields refused, numbers finite
    (``phoned.daemon.server.limits`` has refused NUL characters, over-deep nesting and
    out-of-range numbers before a model sees the body)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class TicketBody(WireBody):
    """The guard of every report: the claim it belongs to (its task is in the path)."""

    owner: str
    attempt: int
    revision: int


class ReportBody(WireBody):
    """Fields every daemon report carries; ``report_id`` makes redelivery harmless."""

    report_id: str | None = Field(default=None, max_length=100)
    ticket: TicketBody
    at: At = None  # when it happened on the daemon (POSIX s)


# HTTP status of each error class (the most specific class wins); the rest are 500.
ERROR_STATUS: dict[type[lifecycle_errors.LifecycleError], int] = {
    lifecycle_errors.InvalidTask: 422,
    lifecycle_errors.TaskNotFound: 404,
    lifecycle_errors.GuardError: 409,
    lifecycle_errors.ConversationMismatch: 409,
    lifecycle_errors.ApprovalMismatch: 409,
    lifecycle_errors.TaskTerminal: 409,
    lifecycle_errors.IdempotencyConflict: 409,
    lifecycle_errors.StoreUnavailable: 503,
}


# values plain() hands back as they are: exactly these types (an enum that is also a str
# or an int is not one of them: its value is)
_AS_IS = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """Dataclasses, enums and tuples as JSON values (tuples become lists).

    The values most of a record holds (its scalars, a task's params and spec as parsed
    JSON) are told by their exact type before any other test, and a scalar inside a
    record, dict or list without a call of its own: a record's answer is about half the
    time (issue #35).
    """
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is dict:
        return {str(k): v if type(v) in _AS_IS else plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _AS_IS else plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            name: v if type(v := getattr(value, name)) in _AS_IS else plain(v)
            for name in _field_names(type(value))
        }
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(plain(v) for v in value)
    return value


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (``dataclasses.fields`` filters them anew on
    every call; a claim's answer and the worker's reading of it ask for every record,
    issue #35)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def _failure(data: Any) -> Failure | None:
    if not data:
        return None
    return Failure(FailureReason(data["reason"]), data.get("message", ""))


def _summary(data: Any) -> StopSummary | None:
    if not data:
        return None
    return StopSummary(tuple(data.get("done", ())), tuple(data.get("not_done", ())))


def task_from(data: dict[str, Any]) -> TaskRecord:
    """The ``TaskRecord`` a ``plain(record)`` document describes."""
    kwargs = {name: data[name] for name in _field_names(TaskRecord) if name in data}
    kwargs["state"] = TaskState(data["state"])
    kwargs["failure"] = _failure(data.get("failure"))
    kwargs["stop_summary"] = _summary(data.get("stop_summary"))
    kwargs["evidence_refs"] = tuple(data.get("evidence_refs") or ())
    return TaskRecord.of(kwargs)


def event_from(data: dict[str, Any]) -> Event:
    """The ``Event`` a ``plain(event)`` document describes."""
    kwargs = {name: data[name] for name in _field_names(Event) if name in data}
    kwargs["evidence_refs"] = tuple(data.get("evidence_refs") or ())
    return Event(**kwargs)


def journal_from(data: dict[str, Any]) -> JournalEntry:
    """The ``JournalEntry`` a ``plain(entry)`` document describes."""
    kwargs = {name: data[name] for name in _field_names(JournalEntry) if name in data}
    kwargs["outcome"] = JournalOutcome(data["outcome"]) if data.get("outcome") else None
    return JournalEntry(**kwargs)


def workflow_from(data: dict[str, Any]) -> WorkflowRecord:
    """The ``WorkflowRecord`` a ``plain(workflow)`` document describes."""
    return WorkflowRecord(
        **{name: data[name] for name in _field_names(WorkflowRecord) if name in data}
    )


def ticket_json(ticket: Ticket) -> dict[str, Any]:
    """A ticket without its task id (the task id is in the URL)."""
    return {"owner": ticket.owner, "attempt": ticket.attempt, "revision": ticket.revision}


def failure_json(failure: Failure) -> dict[str, Any]:
    """A failure as the report body carries it."""
    return {"reason": failure.reason.value, "message": failure.message}


def preview_json(preview: Preview) -> dict[str, Any]:
    """A preview without task and conversation (both are the task's own)."""
    return {
        "effect": preview.effect,
        "target": preview.target,
        "data": preview.data,
        "snapshot_digest": preview.snapshot_digest,
    }


def error_status(exc: lifecycle_errors.LifecycleError) -> int:
    """The HTTP status an error is answered with."""
    for cls in type(exc).__mro__:
        if cls in ERROR_STATUS:
            return ERROR_STATUS[cls]
    return 500


def error_json(exc: lifecycle_errors.LifecycleError) -> dict[str, Any]:
    """The body of an error answer: class name, message, and field errors if any."""
    body: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, lifecycle_errors.InvalidTask):
        body["errors"] = list(exc.errors)
    if isinstance(exc, lifecycle_errors.TaskTerminal):
        body["task_id"], body["state"] = exc.task_id, exc.state
    return body


def error_from(body: Any, status: int) -> lifecycle_errors.LifecycleError:
    """Raise-ready error for an error answer; an unknown name maps by status class."""
    if not isinstance(body, dict):
        body = {}
    name, message = str(body.get("error", "")), str(body.get("message", ""))
    if name == "InvalidTask":
        return lifecycle_errors.InvalidTask(list(body.get("errors") or []))
    if name == "TaskTerminal":
        return lifecycle_errors.TaskTerminal(str(body.get("task_id")), str(body.get("state")))
    cls = getattr(lifecycle_errors, name, None)
    if isinstance(cls, type) and issubclass(cls, lifecycle_errors.LifecycleError):
        return cls(message)
    if status == 409:
        return lifecycle_errors.GuardError(message or f"HTTP {status}")
    return lifecycle_errors.StoreUnavailable(message or f"control plane answered HTTP {status}")
