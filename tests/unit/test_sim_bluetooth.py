"""Bluetooth: the manager's states per SDK (BLE_ON included), per-SDK tools, the
no_bluetooth fault, and the parsers that read them."""

from __future__ import annotations

from pathlib import Path

import pytest
from phoned.device.methods import bluetooth as bt_action
from phoned.device.methods.bluetooth import BluetoothOn, ClassicBluetooth
from phoned.sim import scenarios
from phoned.sim.android.bluetooth import (
    cmd_bluetooth_manager,
    dumpsys_bluetooth_manager,
    svc_bluetooth,
)
from phoned.sim.android.settings_tool import settings_tool
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import BufferSink, Tool, ToolIO

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"
REAL = FIXTURES / "real"


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


def dump(phone: Phone) -> str:
    return call(dumpsys_bluetooth_manager, phone, ["bluetooth_manager"])[1]


def state_line(phone: Phone) -> str:
    return next(line for line in dump(phone).splitlines() if line.startswith("  state: "))


def clocked_phone(monkeypatch: pytest.MonkeyPatch, sdk: int, spec: str = "") -> tuple[Phone, Clock]:
    """A phone of ``sdk`` whose clock the test moves; ``spec``: scenarios applied."""
    phone = Phone(sdk=sdk)
    clock = Clock()
    monkeypatch.setattr(phone, "now", clock)
    scenarios.apply(phone, spec)
    phone.bluetooth.settle_now()
    return phone, clock


def walk(phone: Phone, clock: Clock, seconds: float, step: float = 0.01) -> list[str]:
    """Each distinct state the dump shows while ``seconds`` pass, with bluetooth_on."""
    seen: list[str] = []
    start = clock.t
    for i in range(round(seconds / step) + 2):  # one step past the end
        clock.t = start + i * step
        now = f"{state_line(phone).split(': ')[1]}/{bt_on(phone).strip()}"
        if not seen or seen[-1] != now:
            seen.append(now)
    return seen


@pytest.fixture
def clocked(monkeypatch: pytest.MonkeyPatch) -> tuple[Phone, Clock]:
    return clocked_phone(monkeypatch, 34)


def test_enable_passes_the_ble_states_and_persists_at_the_request(
    clocked: tuple[Phone, Clock],
) -> None:
    # AdapterState: OFF -> BLE_TURNING_ON -> BLE_ON -> TURNING_ON -> ON; the module
    # (Android 13+) writes bluetooth_on=1 when MESSAGE_ENABLE is handled.
    phone, clock = clocked
    code, out, _ = call(cmd_bluetooth_manager, phone, ["bluetooth_manager", "enable"])
    assert (code, out) == (0, "BluetoothShellCommand: Exec enable\nenable: Success\n")
    assert state_line(phone) == "  state: BLE_TURNING_ON"
    assert walk(phone, clock, phone.bluetooth.TURN_ON_S) == [
        "BLE_TURNING_ON/1", "BLE_ON/1", "TURNING_ON/1", "ON/1",
    ]  # fmt: skip
    assert phone.bluetooth.enabled
    assert "  enabled: true\n  state: ON\n" in dump(phone)


@pytest.mark.parametrize("sdk", [28, 30])
def test_before_13_bluetooth_on_is_written_leaving_ble_on(
    monkeypatch: pytest.MonkeyPatch, sdk: int
) -> None:
    phone, clock = clocked_phone(monkeypatch, sdk)
    assert call(svc_bluetooth, phone, ["bluetooth", "enable"])[0] == 0
    assert walk(phone, clock, phone.bluetooth.TURN_ON_S) == [
        "BLE_TURNING_ON/0", "BLE_ON/0", "TURNING_ON/1", "ON/1",
    ]  # fmt: skip


def test_disable_without_ble_apps_ends_off(clocked: tuple[Phone, Clock]) -> None:
    phone, clock = clocked
    phone.bluetooth.request_enable()
    clock.t += 5
    assert call(svc_bluetooth, phone, ["bluetooth", "disable"])[0] == 0
    # disable(persist=true) writes 0 at the request; BLE_ON is passed, not kept
    assert walk(phone, clock, phone.bluetooth.TURN_OFF_S) == [
        "TURNING_OFF/0", "BLE_ON/0", "BLE_TURNING_OFF/0", "OFF/0",
    ]  # fmt: skip


