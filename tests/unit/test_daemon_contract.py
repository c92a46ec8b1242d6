"""Task contract validation and the seed-004 ingress mapping."""

from __future__ import annotations

from typing import Any

import pytest
from seed004_examples import SEED004_TASK, SEED004_WORKFLOW

from phoned.daemon.lifecycle.contract import TaskSpec, WorkflowSpec, validate_task
from phoned.daemon.lifecycle.errors import InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress


def _fields(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidTask) as err:
        parse_ingress(raw)
    return [e["field"] for e in err.value.errors]


def _task(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"method": method, "params": params, "conversation_id": "c1"}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("dnd.set", {"mode": "total_silence"}),
        ("dnd.get", {}),
        ("bluetooth.set", {"enabled": False}),
        ("bluetooth.get", {}),
        ("volume.set", {"stream": "voice_call", "level": 0}),
        ("volume.set", {"stream": "music", "percent": 100}),
        ("volume.get", {"stream": "alarm"}),
        ("sms.draft", {"to": "0151123456", "body": "Привет\nвторая строка 👋"}),
        ("sms.send", {"to": "+821012345678", "body": "x" * 10000}),
        (
            "permission.check",
            {"package": "com.example.app", "permission": "android.permission.SEND_SMS"},
        ),
        ("permission.request", {"package": "com.example.app", "special": "dnd_access"}),
        (
            "permission.request",
            {
                "package": "com.example.app",
                "special": "notification_listener",
                "component": "com.example.app/.Listener",
            },
        ),
        ("screen.snapshot", {}),
    ],
)
def test_valid_params_are_accepted(method: str, params: dict[str, Any]) -> None:
    spec = validate_task(_task(method, params))
    assert spec.method == method and spec.params == params


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("dnd.set", {"mode": "loud"}, "params.mode"),
        ("dnd.set", {}, "params.mode"),
        ("dnd.get", {"mode": "off"}, "params.mode"),
        ("bluetooth.set", {"enabled": "yes"}, "params.enabled"),
        ("volume.set", {"stream": "music"}, "params.level"),  # the model's rule names a field
        ("volume.set", {"stream": "music", "level": 3, "percent": 3}, "params.level"),
        ("volume.set", {"stream": "music", "percent": 101}, "params.percent"),
        ("volume.set", {"stream": "music", "level": -1}, "params.level"),
        ("volume.set", {"stream": "radio", "level": 1}, "params.stream"),
        ("sms.send", {"to": "+49 151; reboot", "body": "x"}, "params.to"),
        ("sms.send", {"to": "+4915112345678", "body": ""}, "params.body"),
        ("sms.send", {"to": "+4915112345678", "body": "x" * 10001}, "params.body"),
        ("permission.check", {"package": "com.example.app"}, "params.permission"),
        (
            "permission.request",
            {"package": "x", "permission": "android.permission.CAMERA"},
            "params.package",
        ),
        (
            "permission.request",
            {"package": "com.a.b", "special": "notification_listener"},
            "params.special",
        ),
    ],
)
def test_invalid_params_name_the_field(method: str, params: dict[str, Any], field: str) -> None:
    assert field in _fields(_task(method, params))


def test_unknown_method_and_extra_fields_are_refused() -> None:
    assert _fields(_task("phone.call", {})) == ["method"]
    assert "colour" in _fields({**_task("dnd.get", {}), "colour": "red"})
    assert "source" in _fields({**_task("dnd.get", {}), "source": "email"})
    assert "conversation_id" in _fields({"method": "dnd.get"})


def test_defaults_follow_the_spec() -> None:
    spec = validate_task(_task("dnd.get", {}))
    assert (spec.contract_version, spec.max_attempts, spec.wait_policy) == (
        "a2a-task-orchestration-v1", 2, "completed",
    )  # fmt: skip
    assert (spec.timeouts.dispatch_s, spec.timeouts.run_s) == (300.0, 600.0)
    assert (spec.timeouts.approval_ttl_s, spec.timeouts.permission_ttl_s) == (900.0, 600.0)


def test_seed004_task_maps_every_field() -> None:
    spec = parse_ingress(SEED004_TASK)
    assert isinstance(spec, TaskSpec)
    assert (spec.method, spec.workflow_id, spec.step_id, spec.plan_id, spec.output_key) == (
        "dnd.set", "wf_voice_001", "step_quiet", "plan_meeting", "dnd_result",
    )  # fmt: skip
    assert spec.execution_mode == "async"


def test_seed004_workflow_keeps_order_and_repeated_methods() -> None:
    spec = parse_ingress(
        {**SEED004_WORKFLOW, "payload": {"subTasks": SEED004_WORKFLOW["subTasks"]}}
    )
    assert isinstance(spec, WorkflowSpec)
    assert [s.method for s in spec.steps] == ["volume.set", "dnd.set", "volume.set"]
    assert spec.steps[2].params == {"stream": "music", "level": 3}
    assert spec.steps[0].completion_target == "volume.ring.0"
    assert (spec.source, spec.queue, spec.force_task_manager, spec.workflow_name) == (
        "cloud", "workflow", True, "meeting_prep",
    )  # fmt: skip


def test_seed004_errors_name_the_subtask_field() -> None:
    bad = {**SEED004_WORKFLOW, "subTasks": [{"taskMethod": "dnd.set", "mode": "loud"}]}
    assert _fields(bad) == ["subTasks.0.mode"]  # the field as submitted (#13 item 9)
    mirror = {**SEED004_WORKFLOW, "taskQueue": "state"}
    assert "taskQueue" in _fields(mirror)
    payload = {**SEED004_WORKFLOW, "payload": {"subTasks": []}}
    assert "payload.subTasks" in _fields(payload)
    assert "subTasks" in _fields({**SEED004_WORKFLOW, "subTasks": []})
