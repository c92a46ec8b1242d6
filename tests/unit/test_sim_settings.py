"""settings tool: outputs and exit codes from SettingsService.MyShellCommand."""

from __future__ import annotations

from pathlib import Path

import pytest

from phoned.sim.android.settings_tool import settings_tool
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import BufferSink, ToolIO

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"


def fixture(name: str) -> str:
    """Fixture body without its leading source comment line."""
    return (FIXTURES / name).read_text(encoding="utf-8").split("\n", 1)[1]


def run(phone: Phone, *args: str) -> tuple[int, str, str]:
    out, err = BufferSink(), BufferSink()
    code = settings_tool(ToolIO(phone, out, err), ["settings", *args])
    return code, out.data.decode(), err.data.decode()


@pytest.mark.parametrize("sdk", [28, 30, 33, 34, 35])
def test_get_put_roundtrip(sdk: int) -> None:
    phone = Phone(sdk=sdk)
    assert run(phone, "put", "system", "screen_off_timeout", "30000") == (0, "", "")
    assert run(phone, "get", "system", "screen_off_timeout") == (0, "30000\n", "")


def test_get_missing_prints_null() -> None:
    assert run(Phone(), "get", "secure", "no_such_key") == (0, "null\n", "")


def test_list_is_sorted_key_equals_value() -> None:
    code, out, _ = run(Phone(), "list", "system")
    lines = out.splitlines()
    assert code == 0
    assert lines == sorted(lines)
    assert "screen_brightness=102" in lines


def test_delete_reports_rows() -> None:
    phone = Phone()
    assert run(phone, "delete", "global", "auto_time") == (0, "Deleted 1 rows\n", "")
    assert run(phone, "delete", "global", "auto_time") == (0, "Deleted 0 rows\n", "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("get", "bogus", "k"), "Invalid namespace 'bogus'\n"),
        (("frob", "global", "k"), "Invalid command: frob\n"),
        (("get", "global"), "Bad arguments\n"),
        (("get", "global", "a", "b"), "Too many arguments\n"),
        (("put", "global", "k", "v", "tag", "nope"), "Argument expected to be 'default'\n"),
        (("--user", "0", "list", "global"), "--user not supported for delete and list.\n"),
        (("--user", "10", "get", "global", "k"), "Invalid user: 10\n"),
    ],
)
def test_errors_go_to_stderr_with_exit_255(args: tuple[str, ...], message: str) -> None:
    assert run(Phone(), *args) == (255, "", message)


def test_help_text_and_exit() -> None:
    code, out, _ = run(Phone())
    assert code == 255
    assert out == fixture("settings-34-help.txt")


def test_put_with_tag_and_default_is_accepted() -> None:
    phone = Phone()
    assert run(phone, "put", "global", "wifi_on", "0", "mytag", "default")[0] == 0
    assert phone.settings.get("global", "wifi_on") == "0"
