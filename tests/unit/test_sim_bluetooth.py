"""Bluetooth: async transitions, per-SDK tools, no_bluetooth fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from device.sim.phone import Phone
from device.sim.registry import BufferSink, Tool, ToolIO
from device.sim.services.bluetooth import (
    cmd_bluetooth_manager,
    dumpsys_bluetooth_manager,
    svc_bluetooth,
)
from device.sim.services.settings_tool import settings_tool

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8").split("\n", 1)[1]


class Clock:
    def __init__(self) -> None:
        self.t = 500.0

    def __call__(self) -> float:
        return self.t


def call(fn: Tool, phone: Phone, argv: list[str]) -> tuple[int, str, str]:
    out, err = BufferSink(), BufferSink()
    code = fn(ToolIO(phone, out, err), argv)
    return code, out.data.decode(), err.data.decode()


def bt_on(phone: Phone) -> str:
    return call(settings_tool, phone, ["settings", "get", "global", "bluetooth_on"])[1]


def state_line(phone: Phone) -> str:
    text = call(dumpsys_bluetooth_manager, phone, ["bluetooth_manager"])[1]
    return next(line for line in text.splitlines() if line.startswith("  state: "))


@pytest.fixture
def clocked(monkeypatch: pytest.MonkeyPatch) -> tuple[Phone, Clock]:
    phone = Phone(sdk=34)
    clock = Clock()
    monkeypatch.setattr(phone, "now", clock)
    phone.bluetooth._since = float("-inf")
    return phone, clock


def test_enable_goes_through_turning_on(clocked: tuple[Phone, Clock]) -> None:
    phone, clock = clocked
    code, out, _ = call(cmd_bluetooth_manager, phone, ["bluetooth_manager", "enable"])
    assert (code, out) == (0, "BluetoothShellCommand: Exec enable\nenable: Success\n")
    assert state_line(phone) == "  state: TURNING_ON"
    assert bt_on(phone) == "0\n"
    clock.t += phone.bluetooth.TURN_ON_S
    assert state_line(phone) == "  state: ON"
    assert bt_on(phone) == "1\n"
    assert phone.bluetooth.enabled


def test_disable_goes_through_turning_off(clocked: tuple[Phone, Clock]) -> None:
    phone, clock = clocked
    phone.bluetooth.request_enable()
    clock.t += 5
    assert call(svc_bluetooth, phone, ["bluetooth", "disable"])[0] == 0
    assert phone.bluetooth.state == "TURNING_OFF"
    clock.t += phone.bluetooth.TURN_OFF_S
    assert phone.bluetooth.state == "OFF"
    assert bt_on(phone) == "0\n"


@pytest.mark.parametrize("sdk", [28, 30])
def test_old_sdks_have_no_shell_command_but_svc_works(sdk: int) -> None:
    phone = Phone(sdk=sdk)
    code, out, err = call(cmd_bluetooth_manager, phone, ["bluetooth_manager", "enable"])
    assert (code, out, err) == (0, "", "No shell command implementation.\n")
    assert call(svc_bluetooth, phone, ["bluetooth", "enable"]) == (0, "", "")
    assert phone.bluetooth.state == "TURNING_ON"
    text = call(dumpsys_bluetooth_manager, phone, ["bluetooth_manager"])[1]
    assert "  address: F8:0F:F9:3A:82:10\n" in text
    assert "0 BLE appsregistered\n" in text


def test_svc_jar_bad_verb_still_exits_0() -> None:
    code, _, err = call(svc_bluetooth, Phone(sdk=28), ["bluetooth", "toggle"])
    assert code == 0
    assert err.startswith("Control Bluetooth service\n\nusage: svc bluetooth [enable|disable]\n")


def test_svc_script_usage_exit_1_on_33() -> None:
    code, out, _ = call(svc_bluetooth, Phone(sdk=33), ["bluetooth", "toggle"])
    assert code == 1
    assert out.startswith("Control the Bluetooth manager\n\n")


@pytest.mark.parametrize(
    ("sdk", "name"),
    [(33, "cmd_bluetooth_manager-33-help.txt"), (34, "cmd_bluetooth_manager-34-help.txt")],
)
def test_help(sdk: int, name: str) -> None:
    code, out, _ = call(cmd_bluetooth_manager, Phone(sdk=sdk), ["bluetooth_manager", "-h"])
    assert (code, out) == (255, fixture(name))


def test_dumpsys_modern_layout_masks_address() -> None:
    phone = Phone(sdk=35)
    phone.bluetooth.request_enable()
    text = call(dumpsys_bluetooth_manager, phone, ["bluetooth_manager"])[1]
    assert text.startswith("Bluetooth Status\n  enabled: false\n  state: TURNING_ON\n")
    assert "  address: XX:XX:XX:XX:82:10\n  name: Pixel 8\n  time since enabled: 00:00:" in text
    assert "\tPackage [com.android.shell] requested to [Enable]. \tReason is " in text
    assert "Number of Ble app registered: 0\n" in text


def test_never_enabled() -> None:
    text = call(dumpsys_bluetooth_manager, Phone(sdk=30), ["bluetooth_manager"])[1]
    assert "\nBluetooth never enabled!\n" in text
    assert "time since enabled" not in text


def test_no_bluetooth_svc_jar() -> None:
    phone = Phone(sdk=30)
    phone.faults.no_bluetooth = True
    assert call(svc_bluetooth, phone, ["bluetooth", "enable"]) == (
        0,
        "",
        "Got a null BluetoothAdapter, is the system running?\n",
    )
    assert not phone.bluetooth.request_enable()
    assert phone.bluetooth.state == "OFF"


def test_no_bluetooth_cant_find_service() -> None:
    base_tools = pytest.importorskip("device.sim.services.base_tools")
    if not hasattr(base_tools, "cant_find_service"):
        pytest.skip("base_tools.cant_find_service not written yet")
    phone = Phone(sdk=34)
    phone.faults.no_bluetooth = True
    _, out, err = call(dumpsys_bluetooth_manager, phone, ["bluetooth_manager"])
    assert "Can't find service: bluetooth_manager" in out + err
    assert call(svc_bluetooth, phone, ["bluetooth", "enable"])[0] != 0
