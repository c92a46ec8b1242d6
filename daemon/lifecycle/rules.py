"""Pure lifecycle rules over task rows, shared by every store.

Each function takes the row as read inside the store's write transaction and either
returns the row to write or raises a named ``GuardError``. A SQL store then writes it
with ``write_task``, whose WHERE clause repeats the guards as a backstop; the operations
of ``phoned.daemon.lifecycle.ops`` are built from these, and a daemon's offline outbox predicts
its reports' answers with the same ones.
"""

from __future__ import annotations

import json
from typing import Any

from phoned.daemon.lifecycle import waiting
from phoned.daemon.lifecycle.errors import (
    ConversationMismatch,
    IllegalTransition,
    LeaseLost,
    PauseRequested,
    RevisionSuperseded,
    StaleAttempt,
    StopRequested,
    TaskNotFound,
    TaskTerminal,
)
from phoned.daemon.lifecycle.records import Failure, JournalEntry, JournalOutcome, StopSummary, Ticket
from phoned.daemon.lifecycle.states import (
    LEASED,
    TERMINAL,
    FailureReason,
    TaskState,
    after_failure,
    can_transition,
)
from phoned.foundation.digest import canonical_json

Row = dict[str, Any]  # a task row: column name -> value


def require(row: Row | None, task_id: str) -> Row:
    """The row, or ``TaskNotFound``."""
    if row is None:
        raise TaskNotFound(f"no task {task_id}")
    return row


def check_conversation(row: Row, conversation_id: str) -> None:
    """Refuse a request that comes from another conversation than the task's."""
    if row["conversation_id"] != conversation_id:
        raise ConversationMismatch(
            f"task {row['id']} belongs to another conversation; request refused"
        )


def check_not_terminal(row: Row) -> None:
    """Refuse any change to a terminal task, pointing at ``successor_of``."""
    if TaskState(row["state"]) in TERMINAL:
        raise TaskTerminal(row["id"], row["state"])


def check_lease(row: Row, ticket: Ticket, now: float, *, revision: bool = True) -> None:
    """Refuse a worker report unless ``ticket`` holds the lease of the current attempt.

    With ``revision=True`` the ticket's revision must also be current. A lease past its
    time still holds for a report until the sweeper acted on it (which moves the attempt
    on or ends the task, so the report is refused then): nobody else can have claimed the
    task meanwhile, and the report is the truth of what the phone did. A heartbeat that a
    busy or full queue kept out (issue #24) does not cost the attempt. Starting an effect
    needs a live lease (``check_admission``).
    """
    if ticket.attempt != row["attempt"]:
        raise StaleAttempt(f"task {row['id']}: attempt {ticket.attempt} is not {row['attempt']}")
    if row["lease_owner"] != ticket.owner or TaskState(row["state"]) not in LEASED:
        raise LeaseLost(f"task {row['id']}: lease not held by {ticket.owner}")
    if revision and ticket.revision != row["revision"]:
        raise RevisionSuperseded(
            f"task {row['id']}: revision {ticket.revision} superseded by {row['revision']}"
        )


def check_admission(row: Row, ticket: Ticket, now: float) -> None:
    """The admission gate: live lease, current revision, running, no stop requested."""
    check_lease(row, ticket, now)
    if row["lease_until"] is None or row["lease_until"] < now:
        raise LeaseLost(f"task {row['id']}: lease expired at {row['lease_until']}")
    if row["state"] != TaskState.RUNNING.value:
        raise IllegalTransition(f"task {row['id']} is {row['state']}, not running")
    if row["stop_requested"]:
        raise StopRequested(f"task {row['id']}: stop requested; action not admitted")
    if row.get("pause_requested"):
        raise PauseRequested(f"task {row['id']}: pause requested; action not admitted")


