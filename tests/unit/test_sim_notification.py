"""cmd notification / zen quirks, checked against NotificationShellCmd and ZenModeHelper."""

from __future__ import annotations

from pathlib import Path

import pytest

from phoned.sim.android.notification import cmd_notification, dumpsys_notification
from phoned.sim.android.settings_tool import settings_tool
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import BufferSink, ToolIO

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8").split("\n", 1)[1]


def cmd(phone: Phone, *args: str) -> tuple[int, str]:
    out = BufferSink()
    code = cmd_notification(ToolIO(phone, out, BufferSink()), ["notification", *args])
    return code, out.data.decode()


def settings(phone: Phone, *args: str) -> str:
    out = BufferSink()
    assert settings_tool(ToolIO(phone, out, BufferSink()), ["settings", *args]) == 0
    return out.data.decode()


class Clock:
    """A controllable phone.now()."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.mark.parametrize(
    ("word", "zen"), [("on", 2), ("none", 2), ("priority", 1), ("alarms", 3), ("off", 0)]
)
@pytest.mark.parametrize("sdk", [30, 33, 34, 35])
def test_set_dnd_words(sdk: int, word: str, zen: int) -> None:
    phone = Phone(sdk=sdk)
    phone.notification.set_zen(1)
    assert cmd(phone, "set_dnd", word) == (0, "")
    assert phone.notification.zen_mode == zen
    assert settings(phone, "get", "global", "zen_mode") == f"{zen}\n"


def test_set_dnd_missing_on_28() -> None:
    phone = Phone(sdk=28)
    assert cmd(phone, "set_dnd", "on") == (255, "Unknown command: set_dnd\n")
    assert phone.notification.zen_mode == 0


def test_unknown_mode_exits_0_and_changes_nothing() -> None:
    phone = Phone(sdk=34)
    phone.notification.set_zen(3)
    code, out = cmd(phone, "set_dnd", "bogus")
    assert (code, out) == (0, "Error occurred. Check logcat for details. Invalid filter: 0\n")
    assert phone.notification.zen_mode == 3


def test_missing_mode_argument() -> None:
    code, out = cmd(Phone(sdk=33), "set_dnd")
    assert code == 0
    assert out == 'Error occurred. Check logcat for details. Argument expected after "set_dnd"\n'


def test_dnd_noop_fault() -> None:
    phone = Phone(sdk=34)
    phone.faults.dnd_noop = True
    assert cmd(phone, "set_dnd", "priority") == (0, "")
    assert phone.notification.zen_mode == 0


def test_settings_put_zen_mode_is_reverted(monkeypatch: pytest.MonkeyPatch) -> None:
    phone = Phone(sdk=34)
    clock = Clock()
    monkeypatch.setattr(phone, "now", clock)
    settings(phone, "put", "global", "zen_mode", "1")
    assert settings(phone, "get", "global", "zen_mode") == "1\n"  # visible at first
    clock.t += 0.05
    assert settings(phone, "get", "global", "zen_mode") == "1\n"
    clock.t += phone.notification.REVERT_DELAY_S
    assert settings(phone, "get", "global", "zen_mode") == "0\n"  # ZenModeHelper put it back
    assert phone.notification.zen_mode == 0


@pytest.mark.parametrize(
    ("sdk", "name"),
    [
        (28, "cmd_notification-28-help.txt"),
        (30, "cmd_notification-30-help.txt"),
        (33, "cmd_notification-33-help.txt"),
        (34, "cmd_notification-33-help.txt"),
        (35, "cmd_notification-35-help.txt"),
    ],
)
def test_help_text_per_sdk(sdk: int, name: str) -> None:
    code, out = cmd(Phone(sdk=sdk), "help")
    assert code == 255
    assert out == fixture(name)


def test_listener_and_dnd_access_edit_secure_settings() -> None:
    phone = Phone(sdk=34)
    assert cmd(phone, "allow_listener", "com.example/.Listener") == (0, "")
    assert phone.notification.listeners() == ["com.example/com.example.Listener"]
    assert cmd(phone, "allow_dnd", "com.example") == (0, "")
    assert settings(phone, "get", "secure", "enabled_notification_policy_access_packages") == (
        "com.example\n"
    )
    assert cmd(phone, "disallow_listener", "com.example/.Listener") == (0, "")
    assert cmd(phone, "disallow_dnd", "com.example") == (0, "")
    assert phone.notification.listeners() == []
    assert phone.notification.dnd_access_packages() == []


def test_invalid_listener() -> None:
    assert cmd(Phone(), "allow_listener", "nocomponent") == (
        255,
        "Invalid listener - must be a ComponentName\n",
    )


@pytest.mark.parametrize(("sdk", "policy"), [(28, False), (34, True)])
def test_dumpsys_zen_section(sdk: int, policy: bool) -> None:
    phone = Phone(sdk=sdk)
    phone.notification.set_zen(3)
    cmd(phone, "allow_listener", "com.example/.L")
    out = BufferSink()
    assert dumpsys_notification(ToolIO(phone, out, BufferSink()), ["notification"]) == 0
    text = out.data.decode()
    assert "\n  Zen Mode:\n    mZenMode=ZEN_MODE_ALARMS\n" in text
    assert ("mConsolidatedPolicy=" in text) is policy
    assert "      ComponentInfo{com.example/com.example.L}\n" in text
