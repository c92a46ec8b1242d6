"""Mapping between database rows (plain dicts) and lifecycle records.

Shared by every SQL store: a row is a ``dict`` keyed by column name.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any, TypeVar

from phoned.daemon.lifecycle.contract import TaskSpec
from phoned.daemon.lifecycle.records import (
    Event,
    Failure,
    JournalEntry,
    JournalOutcome,
    Revision,
    StopSummary,
    TaskRecord,
    WorkflowRecord,
)
from phoned.daemon.lifecycle.rules import Row, summary_json
from phoned.daemon.lifecycle.states import FailureReason, TaskState, requires_decision
from phoned.foundation.digest import canonical_json

R = TypeVar("R")


def new_task_row(
    spec: TaskSpec,
    now: float,
    *,
    step_index: int | None = None,
    rerun_of: str | None = None,
    successor_of: str | None = None,
) -> Row:
    """The row of a freshly submitted task: queued, version 1, revision 1, attempt 0."""
    return {
        "id": uuid.uuid4().hex,
        "conversation_id": spec.conversation_id,
        "method": spec.method,
        "params": canonical_json(spec.params),
        "spec": canonical_json(spec.model_dump(mode="json")),
        "device": spec.device,
        "source": spec.source,
        "workflow_id": spec.workflow_id,
        "step_id": spec.step_id,
        "step_index": step_index,
        "plan_id": spec.plan_id,
        "output_key": spec.output_key,
        "wait_policy": spec.wait_policy,
        "completion_target": spec.completion_target,
        "idempotency_key": spec.idempotency_key if step_index is None else None,
        "max_attempts": spec.max_attempts,
        "dispatch_timeout_s": spec.timeouts.dispatch_s,
        "run_timeout_s": spec.timeouts.run_s,
        "approval_ttl_s": spec.timeouts.approval_ttl_s,
        "permission_ttl_s": spec.timeouts.permission_ttl_s,
        "state": TaskState.QUEUED.value,
        "state_version": 1,
        "revision": 1,
        "attempt": 0,
        "rerun_of": rerun_of,
        "successor_of": successor_of,
        "created_at": now,
        "updated_at": now,
    }


def _failure(reason: str | None, message: str | None) -> Failure | None:
    if reason is None:
        return None
    return Failure(FailureReason(reason), message or "")


def _summary(text: str | None) -> StopSummary | None:
    if text is None:
        return None
    data = json.loads(text)
    return StopSummary(tuple(data["done"]), tuple(data["not_done"]))


_COPIED = (
    "id",
    "conversation_id",
    "method",
    "device",
    "source",
    "state_version",
    "revision",
    "attempt",
    "max_attempts",
    "created_at",
    "updated_at",
    "workflow_id",
    "step_id",
    "step_index",
    "plan_id",
    "output_key",
    "wait_policy",
    "completion_target",
    "idempotency_key",
    "lease_owner",
    "lease_until",
    "waiting_for",
    "approval_digest",
    "approval_status",
    "approval_revision",
    "observed_target",
    "rerun_of",
    "successor_of",
    "dispatched_at",
    "running_since",
    "active_s",
    "approval_deadline",
    "permission_deadline",
    "dispatch_timeout_s",
    "run_timeout_s",
)


def _refs(text: str) -> tuple[str, ...]:
    """Evidence references from their JSON list; most tasks have none yet (a claim's)."""
    return () if text == "[]" else tuple(json.loads(text))


def task_record(row: Row) -> TaskRecord:
    """The record of a task row, read by its column names (``task_reader`` reads a row's
    values by position)."""
    return (_BY_NAME if "pause_requested" in row else _BY_NAME_UNPAUSED)(row)


# what a task reader builds beside the copied columns; with them, every TaskRecord field
_READ = ("params", "state", "failure", "stop_requested", "pause_requested", "stop_summary",
         "evidence_refs", "spec")  # fmt: skip
if {f.name for f in dataclasses.fields(TaskRecord)} != {*_COPIED, *_READ}:  # pragma: no cover
    raise TypeError("rows.py reads other fields than TaskRecord has: update _COPIED or _READ")


@lru_cache(maxsize=64)
def task_reader(columns: tuple[str, ...]) -> Callable[[Sequence[Any]], TaskRecord]:
    """The reader of task rows with ``columns``: it turns a row's values, in that order, into
    the task's record. Built once per column list (a query's), so reading a row looks up
    no names: a claim's row comes from the server as a tuple and becomes a record
    without a dict in between (issue #35). A row without ``pause_requested`` (a schema
    before revisions) reads as not paused; any other missing column is a KeyError here.

    The record's fields go straight into the new instance's ``__dict__``, as
    ``TaskRecord.of`` does, without its check of the names: ``_COPIED`` and ``_READ`` are
    every field, checked once when this module loads. Hot, a dnd.set row reads in 7.5 us
    this way against 8.8 us through a dict and ``TaskRecord.of`` (/tmp microbenchmark,
    issue #35's closing note); the larger part is not building the dict at all."""
    return _reader({name: i for i, name in enumerate(columns)})


def _reader(at: dict[str, Any]) -> Callable[[Any], TaskRecord]:
    """The reader of task rows whose columns are at ``at[name]``: a position in a tuple,
    or the name itself in a dict row."""
    copied = itemgetter(*(at[name] for name in _COPIED))
    params, state, spec = at["params"], at["state"], at["spec"]
    reason, message = at["failure_reason"], at["failure_message"]
    stop, pause = at["stop_requested"], at.get("pause_requested")
    summary, refs = at["stop_summary"], at["evidence_refs"]
    new = object.__new__

    def read(values: Any) -> TaskRecord:
        record: TaskRecord = new(TaskRecord)
        fields = record.__dict__
        fields.update(zip(_COPIED, copied(values), strict=True))
        fields["params"] = json.loads(values[params])
        fields["state"] = TaskState(values[state])
        fields["failure"] = _failure(values[reason], values[message])
        fields["stop_requested"] = bool(values[stop])
        fields["pause_requested"] = pause is not None and bool(values[pause])
        fields["stop_summary"] = _summary(values[summary])
        fields["evidence_refs"] = _refs(values[refs])
        fields["spec"] = json.loads(values[spec])
        return record

    return read


_NAMES = (*_COPIED, "params", "state", "spec", "failure_reason", "failure_message",
          "stop_requested", "stop_summary", "evidence_refs")  # fmt: skip
_BY_NAME = _reader({name: name for name in (*_NAMES, "pause_requested")})
_BY_NAME_UNPAUSED = _reader({name: name for name in _NAMES})  # a row from before revisions


def task_event_row(row: Row, *, decision: bool | None = None) -> Row:
    """The outbox row announcing the task row's current version."""
    state = TaskState(row["state"])
    return {
        "kind": "task",
        "task_id": row["id"],
        "workflow_id": row["workflow_id"],
        "step_id": row["step_id"],
        "plan_id": row["plan_id"],
        "conversation_id": row["conversation_id"],
        "state": state.value,
        "state_version": row["state_version"],
        "revision": row["revision"],
        "attempt": row["attempt"],
        "reason": row["failure_reason"],
        "requires_decision": int(requires_decision(state) if decision is None else decision),
        "stop_requested": row["stop_requested"],
        "evidence_refs": row["evidence_refs"],
        "ts": row["updated_at"],
    }


def workflow_event_row(wf: Row, reason: str | None, decision: bool) -> Row:
    """The outbox row announcing a workflow's new state (completed or halted)."""
    return {
        "kind": "workflow",
        "task_id": None,
        "workflow_id": wf["id"],
        "step_id": None,
        "plan_id": wf["plan_id"],
        "conversation_id": wf["conversation_id"],
        "state": wf["state"],
        "state_version": wf["version"],
        "revision": 0,
        "attempt": 0,
        "reason": reason,
        "requires_decision": int(decision),
        "stop_requested": 0,
        "evidence_refs": "[]",
        "ts": wf["updated_at"],
    }


def _record(cls: type[R], row: Row, **converted: Any) -> R:
    """The ``cls`` record of ``row``: each field the column of its name, but those given
    ``converted`` (a JSON text parsed, an int made a bool)."""
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    return cls(**{n: row[n] for n in names if n not in converted}, **converted)


def _json_or_none(text: str | None) -> Any:
    return json.loads(text) if text else None


def event_record(row: Row) -> Event:
    """The record of an outbox row."""
    return _record(
        Event,
        row,
        requires_decision=bool(row["requires_decision"]),
        stop_requested=bool(row["stop_requested"]),
        evidence_refs=tuple(json.loads(row["evidence_refs"])),
    )


def journal_record(row: Row) -> JournalEntry:
    """The record of a journal row."""
    outcome = JournalOutcome(row["outcome"]) if row["outcome"] else None
    return _record(JournalEntry, row, outcome=outcome)


def workflow_record(row: Row) -> WorkflowRecord:
    """The record of a workflow row."""
    return _record(WorkflowRecord, row)


def revision_record(row: Row) -> Revision:
    """The record of a task_revisions row."""
    params, checkpoint = json.loads(row["params"]), _json_or_none(row["checkpoint"])
    return _record(Revision, row, params=params, checkpoint=checkpoint)


def record_row(record: TaskRecord) -> Row:
    """The row a ``TaskRecord`` was read from, as far as the record tells (the inverse of
    ``task_record``): what a daemon's outbox runs an operation's rule on to predict it.
    The time-to-live columns come from the record's spec; ``resume`` is not kept (0)."""
    timeouts = record.spec.get("timeouts") or {}
    row: Row = {name: getattr(record, name) for name in _COPIED}
    failure = record.failure
    summary = record.stop_summary
    row.update(
        params=canonical_json(record.params),
        state=record.state.value,
        failure_reason=failure.reason.value if failure else None,
        failure_message=failure.message if failure else None,
        stop_requested=int(record.stop_requested),
        pause_requested=int(record.pause_requested),
        stop_summary=summary_json(summary) if summary else None,
        evidence_refs=json.dumps(list(record.evidence_refs)),
        spec=canonical_json(record.spec),
        resume=0,
        approval_ttl_s=float(timeouts.get("approval_ttl_s") or 0.0),
        permission_ttl_s=float(timeouts.get("permission_ttl_s") or 0.0),
    )
    return row
