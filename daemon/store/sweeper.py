"""The sweeper: ends tasks whose lease, timeout or TTL ran out (run every 30 s), fails
tasks that waited queued past their ``timeouts.queued_s`` (nobody serves their phone), and
applies the queue's retention, one batch per sweep.

``sweep_verdict`` is the pure rule; ``sweep`` applies it through the store, each
expiry guarded by the state version it read, so a worker reporting at the same moment
wins cleanly. Retry classification and requeue happen in the store (``rules.fail``).
Retention (``phoned.daemon.store.retention``: finished tasks past ``retention.days`` or beyond
``retention.max_tasks``, with their evidence, events, journal, revisions and artifacts
folders) removes at most ``batch`` (500) tasks per sweep in one transaction, after the
expiries, so a task this sweep ended is counted with the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

from phoned.daemon.lifecycle.errors import GuardError, LifecycleError, TaskTerminal
from phoned.daemon.lifecycle.records import Failure, TaskRecord
from phoned.daemon.lifecycle.states import LEASED, FailureReason, TaskState
from phoned.daemon.lifecycle.waiting import WaitKind
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.retention import Pruned, RetentionRule, prune_batch
from phoned.daemon.store.sql_store import SqlStore

log = logging.getLogger("phoned.sweeper")


def _dispatched(task: TaskRecord, now: float) -> Failure | None:
    if task.dispatched_at is not None and now - task.dispatched_at > task.dispatch_timeout_s:
        return Failure(FailureReason.TIMEOUT, f"not started within {task.dispatch_timeout_s:g} s")
    return None


def _running(task: TaskRecord, now: float) -> Failure | None:
    active = task.active_s + (now - task.running_since if task.running_since else 0.0)
    if active > task.run_timeout_s:
        return Failure(FailureReason.TIMEOUT, f"active for more than {task.run_timeout_s:g} s")
    return None


def _approval(task: TaskRecord, now: float) -> Failure | None:
    if task.approval_deadline is not None and now > task.approval_deadline:
        return Failure(FailureReason.APPROVAL_EXPIRED, "no decision within the approval TTL")
    return None


def _permission(task: TaskRecord, now: float) -> Failure | None:
    if task.permission_deadline is not None and now > task.permission_deadline:
        return Failure(FailureReason.PERMISSION_DENIED, "not granted within the permission TTL")
    return None


def _waiting(task: TaskRecord, now: float) -> Failure | None:
    """A step handed to the person (``ui.handoff``) whose TTL ended."""
    waiting = task.waiting
    if waiting is None or waiting.kind is not WaitKind.PERSON or not waiting.until:
        return None
    if now <= waiting.until:
        return None
    ttl = task.params.get("ttl_s")
    return Failure(
        FailureReason.TIMEOUT, f"nobody did the step handed to the person within its TTL ({ttl} s)"
    )


_RULES: dict[TaskState, Callable[[TaskRecord, float], Failure | None]] = {
    TaskState.WAITING: _waiting,
    TaskState.DISPATCHED: _dispatched,
    TaskState.RUNNING: _running,
    TaskState.APPROVAL: _approval,
    TaskState.PERMISSION: _permission,
}


def sweep_verdict(task: TaskRecord, now: float, alive: bool = False) -> Failure | None:
    """The failure the sweeper records for ``task`` at ``now``, or None if it is in time.

    A lost lease (``runtime_offline``) is checked before the state's own timeout, unless
    ``alive``: the sweeping process's own worker is running the task now (its heartbeat
    could not reach a busy or full queue; issue #24: the attempt is not blamed on it).
    """
    if (
        not alive
        and task.state in LEASED
        and task.lease_until is not None
        and task.lease_until < now
    ):
        return Failure(FailureReason.RUNTIME_OFFLINE, "lease expired without heartbeat")
    rule = _RULES.get(task.state)
    return rule(task, now) if rule else None


def queued_verdict(task: TaskRecord, now: float) -> Failure | None:
    """The failure of a task that waited queued past its ``timeouts.queued_s``, else None.

    Only a task that could have been claimed counts: a workflow step after the first waits
    for its earlier steps, not for a worker. The clock starts when it was last queued.
    """
    limit = (task.spec.get("timeouts") or {}).get("queued_s")
    if task.state is not TaskState.QUEUED or not limit or task.step_index not in (None, 0):
        return None
    if now - task.updated_at <= limit:
        return None
    where = f"device {task.device}" if task.device else "any device"
    return Failure(
        FailureReason.TIMEOUT,
        f"not claimed within {limit:g} s: no daemon serving {where} took it "
        "(is the phone attached and a daemon running on this queue?)",
    )


def sweep(
    store: Store,
    now: float,
    retention: RetentionRule | None = None,
    running: Collection[str] = (),
) -> list[TaskRecord]:
    """Expire every overdue task at ``now``, then apply one batch of ``retention`` (None:
    keep every task); return the tasks as written (requeued or ended). ``running``: the
    ids of tasks this process's live workers run now (their leases are not judged)."""
    changed: list[TaskRecord] = []
    due = store.due_for_sweep(now)
    candidates = [(t, sweep_verdict(t, now, alive=t.id in running)) for t in due]
    queued = store.list_tasks(states=(TaskState.QUEUED,), limit=1000)  # oldest first
    overdue = [(t, queued_verdict(t, now)) for t in queued]
    for task, failure in [*candidates, *overdue]:
        if failure is None:
            continue
        try:
            changed.append(store.expire(task.id, task.state_version, failure, now))
        except (GuardError, TaskTerminal):
            continue  # a worker reported first; its report stands
    if retention is not None:
        apply_retention(store, retention, now)
    return changed


def apply_retention(store: Store, retention: RetentionRule, now: float) -> Pruned:
    """One batch of ``retention`` on a queue held directly (logged); a failure is logged
    and left to the next sweep, the expiries of this one stand."""
    if not isinstance(store, SqlStore) or retention.keeps_everything:
        return Pruned()
    try:
        pruned = prune_batch(store.db, retention, now)
    except LifecycleError as exc:  # a busy queue, or a row the server refused to delete
        log.warning("retention batch failed: %s", exc)
        return Pruned()
    if pruned.tasks:
        log.info("retention: removed %s", pruned.describe())
    return pruned
