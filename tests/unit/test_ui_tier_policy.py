"""The UI tier's approval rule (issue #27 item 2): every changing UI step asks by default,
unless its app is in ``approval.ui_allow_packages``; reads never ask; a task's own
``require_approval`` still asks for an allowed app. Selectors and expectations are refused
at the door naming the field."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from phoned.daemon import config
from phoned.daemon.lifecycle.approval_policy import NO_POLICY, ApprovalPolicy, needs_approval
from phoned.device.actions.registry import REGISTRY, method

NOTES = "com.example.notes"
STEPS = ("ui.tap", "ui.type", "ui.swipe", "ui.scroll", "ui.key")


@dataclass
class Task:
    params: dict[str, Any]
    source: str = "cli"
    spec: dict[str, Any] = field(default_factory=dict)


def test_changing_ui_steps_ask_by_default_and_an_allowed_app_does_not() -> None:
    allowed = ApprovalPolicy.of(ui_allow_packages=[NOTES])
    for name in STEPS:
        declared = method(name)
        assert declared.previews, name
        assert needs_approval(declared, Task({"package": NOTES}), NO_POLICY), name
        assert not needs_approval(declared, Task({"package": NOTES}), allowed), name
        assert needs_approval(declared, Task({"package": "org.other.app"}), allowed), name
        asked = Task({"package": NOTES}, spec={"require_approval": True})
        assert needs_approval(declared, asked, allowed), name
    assert not needs_approval(method("ui.find"), Task({"package": NOTES}), NO_POLICY)
    assert not needs_approval(method("dnd.set"), Task({"mode": "priority"}), NO_POLICY)


def test_the_allow_list_is_config_and_names_real_packages(tmp_path) -> None:
    empty = tmp_path / "phoned.yaml"
    empty.write_text("")
    env = {"PHONED_APPROVAL_UI_ALLOW_PACKAGES": f"{NOTES},org.example.todo"}
    cfg = config.load(empty, environ=env)
    assert cfg.approval.policy.ui_allow_packages == {NOTES, "org.example.todo"}
    with pytest.raises(config.ConfigError, match=r"approval\.ui_allow_packages"):
        config.load(empty, environ={"PHONED_APPROVAL_UI_ALLOW_PACKAGES": "not a package"})


@pytest.mark.parametrize(
    ("params", "field_name"),
    [
        ({"package": NOTES, "selector": {"text": "Save"}}, "expect"),
        ({"package": NOTES, "selector": {}, "expect": {"package": NOTES}}, "selector"),
        ({"package": NOTES, "selector": {"text": "a\x00b"}, "expect": {"package": NOTES}},
         "selector.text"),
        ({"package": NOTES, "selector": {"text": "x" * 501}, "expect": {"package": NOTES}},
         "selector.text"),
        ({"package": NOTES, "selector": {"text": "Save"}, "expect": {}}, "expect"),
        ({"selector": {"text": "Save"}, "expect": {"package": NOTES}}, "package"),
        ({"package": "x; rm -rf /", "selector": {"text": "Save"}, "expect": {"package": NOTES}},
         "package"),
    ],
)  # fmt: skip
def test_bad_steps_are_refused_at_the_door_naming_the_field(
    params: dict[str, Any], field_name: str
) -> None:
    checked = REGISTRY["ui.tap"].validate(params)
    assert isinstance(checked, tuple) and checked[0] == field_name, checked


def test_a_key_outside_the_fixed_set_is_refused() -> None:
    checked = REGISTRY["ui.key"].validate(
        {"package": NOTES, "key": "power", "expect": {"package": NOTES}}
    )
    assert isinstance(checked, tuple) and checked[0] == "key"