@pytest.mark.parametrize("sdk", [28, 30, 33, 34, 35])
def test_ble_scanning_rests_in_ble_on_when_off(monkeypatch: pytest.MonkeyPatch, sdk: int) -> None:
    phone, _ = clocked_phone(monkeypatch, sdk, "ble-scanning")
    text = dump(phone)
    assert text.startswith("Bluetooth Status\n  enabled: false\n  state: BLE_ON\n")
    assert "  time since enabled: " in text  # mEnable: enableBle sets it too
    if sdk >= 33:
        assert "Number of Ble app registered: 1\n" in text
    else:
        assert "1 BLE appregistered\n  com.google.android.gms\n" in text
    assert bt_on(phone) == "0\n"
    assert (
        bt_action.bluetooth_classic(
            bt_action.parse_bluetooth_state(text), bt_action.parse_bluetooth_enabled(text)
        )
        is ClassicBluetooth.OFF
    )


def test_enable_from_ble_on_and_disable_back_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    phone, clock = clocked_phone(monkeypatch, 34, "ble-scanning")
    phone.bluetooth.request_enable()
    assert walk(phone, clock, phone.bluetooth.TURN_ON_S) == ["TURNING_ON/1", "ON/1"]
    phone.bluetooth.request_disable()
    # sendBrEdrDownCallback: a BLE app is registered, so "Staying in BLE_ON"
    assert walk(phone, clock, phone.bluetooth.TURN_OFF_S * 2) == ["TURNING_OFF/0", "BLE_ON/0"]


def test_ble_scanning_turned_off_stops_ble(monkeypatch: pytest.MonkeyPatch) -> None:
    phone, clock = clocked_phone(monkeypatch, 35, "ble-scanning")
    call(settings_tool, phone, ["settings", "put", "global", "ble_scan_always_enabled", "0"])
    assert phone.bluetooth.ble_apps == []
    assert walk(phone, clock, phone.bluetooth.TURN_OFF_S) == ["BLE_TURNING_OFF/0", "OFF/0"]
    # enableBLE() refuses while the setting is 0 (BluetoothAdapter.enableBLE)
    assert not phone.bluetooth.register_ble_app()


@pytest.mark.parametrize("sdk", [28, 34])
def test_airplane_mode_holds_a_turned_on_adapter_off_with_2(
    monkeypatch: pytest.MonkeyPatch, sdk: int
) -> None:
    phone, clock = clocked_phone(monkeypatch, sdk, "bt-airplane")
    assert (state_line(phone), bt_on(phone)) == ("  state: OFF", "2\n")
    assert not phone.bluetooth.register_ble_app()  # enableBle refuses in airplane mode
    call(settings_tool, phone, ["settings", "put", "global", "airplane_mode_on", "0"])
    assert walk(phone, clock, phone.bluetooth.TURN_ON_S)[-1] == "ON/1"
    call(settings_tool, phone, ["settings", "put", "global", "airplane_mode_on", "1"])
    assert walk(phone, clock, phone.bluetooth.TURN_OFF_S)[-1] == "OFF/2"
    phone.bluetooth.request_disable()  # disable(persist=true) in airplane mode writes 0
    assert (state_line(phone), bt_on(phone)) == ("  state: OFF", "0\n")


def test_enable_ble_is_root_only(clocked: tuple[Phone, Clock]) -> None:
    phone, _ = clocked
    code, out, err = call(cmd_bluetooth_manager, phone, ["bluetooth_manager", "enableBle"])
    assert (code, out) == (255, "")
    assert err.startswith(
        "\nException occurred while executing 'enableBle':\n"
        "java.lang.SecurityException: Uid 2000 does not have access to enableBle bluetooth "
        "command\n"
    )
    code, out, _ = call(cmd_bluetooth_manager, Phone(sdk=33), ["bluetooth_manager", "enableBle"])
    assert (code, out) == (255, "Unknown command: enableBle\n")


def test_an_unknown_state_is_printed_as_the_fault_says(clocked: tuple[Phone, Clock]) -> None:
    phone, _ = clocked
    phone.bluetooth.state_text_override = "?!?!? (17)"  # nameForState of an unknown number
    text = dump(phone)
    assert "  enabled: false\n  state: ?!?!? (17)\n" in text
    assert bt_action.parse_bluetooth_state(text) == "?!?!? (17)"
    assert bt_action.bluetooth_classic("?!?!? (17)", False) is ClassicBluetooth.UNKNOWN


