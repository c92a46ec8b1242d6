"""The stale check of a pending approval, made before the person decides (SPEC §7).

A task in ``approval`` waits for a person who reads its preview, and meanwhile another task
on the same phone may change what that preview was taken from (a later ``sms.draft`` of the
same conversation drafts over the composer). After each task a worker ran, it compares every
pending approval of its phone with the phone now, exactly as the resumed attempt will
(``staleness.compare_with_pause``: reads only, nothing tapped or typed, the approval left as
it is). When the decision differs from the last look, an ``approval_check`` document keeps
it with the diff; ``approval_view.pending_approval`` marks the card with it:

* ``void_approval``: the phone no longer shows this preview's context; approving it makes
  the resumed attempt prepare the effect again, and it goes on only when the fresh preview
  is identical (same digest), else it comes back with the fresh preview to approve. The
  card is not voided for it: a later task's draft over this one costs nothing but a
  redraft (``docs/lifecycle.md``, "Approved tasks waiting on one phone");
* ``stale``: the person edited the draft: approving can only end the task ``stale_state``,
  so the card offers Deny and ``phoned rerun`` instead;
* ``continue``: the phone shows the preview's context again: the mark is lifted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from phoned.daemon.lifecycle.pause_evidence import CHECK_KIND, latest_check
from phoned.daemon.lifecycle.records import TaskRecord, Ticket
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.runtime.staleness import compare_with_pause, describe, stored
from phoned.daemon.store.protocol import WorkerStore
from phoned.device.connection import Device

log = logging.getLogger("phoned.approval_watch")

MAX_CHECKED = 20  # pending approvals of one phone looked at after a task


def recheck_pending(
    store: WorkerStore, device: Device, owner: str, ended: TaskRecord, clock: Callable[[], float]
) -> list[str]:
    """After ``ended`` ran on ``device``: check each other pending approval of that phone
    against the phone now; the ids of those whose ``approval_check`` changed.

    ``owner`` is the worker's lease owner, the one that ran those attempts up to their
    approval: the ticket a control plane accepts their evidence with.
    """
    pending = store.list_tasks(
        states=(TaskState.APPROVAL,), device=device.serial, limit=MAX_CHECKED
    )
    marked = []
    for task in pending:
        if task.id == ended.id or task.approval_status != "pending":
            continue
        checked = compare_with_pause(store, device, task, None, approved=True)
        if checked is None:
            continue
        decision, diff, doc = checked
        last = latest_check(store.evidence(task.id), task)
        if decision == (last["body"].get("decision") if last else "continue"):
            continue
        doc["after_task"] = ended.id
        ticket = Ticket(task.id, owner, task.attempt, task.revision)
        store.put_evidence(ticket, CHECK_KIND, stored(task, doc), clock())
        changed = describe(diff)
        log.info("pending approval %s after task %s: %s (%s)", task.id, ended.id, decision, changed)
        marked.append(task.id)
    return marked
