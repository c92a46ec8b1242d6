"""Every change to a task as data: one frozen operation per store verb that changes it.

An operation is declared once (``operation``, docs/operations.md) and knows

* its **wire form**: the route of the plane that takes it (``route``, a path template
  filled from its fields), the JSON body its typed fields make (``body_model``, the
  plane's validation and OpenAPI schema; ``to_wire``; ``from_wire`` reads it back), the
  key of the answer (``answer_key``: ``task``, ``entry`` or ``ref``) and how a daemon
  delivers it while its plane is down (``offline``);
* its **transition**, when it changes a task row: ``transition(row, now, facts)`` runs the
  rule checks of ``phoned.daemon.lifecycle.rules`` and returns the ``Change`` to write, or
  raises the named error. The SQL stores run it inside their write transaction, and a
  daemon's offline outbox (``phoned.daemon.store.http_store``) predicts the plane's answer with
  it, so there is one state machine.

A store implements ``apply(op)``; the protocols of ``phoned.daemon.store.protocol`` build the
named verbs (``store.complete(ticket, ...)``) on it, and the plane's routes build the same
operations from the bodies they take (``phoned.daemon.server.routes_daemon``, ``routes_planner``,
``routes_control``). This module is the table; the classes live in ``operation`` (what
every operation is), ``worker_ops`` and ``planner_ops``.

=====================  ==================================================
family                 operations
=====================  ==================================================
claiming               ``Claim``, ``ClaimBatch``
worker reports         ``Heartbeat``, ``Start``, ``Complete``, ``Fail``, ``Pause``,
(``TaskReport``)       ``RequestApproval``, ``ConfirmStopped``
the journal            ``JournalBefore``, ``JournalAfter``, ``PutEvidence``
planner steering       ``Approve``, ``Deny``, ``Resume``, ``Amend``, ``Cancel``,
(``Steer``)            ``UserPause``, ``UserResume``, ``Rerun``
the system             ``Expire``
ingress, recovery      ``Submit``, ``SubmitWorkflow``, ``SubmitClaimed``, ``HandOver``,
(``queue_ops``)        ``Recover``
=====================  ==================================================

The operations on who serves a phone (holds, presence, device registration) carry the
store's records, so they live in ``phoned.daemon.store.phone_ops``.
"""

from __future__ import annotations

from phoned.daemon.lifecycle.operation import DECLARED, Change, Facts, Offline, Op, TaskOp
from phoned.daemon.lifecycle.planner_ops import (
    STEERING,
    Amend,
    Approve,
    Cancel,
    Deny,
    Expire,
    Rerun,
    Resume,
    Steer,
    UserPause,
    UserResume,
)
from phoned.daemon.lifecycle.queue_ops import (
    HandedOver,
    HandOver,
    Recover,
    Submit,
    SubmitClaimed,
    SubmitWorkflow,
)
from phoned.daemon.lifecycle.worker_ops import (
    Claim,
    ClaimBatch,
    Complete,
    ConfirmStopped,
    Fail,
    Heartbeat,
    JournalAfter,
    JournalBefore,
    Pause,
    PutEvidence,
    RequestApproval,
    Start,
    TaskReport,
)

__all__ = [
    "DECLARED",
    "STEERING",
    "Amend",
    "Approve",
    "Cancel",
    "Change",
    "Claim",
    "ClaimBatch",
    "Complete",
    "ConfirmStopped",
    "Deny",
    "Expire",
    "Facts",
    "Fail",
    "HandOver",
    "HandedOver",
    "Heartbeat",
    "JournalAfter",
    "JournalBefore",
    "Offline",
    "Op",
    "Pause",
    "PutEvidence",
    "Recover",
    "RequestApproval",
    "Rerun",
    "Resume",
    "Start",
    "Steer",
    "Submit",
    "SubmitClaimed",
    "SubmitWorkflow",
    "TaskOp",
    "TaskReport",
    "UserPause",
    "UserResume",
]
