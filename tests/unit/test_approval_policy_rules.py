"""The approval policy (issue #26 item 3): one decision of (method, task, policy), the
door's and the config's refusals, and the card's fields (item 4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from phoned.daemon import config
from phoned.daemon.lifecycle.approval_policy import (
    NO_POLICY,
    ApprovalPolicy,
    needs_approval,
    unpreviewable,
)
from phoned.daemon.lifecycle.contract import RATIONALE_MAX
from phoned.daemon.lifecycle.errors import InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.mcp.server import question
from phoned.daemon.planning.catalogue import example_params
from phoned.daemon.rendering.approval_view import AFTER_DENIAL, approval_card, approval_lines
from phoned.daemon.rendering.terminal import terminal_text
from phoned.device.actions.method import Method, fixed
from phoned.device.actions.params import NoParams
from phoned.device.actions.registry import REGISTRY, method


@dataclass
class Task:
    source: str = "cli"
    spec: dict[str, Any] = field(default_factory=dict)


def test_a_read_never_asks_whatever_the_task_or_the_policy_say() -> None:
    everything = ApprovalPolicy.of(REGISTRY, ["cli", "voice", "cloud", "schedule"])
    for name, declared in REGISTRY.items():
        if not declared.changes:
            task = Task("voice", {"require_approval": True})
            assert not needs_approval(declared, task, everything), name


def test_sms_send_always_asks_and_setting_changes_ask_when_someone_wants_it() -> None:
    assert needs_approval(method("sms.send"), Task(), NO_POLICY)
    dnd = method("dnd.set")
    assert not needs_approval(dnd, Task(), NO_POLICY)
    assert needs_approval(dnd, Task(spec={"require_approval": True}), NO_POLICY)
    assert needs_approval(dnd, Task(), ApprovalPolicy.of(["dnd.set"]))
    assert not needs_approval(dnd, Task(), ApprovalPolicy.of(["wifi.set"]))
    assert needs_approval(dnd, Task("voice"), ApprovalPolicy.of(sources=["voice"]))
    assert not needs_approval(dnd, Task("cloud"), ApprovalPolicy.of(sources=["voice"]))


# A changing method that shows no preview (the rule is about any such method, whichever
# the registry still has).
LAMP = Method("lamp.set", NoParams, lambda ctx, p: None, fixed("lamp"), changes="the lamp")  # type: ignore[arg-type,return-value]
PREVIEWED = ("bluetooth.set", "app.open", "app.close", "permission.request")


def _unpreviewed() -> str | None:
    """A method of the registry that changes the phone and shows no preview, if any."""
    return next((n for n, m in REGISTRY.items() if m.changes and not (m.previews or m.approval)),
                None)  # fmt: skip


def test_a_change_without_a_preview_caught_by_the_source_policy_is_not_run() -> None:
    voice = ApprovalPolicy.of(sources=["voice"])
    why = unpreviewable(LAMP, Task("voice"), voice)
    assert why is not None and "cannot show a preview" in why
    assert unpreviewable(LAMP, Task("cli"), voice) is None
    assert unpreviewable(method("dnd.set"), Task("voice"), voice) is None
    assert unpreviewable(method("sms.send"), Task("voice"), voice) is None


@pytest.mark.parametrize("name", PREVIEWED)
def test_bluetooth_apps_and_permission_requests_now_show_a_preview_and_can_ask(name: str) -> None:
    declared = method(name)
    assert declared.previews
    voice = ApprovalPolicy.of(sources=["voice"])
    assert needs_approval(declared, Task("voice"), voice)
    assert unpreviewable(declared, Task("voice"), voice) is None
    assert needs_approval(declared, Task(spec={"require_approval": True}), NO_POLICY)
    assert not needs_approval(declared, Task(), NO_POLICY)
    params = {
        "bluetooth.set": {"enabled": True},
        "permission.request": {"package": "com.example.notes", "special": "dnd_access"},
    }.get(name, {"package": "com.example.notes"})
    spec = parse_ingress(
        {"conversation_id": "c", "method": name, "params": params, "require_approval": True}
    )
    assert spec.require_approval  # type: ignore[union-attr]
    assert config.load(None, flags={"approval": {"methods": [name]}}, environ={})


def test_require_approval_of_a_read_is_refused_at_the_door() -> None:
    with pytest.raises(InvalidTask) as caught:
        parse_ingress({"conversation_id": "c", "require_approval": True, "method": "dnd.get"})
    (error,) = caught.value.errors
    assert error["field"] == "require_approval" and "only reads the phone" in error["message"]


def test_require_approval_of_a_change_without_a_preview_is_refused_at_the_door() -> None:
    name = _unpreviewed()
    if name is None:
        pytest.skip("every changing method shows a preview")
    with pytest.raises(InvalidTask) as caught:
        parse_ingress({"conversation_id": "c", "require_approval": True, "method": name,
                       "params": example_params(name)})  # fmt: skip
    errors = [e for e in caught.value.errors if e["field"] == "require_approval"]
    assert errors and "cannot show a preview" in errors[0]["message"]


def test_rationale_is_kept_verbatim_and_bounded() -> None:
    text = "Встреча в 8 <b>&amp;</b> \x1b[31m 회의"
    spec = parse_ingress(
        {"conversation_id": "c", "method": "dnd.set", "params": {"mode": "off"}, "rationale": text}
    )
    assert spec.rationale == text  # type: ignore[union-attr]
    with pytest.raises(InvalidTask) as caught:
        parse_ingress(
            {"conversation_id": "c", "method": "dnd.set", "params": {"mode": "off"},
             "rationale": "x" * (RATIONALE_MAX + 1)}
        )  # fmt: skip
    assert caught.value.errors[0]["field"] == "rationale"


def test_seed004_shape_maps_require_approval_and_rationale() -> None:
    spec = parse_ingress(
        {"taskMethod": "dnd.set", "conversation_id": "c", "params": {"mode": "priority"},
         "requireApproval": True, "rationale": "why"}
    )  # fmt: skip
    assert spec.require_approval and spec.rationale == "why"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"methods": ["dnd.sett"]}, "unknown method 'dnd.sett'"),
        ({"methods": ["dnd.get"]}, "only reads the phone"),
        ({"sources": ["phone"]}, "unknown source 'phone'"),
    ],
)
def test_a_bad_policy_is_a_config_error_naming_the_key(
    section: dict[str, Any], message: str
) -> None:
    with pytest.raises(config.ConfigError) as caught:
        config.load(None, flags={"approval": section}, environ={})
    key = next(iter(section))
    assert caught.value.key == f"approval.{key}" and message in str(caught.value)


def test_the_policy_from_file_and_environment() -> None:
    cfg = config.load(
        None,
        environ={"PHONED_APPROVAL_METHODS": "dnd.set,wifi.set", "PHONED_APPROVAL_SOURCES": "voice"},
    )
    assert cfg.approval.policy == ApprovalPolicy.of(["dnd.set", "wifi.set"], ["voice"])
    assert config.load(None, environ={}).approval.policy == NO_POLICY


@dataclass
class Record:
    conversation_id: str = "conv-1"
    source: str = "voice"
    spec: dict[str, Any] = field(default_factory=dict)
    id: str = "t1"
    revision: int = 1
    approval_digest: str = "sha256:abc"
    method: str = "dnd.set"


PREVIEW = {
    "effect": "dnd.set",
    "target": "zen_mode",
    "data": {
        "before": "0 (off)",
        "after": "1 (priority)",
        "change": "zen_mode 0 (off) -> 1 (priority)",
    },
    "snapshot_digest": "sha256:def",
}
HOSTILE = "<img src=x onerror=alert(1)> \x1b[2J\x07 line\nnext"


def test_the_card_names_origin_rationale_what_whom_data_and_the_denial() -> None:
    card = approval_card(Record(spec={"rationale": HOSTILE}), PREVIEW)  # type: ignore[arg-type]
    assert card["conversation_id"] == "conv-1" and card["source"] == "voice"
    assert card["rationale"] == HOSTILE  # verbatim in JSON: a string, escaped by the encoder
    assert (card["effect"], card["target"]) == ("dnd.set", "zen_mode")
    assert card["change"] == "zen_mode 0 (off) -> 1 (priority)"
    assert card["data"] == PREVIEW["data"]
    assert card["after_denial"] == AFTER_DENIAL and card["can_continue_after_denial"] is False


def test_show_and_mcp_neutralise_the_rationale() -> None:
    record = Record(spec={"rationale": HOSTILE})
    pending = {
        **approval_card(record, PREVIEW),  # type: ignore[arg-type]
        "recipient": "zen_mode", "text": None, "app": None, "screenshot": None,
        "revision": 1, "digest": "sha256:abc", "deadline": None,
        "approve_command": "phoned approve t1", "deny_command": "phoned deny t1",
    }  # fmt: skip
    lines = [terminal_text(line) for line in approval_lines(pending)]
    shown = "\n".join(lines)
    assert "\x1b" not in shown and "\x07" not in shown
    assert any(line.startswith("  rationale   '<img src=x") for line in lines)
    assert "from        conversation conv-1, source voice" in shown
    assert "change      zen_mode 0 (off) -> 1 (priority)" in shown
    assert f"if denied   {AFTER_DENIAL}" in shown
    asked = question(record, PREVIEW)  # type: ignore[arg-type]
    assert "\x1b" not in asked and "\\x1b[2J" in asked
    assert "change: zen_mode 0 (off) -> 1 (priority)" in asked
    assert AFTER_DENIAL in asked and "source voice" in asked


def test_classify_says_a_task_asking_for_approval_needs_it() -> None:
    from phoned.daemon.planning.classify import classify_ingress

    raw = {"conversation_id": "c", "method": "dnd.set", "params": {"mode": "off"}}
    assert classify_ingress(raw).needs_approval is False
    assert classify_ingress({**raw, "require_approval": True}).needs_approval is True


def test_a_workflow_step_asking_approval_of_a_read_is_refused_naming_the_step() -> None:
    workflow = {
        "conversation_id": "c",
        "steps": [
            {"method": "dnd.set", "params": {"mode": "off"}, "require_approval": True},
            {"method": "dnd.get", "require_approval": True},
        ],
    }
    with pytest.raises(InvalidTask) as caught:
        parse_ingress(workflow)
    assert [e["field"] for e in caught.value.errors] == ["steps.1.require_approval"]
    workflow["steps"].pop()
    spec = parse_ingress({**workflow, "steps": [{**workflow["steps"][0], "rationale": "why"}]})
    assert spec.steps[0].require_approval and spec.steps[0].rationale == "why"  # type: ignore[union-attr]