# ---- parsers on text ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "enabled", "classic"),
    [
        ("OFF", False, ClassicBluetooth.OFF),
        ("BLE_ON", False, ClassicBluetooth.OFF),
        ("BLE_TURNING_ON", False, ClassicBluetooth.TURNING_ON),
        ("TURNING_ON", False, ClassicBluetooth.TURNING_ON),
        ("ON", True, ClassicBluetooth.ON),
        ("ON", None, ClassicBluetooth.ON),
        ("TURNING_OFF", False, ClassicBluetooth.TURNING_OFF),
        ("BLE_TURNING_OFF", False, ClassicBluetooth.TURNING_OFF),
        ("ON", False, ClassicBluetooth.UNKNOWN),  # the two lines disagree
        ("BLE_ON", True, ClassicBluetooth.UNKNOWN),
        ("STATE_ON", True, ClassicBluetooth.UNKNOWN),  # not a nameForState name
        ("", False, ClassicBluetooth.UNKNOWN),
        (None, None, ClassicBluetooth.UNKNOWN),
    ],
)
def test_classic_bluetooth_of_each_state(
    state: str | None, enabled: bool | None, classic: ClassicBluetooth
) -> None:
    assert bt_action.bluetooth_classic(state, enabled) is classic


def test_state_line_is_read_verbatim() -> None:
    assert bt_action.parse_bluetooth_state("  enabled: false\r\n  state: BLE_ON\r\n") == "BLE_ON"
    assert bt_action.parse_bluetooth_state("  state: ?!?!? (17)\n") == "?!?!? (17)"
    assert bt_action.parse_bluetooth_state("  state:\n  address: x\n") == ""
    assert bt_action.parse_bluetooth_state("garbage\n") is None
    # the adapter's own "State:" further down is not the manager's line
    assert bt_action.parse_bluetooth_state("AdapterProperties\n  State: ON\n") is None


def test_real_pixel_8_pro_ble_on_is_classic_off() -> None:
    text = "".join(
        line
        for line in (REAL / "dumpsys_bluetooth_manager-pixel8pro-ble_on.txt")
        .read_text("utf-8")
        .splitlines(keepends=True)
        if not line.startswith("## ")
    )
    state = bt_action.parse_bluetooth_state(text)
    assert state == "BLE_ON"
    classic = bt_action.bluetooth_classic(state, bt_action.parse_bluetooth_enabled(text))
    assert classic is ClassicBluetooth.OFF


@pytest.mark.parametrize(
    ("text", "setting", "wants_on"),
    [
        ("0\n", BluetoothOn.OFF, False),
        ("1\n", BluetoothOn.ON, True),
        ("2\n", BluetoothOn.ON_AIRPLANE, True),  # BLUETOOTH_ON_AIRPLANE
        ("3\n", BluetoothOn.ON_OTHER, True),  # isBluetoothPersistedStateOn: != 0
        ("null\n", BluetoothOn.UNSET, None),
        ("on\n", BluetoothOn.UNREADABLE, None),
        ("", BluetoothOn.UNREADABLE, None),
    ],
)
def test_bluetooth_on_values(text: str, setting: BluetoothOn, wants_on: bool | None) -> None:
    assert bt_action.parse_bluetooth_on(text) is setting
    assert setting.wants_on is wants_on


@pytest.mark.parametrize("sdk", [28, 30])
def test_old_sdks_have_no_shell_command_but_svc_works(sdk: int) -> None:
    phone = Phone(sdk=sdk)
    code, out, err = call(cmd_bluetooth_manager, phone, ["bluetooth_manager", "enable"])
    assert (code, out, err) == (0, "", "No shell command implementation.\n")
    assert call(svc_bluetooth, phone, ["bluetooth", "enable"]) == (0, "", "")
    assert phone.bluetooth.state == "BLE_TURNING_ON"
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
    assert text.startswith("Bluetooth Status\n  enabled: false\n  state: BLE_TURNING_ON\n")
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
    base_tools = pytest.importorskip("phoned.sim.shell.tools.base_tools")
    if not hasattr(base_tools, "cant_find_service"):
        pytest.skip("base_tools.cant_find_service not written yet")
    phone = Phone(sdk=34)
    phone.faults.no_bluetooth = True
    _, out, err = call(dumpsys_bluetooth_manager, phone, ["bluetooth_manager"])
    assert "Can't find service: bluetooth_manager" in out + err
    assert call(svc_bluetooth, phone, ["bluetooth", "enable"])[0] != 0
