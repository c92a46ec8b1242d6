"""The method registry, pinned: every method with every fact the daemon keeps about it.

A changed fact (a method that now needs approval, a param that stops being sensitive) is a
visible diff in this one table (``docs/methods-registry.md``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.planning.device_context import supported_methods as supported_on
from phoned.device.actions import supported_methods
from phoned.device.actions.method import Method
from phoned.device.actions.registry import (
    APPROVAL_METHODS,
    METHOD_PARAMS,
    NON_IDEMPOTENT,
    REGISTRY,
    SCREEN_METHODS,
)
from phoned.device.connection import Capabilities

# name: (params model, action, reconciler, approval, idempotent, screen, sensitive)
PINNED: dict[str, tuple[str, str, str | None, bool, bool, bool, tuple[str, ...]]] = {
    "dnd.set": ("DndSet", "dnd.set_mode", "dnd.reconcile", False, True, False, ()),
    "dnd.get": ("NoParams", "dnd.get", None, False, True, False, ()),
    "bluetooth.set": ("BluetoothSet", "bluetooth.set_enabled", "bluetooth.reconcile", False, True, False, ()),
    "bluetooth.get": ("NoParams", "bluetooth.get", None, False, True, False, ()),
    "volume.set": ("VolumeSet", "volume.set_level", "volume.reconcile", False, True, False, ()),
    "volume.get": ("VolumeGet", "volume.get", None, False, True, False, ()),
    "wifi.set": ("WifiSet", "wifi.set_enabled", "wifi.reconcile", False, True, False, ()),
    "wifi.get": ("NoParams", "wifi.get", None, False, True, False, ()),
    "sms.draft": ("Sms", "sms.draft", "sms.reconcile", False, True, True, ("to", "body", "contact")),
    "sms.send": ("Sms", "sms_send.send", "sms_send.reconcile", True, False, True, ("to", "body", "contact")),
    "permission.check": ("Permission", "permission.check", None, False, True, False, ()),
    "permission.request": ("Permission", "permission.request", "permission.reconcile", False, True, False, ()),
    "screen.snapshot": ("NoParams", "screen.snapshot", None, False, True, False, ()),
    "brightness.set": ("BrightnessSet", "brightness.set_brightness", "brightness.reconcile", False, True, False, ()),
    "brightness.get": ("NoParams", "brightness.get", None, False, True, False, ()),
    "app.open": ("AppOpen", "apps.open_app", "apps.reconcile_open", False, True, False, ()),
    "app.close": ("AppClose", "apps.close_app", "apps.reconcile_close", False, True, False, ()),
    "app.list": ("NoParams", "apps.list_apps", None, False, True, False, ()),
    "contacts.find": ("ContactsFind", "contacts_find.find", None, False, True, False, ("name",)),
    "notifications.list": ("NotificationsList", "notifications.list_notifications", None, False, True, False, ()),
    "ui.find": ("UiFind", "ui_find.find", None, False, True, True, ()),
    "ui.handoff": ("UiHandoff", "ui_handoff.handoff", None, False, True, False, ()),
    "ui.tap": ("UiTap", "ui_tap.tap", "ui_step.reconcile", False, False, True, ()),
    "ui.type": ("UiType", "ui_type.type_text", "ui_type.reconcile", False, True, True, ("text",)),
    "ui.swipe": ("UiSwipe", "ui_swipe.swipe", "ui_step.reconcile", False, False, True, ()),
    "ui.scroll": ("UiScroll", "ui_swipe.scroll", "ui_swipe.reconcile_scroll", False, True, True, ()),
    "ui.key": ("UiKey", "ui_key.press", "ui_step.reconcile", False, False, True, ()),
}  # fmt: skip


def _where(fn: Any) -> str | None:
    if fn is None:
        return None
    return f"{fn.__module__.rpartition('.')[2]}.{fn.__name__}"


def _facts(m: Method[Any]) -> tuple[Any, ...]:
    return (
        m.params.__name__,
        _where(m.run),
        _where(m.reconcile),
        m.approval,
        m.idempotent,
        m.screen,
        m.sensitive,
    )


def test_the_registry_is_pinned() -> None:
    facts = {name: _facts(m) for name, m in REGISTRY.items()}
    missing = {name: f for name, f in facts.items() if name not in PINNED}
    assert not missing, f"add to PINNED in tests/unit/test_method_registry.py: {missing}"
    assert facts == PINNED


# Where every method must show up besides its module, and what to add when it does not.
REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((REPO / "tests" / "scenarios").glob("test_device_*.py"))


def _pieces(name: str) -> dict[str, bool]:
    """What each piece of a method is: whether it is there."""
    scenario_text = "".join(path.read_text(encoding="utf-8") for path in SCENARIOS)
    return {
        f"examples/{name}.yaml (a task file tests/integration/test_examples.py runs)": (
            REPO / "examples" / f"{name}.yaml"
        ).is_file(),
        f"a scenario test running {name!r} through the `dut` fixture in "
        "tests/scenarios/test_device_<module>.py": f'"{name}"' in scenario_text,
        f"a row naming {name} in docs/actions.md": name
        in (REPO / "docs" / "actions.md").read_text(encoding="utf-8"),
        f"`{name}` in README.md's method list": f"`{name}`"
        in (REPO / "README.md").read_text(encoding="utf-8"),
    }


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_method_has_its_example_scenario_and_docs(name: str) -> None:
    missing = [piece for piece, there in _pieces(name).items() if not there]
    assert not missing, f"{name}: add " + "; ".join(missing)


def test_a_method_without_its_pieces_is_named_with_what_to_add() -> None:
    missing = [piece for piece, there in _pieces("lamp.set").items() if not there]
    assert len(missing) == 4 and "examples/lamp.set.yaml" in missing[0]


def test_every_table_is_built_from_the_registry() -> None:
    assert supported_methods() == sorted(PINNED)
    assert set(METHOD_PARAMS) == set(PINNED)
    assert {n for n, f in PINNED.items() if f[3]} == APPROVAL_METHODS
    assert {n for n, f in PINNED.items() if not f[4]} == NON_IDEMPOTENT
    assert {n for n, f in PINNED.items() if f[5]} == SCREEN_METHODS


def _caps(set_dnd: bool, services: frozenset[str]) -> Capabilities:
    return Capabilities(
        {
            "shell_v2": True,
            "set_dnd": set_dnd,
            "cmd_bluetooth_manager": True,
            "cmd_media_session": True,
            "services": services,
        }
    )


@pytest.mark.parametrize(
    ("set_dnd", "services", "missing"),
    [
        (True, frozenset({"bluetooth_manager", "audio", "wifi"}), set()),
        (False, frozenset({"bluetooth_manager", "audio", "wifi"}), {"dnd.set"}),
        (True, frozenset({"audio", "wifi"}), {"bluetooth.set", "bluetooth.get"}),
        (True, frozenset({"bluetooth_manager", "wifi"}), {"volume.set", "volume.get"}),
        (True, frozenset({"bluetooth_manager", "audio"}), {"wifi.set", "wifi.get"}),
    ],
)
def test_needs_decide_what_a_phone_supports(
    set_dnd: bool, services: frozenset[str], missing: set[str]
) -> None:
    assert supported_on(_caps(set_dnd, services)) == frozenset(PINNED) - missing


@pytest.mark.parametrize(
    ("method", "params", "observed", "name"),
    [
        ("dnd.set", {"mode": "alarms"}, 3, "dnd.alarms"),
        ("dnd.get", {}, "priority", "dnd.priority"),
        ("bluetooth.get", {}, {"enabled": True, "state": "ON", "bluetooth_on": 1}, "bluetooth.on"),
        ("volume.set", {"stream": "ring", "level": 4}, 4, "volume.ring.4"),
        ("wifi.set", {"enabled": False}, "disabled", "wifi.off"),
        ("wifi.get", {}, {"enabled": True, "state": "enabled"}, "wifi.on"),
        ("sms.draft", {}, None, "sms.drafted"),
        ("sms.send", {}, None, "sms.sent"),
        ("permission.check", {}, {"granted": True}, "permission.granted"),
        ("screen.snapshot", {}, {"any": 1}, "screen.snapshot"),
        ("brightness.set", {"level": 77}, {"level": 77, "auto": False}, "brightness.77"),
        ("brightness.get", {}, {"level": 102, "auto": True}, "brightness.auto"),
    ],
)
def test_each_method_names_its_target(
    method: str, params: dict[str, Any], observed: Any, name: str
) -> None:
    assert REGISTRY[method].target(params, observed) == name


def test_a_method_module_is_found_without_being_listed(tmp_path: Path) -> None:
    """A new module in device/methods with a DECLARED tuple is a method everywhere."""
    (tmp_path / "lamp.py").write_text(
        "from phoned.device.actions.method import Method, fixed\n"
        "from phoned.device.actions.params import NoParams\n"
        "def get(ctx, params): ...\n"
        "DECLARED = (Method('lamp.get', NoParams, get, fixed('lamp.on')),)\n"
    )
    code = (
        "import sys, phoned.device.methods as a; a.__path__.append(sys.argv[1]); "
        "from phoned.device.actions import supported_methods; "
        "from phoned.device.actions.registry import METHOD_MODULES, METHOD_PARAMS; "
        "print('lamp.get' in supported_methods(), METHOD_PARAMS['lamp.get'].__name__, "
        "*[m.__name__ for m in METHOD_MODULES if m.__name__.endswith('lamp')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "NoParams", "phoned.device.methods.lamp"]


def test_an_unknown_method_is_a_value_error_naming_the_known_ones() -> None:
    from phoned.device.actions.registry import method

    with pytest.raises(ValueError, match=r"dnd\.set"):
        method("dnd.toggle")


@pytest.mark.parametrize(
    ("method", "params", "field", "message"),
    [
        ("volume.set", {"stream": "music", "level": 3, "percent": 5}, "level",
         "give exactly one of level or percent"),
        ("brightness.set", {"level": 3, "auto": True}, "auto",
         "give exactly one of level or auto, not both"),
        ("brightness.set", {}, "level", "give exactly one of level or auto"),
        ("brightness.set", {"level": 300}, "level", "Input should be less than or equal to 255"),
    ],
)  # fmt: skip
def test_ingress_and_the_action_name_the_same_field_with_the_same_message(
    method: str, params: dict[str, object], field: str, message: str
) -> None:
    """One way to name what is wrong with params: the submit (``validate_task``) and the
    action's own check (``Method.validate``) agree, without pydantic's ``Value error,``."""
    from phoned.daemon.lifecycle.contract import validate_task
    from phoned.daemon.lifecycle.errors import InvalidTask

    assert REGISTRY[method].validate(params) == (field, message)
    with pytest.raises(InvalidTask) as refused:
        validate_task({"method": method, "conversation_id": "c", "params": params})
    assert [(e["field"], e["message"]) for e in refused.value.errors] == [
        (f"params.{field}", message)
    ]