def move(row: Row, to: TaskState, now: float, **changes: Any) -> Row:
    """The row after moving to ``to``: table-checked, version +1, lease and clock kept right.

    Active running time accumulates only while in ``running``; the lease is dropped on
    leaving ``dispatched``/``running``.
    """
    src = TaskState(row["state"])
    if src in TERMINAL:
        raise TaskTerminal(row["id"], src.value)
    if not can_transition(src, to):
        raise IllegalTransition(f"task {row['id']}: {src.value} -> {to.value} not allowed")
    new = dict(row)
    new.update(changes)
    new["state"] = to.value
    new["state_version"] = row["state_version"] + 1
    new["updated_at"] = now
    if src is TaskState.RUNNING:
        new["active_s"] = row["active_s"] + max(0.0, now - row["running_since"])
        new["running_since"] = None
    if to is TaskState.RUNNING:
        new["running_since"] = now
    if to not in LEASED:
        new["lease_owner"] = None
        new["lease_until"] = None
    return new


def bump(row: Row, now: float, **changes: Any) -> Row:
    """The row after a non-transition change that is still announced (amend, stop request)."""
    new = dict(row)
    new.update(changes)
    new["state_version"] = row["state_version"] + 1
    new["updated_at"] = now
    return new


def fail(row: Row, failure: Failure, now: float, evidence: list[str] | None = None) -> Row:
    """The row after ``failure``: requeued when retry is allowed, else ``failed``.

    A requeue starts a new attempt from scratch (active time and dispatch clock reset).
    """
    to = after_failure(failure.reason, row["attempt"], row["max_attempts"], row["source"])
    changes: dict[str, Any] = {
        "failure_reason": failure.reason.value,
        "failure_message": failure.message,
    }
    if evidence:
        changes["evidence_refs"] = add_refs(row, evidence)
    if to is TaskState.QUEUED:
        changes.update(resume=0, active_s=0.0, dispatched_at=None, waiting_for=None)
    return move(row, to, now, **changes)


def stop(row: Row, reason: FailureReason, message: str, now: float, summary: str) -> Row:
    """The row after ending ``stopped`` with ``reason`` and a done/not-done summary."""
    return move(
        row,
        TaskState.STOPPED,
        now,
        failure_reason=reason.value,
        failure_message=message,
        stop_summary=summary,
    )


def add_refs(row: Row, refs: list[str]) -> str:
    """The stored evidence list with ``refs`` appended (no duplicates, order kept)."""
    current: list[str] = json.loads(row["evidence_refs"])
    current.extend(r for r in refs if r not in current)
    return json.dumps(current)


def summary_json(summary: StopSummary) -> str:
    """The stored form of a stop summary."""
    return canonical_json({"done": list(summary.done), "not_done": list(summary.not_done)})


USER_HOLD = waiting.USER_HOLD.text  # ``waiting_for`` of a task a person paused


def checkpoint(row: Row, journal: list[JournalEntry], params: dict[str, Any], now: float) -> Row:
    """The checkpoint of revision ``row["revision"]`` as revision +1 (``params``) replaces it
    (seed 003 step 5): effects already done, operations still pending, what remains and the
    budget left. Kept with the old revision; a done effect is never undone automatically.
    """
    mine = [e for e in journal if e.revision <= row["revision"]]
    running = row["running_since"] is not None
    active = row["active_s"] + (max(0.0, now - row["running_since"]) if running else 0.0)
    return {
        "superseded_by": row["revision"] + 1,
        "state": row["state"],
        "attempt": row["attempt"],
        "done": [_entry(e) for e in mine if e.outcome is JournalOutcome.CONFIRMED_SUCCESS],
        "not_done": [_entry(e) for e in mine if e.outcome is JournalOutcome.CONFIRMED_FAILURE],
        "pending_ops": [_entry(e) for e in mine if e.open],
        "remaining": {"method": row["method"], "params": params},
        "budget": {
            "retries_left": max(0, row["max_attempts"] - max(row["attempt"], 1)),
            "run_s_left": round(max(0.0, row["run_timeout_s"] - active), 3),
        },
        "at": now,
    }


def _entry(entry: JournalEntry) -> dict[str, Any]:
    return {
        "op_id": entry.op_id,
        "action": entry.action,
        "target": entry.target,
        "revision": entry.revision,
        "attempt": entry.attempt,
        "outcome": entry.outcome.value if entry.outcome else None,
    }
