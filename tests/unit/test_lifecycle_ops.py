"""The operations of ``phoned.daemon.lifecycle.ops``: each wire form reads back to the same
operation, the plane serves every route of the table, and a daemon's offline prediction
of a report is what the SQL store answers (one state machine)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.records import (
    Failure,
    Preview,
    StopSummary,
    TaskRecord,
    Ticket,
)
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.server.openapi import openapi_document
from phoned.daemon.store import phone_ops
from phoned.daemon.store.holds import Holder
from phoned.daemon.store.rows import record_row, task_record
from phoned.daemon.store.sqlite_store import SqliteStore

TICKET = Ticket("t1", "d1/SERIAL", 2, 1)
PREVIEW = Preview("t1", "conv-a", "sms.send", "+49151", {"body": "hi"}, "sha256:0")
REPORTS: list[ops.TaskReport] = [
    ops.Heartbeat(TICKET, 10.0, 90.0),
    ops.Start(TICKET, 10.0),
    ops.Complete(TICKET, 10.0, "dnd.priority", ("ev-1", "ev-2")),
    ops.Fail(TICKET, 10.0, Failure(FailureReason.TIMEOUT, "slow"), ("ev-1",)),
    ops.Pause(TICKET, 10.0, TaskState.PERMISSION, "permission:contacts", ("ev-1",)),
    ops.RequestApproval(TICKET, 10.0, PREVIEW),
    ops.ConfirmStopped(TICKET, 10.0, StopSummary(("dnd.set zen_mode",), ("sms.send",))),
]
STEERS: list[ops.Steer] = [
    ops.Approve("t1", "conv-a", 10.0, 3, "sha256:1"),
    ops.Deny("t1", "conv-a", 10.0, 3, "sha256:1"),
    ops.Amend("t1", "conv-a", 10.0, {"mode": "off"}),
    *(cls("t1", "conv-a", 10.0) for cls in (ops.Resume, ops.Cancel, ops.UserPause, ops.UserResume)),
]


def _task() -> TaskRecord:
    return TaskRecord("t1", "conv-a", "sms.send", {}, "SERIAL", "CLOUD", TaskState.RUNNING, 4, 1, 2, 3, 0.0, 0.0)  # fmt: skip


@pytest.mark.parametrize("op", REPORTS, ids=lambda op: type(op).__name__)
def test_a_report_reads_back_from_its_wire_form(op: ops.TaskReport) -> None:
    body = type(op).body_model().model_validate(op.to_wire())
    assert type(op).from_wire(body, _task(), ticket=TICKET, now=10.0) == op
    assert op.path() == op.route.replace("{task_id}", "t1")


@pytest.mark.parametrize("op", STEERS, ids=lambda op: type(op).__name__)
def test_a_steering_operation_reads_back_from_its_wire_form(op: ops.Steer) -> None:
    body = type(op).body_model().model_validate(op.to_wire())
    assert type(op).from_wire(body, task_id="t1", now=10.0) == op


def test_the_plane_serves_every_route_of_the_table() -> None:
    served = set(openapi_document()["paths"])
    table = [type(op) for op in REPORTS] + [*ops.STEERING, ops.Rerun]
    table += [ops.JournalBefore, ops.JournalAfter, ops.PutEvidence]
    assert {cls.route for cls in table} <= served


def test_every_routed_operation_is_served_by_the_method_it_declares() -> None:
    paths = openapi_document()["paths"]
    routed = [cls for cls in ops.DECLARED if cls.__dict__.get("route")]
    # PauseSchedule's route names its verb: /pause or /resume
    served = [
        (cls, route.replace("{verb}", verb))
        for cls in routed
        for route in [cls.route]
        for verb in (("pause", "resume") if "{verb}" in route else ("",))
    ]
    missing = [route for cls, route in served if cls.method.lower() not in paths.get(route, {})]
    assert len(routed) > 20 and missing == []


def test_the_plane_serves_submitting_recovery_and_the_phone_operations_by_their_method() -> None:
    paths = openapi_document()["paths"]
    table: list[type[ops.Op[Any]]] = [ops.Submit, ops.SubmitWorkflow, ops.Recover]
    table += [phone_ops.HoldPhone, phone_ops.ReleasePhone, phone_ops.RegisterDevice]
    assert all(cls.method.lower() in paths[cls.route] for cls in table)


def test_a_hold_reads_back_from_the_answer_of_its_route() -> None:
    want = Holder("SERIAL", "d1", "host", 7, "phoned run", 10.0, 70.0)
    op = phone_ops.HoldPhone(want)
    assert op.answer_from(op.answer_json(want)) == want
    assert (op.method, op.path(), op.to_wire()["hold_s"]) == (
        "PUT",
        "/v1/devices/SERIAL/hold",
        60.0,
    )


def test_an_offline_prediction_is_what_the_store_answers(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "queue.db"))
    try:
        raw = {"method": "dnd.set", "conversation_id": "conv-a", "params": {"mode": "priority"}}
        task = store.submit(validate_task(raw), time.time())
        claimed = store.claim("d1/SERIAL", "SERIAL", time.time())
        assert claimed is not None and claimed.id == task.id
        for make in (
            lambda t: ops.Start(t, time.time()),
            lambda t: ops.Fail(t, time.time(), Failure(FailureReason.DEVICE_OFFLINE), ("ev-9",)),
        ):
            known = store.get(task.id)
            op = make(known.ticket if known.lease_owner else claimed.ticket)
            predicted = task_record(op.transition(record_row(known), op.now, ops.Offline()).after)
            answered = store.apply(op)
            same = ("state", "state_version", "lease_owner", "failure", "evidence_refs", "attempt")
            for name in same:
                assert getattr(predicted, name) == getattr(answered, name), name
    finally:
        store.close()


def test_a_pause_into_a_state_that_is_no_pause_is_refused_as_it_is_built() -> None:
    from phoned.daemon.lifecycle.errors import IllegalTransition

    with pytest.raises(IllegalTransition):
        ops.Pause(TICKET, 10.0, TaskState.COMPLETED)
    assert dataclasses.is_dataclass(ops.Pause)
