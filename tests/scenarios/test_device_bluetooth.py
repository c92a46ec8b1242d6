"""bluetooth.set / bluetooth.get: the command per API level, async transitions through the
BLE states, an adapter that rests in BLE_ON when off (BLE scanning), airplane mode's
``bluetooth_on`` 2, unreadable state lines, no hardware."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from helpers import assert_refused_running_nothing
from phoned.device.actions import Status, reconcile
from phoned.device.methods import bluetooth
from phoned.sim import scenarios

pytestmark = pytest.mark.integration


def _bt_effects(execs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return [a for a in execs if a[:2] in (("cmd", "bluetooth_manager"), ("svc", "bluetooth"))]


def _shell(dut, *argv: str) -> str:
    result = dut.device.run(argv)
    return result.stdout + result.stderr


def _wait_for_state(dut, states: tuple[str, ...], timeout: float = 10.0) -> str | None:
    """Poll ``bluetooth.get`` until the adapter state is one of ``states``; the last state."""
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = dut.run("bluetooth.get", {}).value["state"]
        if state in states:
            break
        time.sleep(0.1)
    return state


@pytest.fixture
def ble_scanning(dut) -> Iterator[None]:
    """The phone rests in BLE_ON when Bluetooth is off, as with "Bluetooth scanning" on.

    Simulated: the ``ble-scanning`` scenario. Real phone: ``settings put global
    ble_scan_always_enabled 1`` (Settings.Global.BLE_SCAN_ALWAYS_AVAILABLE), then
    ``cmd bluetooth_manager enableBle`` where the phone allows it (root only, API 34+);
    otherwise the phone's own scanning apps must register. Skips when the phone still ends
    in OFF. Restores the setting, the registration and the switch afterwards.
    """
    if dut.sim is not None:
        scenarios.apply(dut.phone, "ble-scanning")
        dut.phone.log.clear()
        yield
        return
    original = dut.run("bluetooth.get", {}).value["enabled"]
    saved = _shell(dut, "settings", "get", "global", "ble_scan_always_enabled").strip()
    _shell(dut, "settings", "put", "global", "ble_scan_always_enabled", "1")
    registered = "enableBle: Success" in _shell(dut, "cmd", "bluetooth_manager", "enableBle")
    try:
        dut.run("bluetooth.set", {"enabled": True}, settle_timeout=15.0)
        dut.run("bluetooth.set", {"enabled": False}, settle_timeout=15.0)
        if _wait_for_state(dut, ("BLE_ON",), timeout=5.0) != "BLE_ON":
            pytest.skip(
                "this phone does not rest in BLE_ON with ble_scan_always_enabled=1: no BLE app "
                "registered (cmd bluetooth_manager enableBle needs root and API 34+)"
            )
        yield
    finally:
        if registered:
            _shell(dut, "cmd", "bluetooth_manager", "disableBle")
        if saved in ("0", "1"):
            _shell(dut, "settings", "put", "global", "ble_scan_always_enabled", saved)
        dut.run("bluetooth.set", {"enabled": original}, settle_timeout=15.0)


def test_turn_on_then_off_through_the_transitions(dut) -> None:
    original = dut.run("bluetooth.get", {}).value["enabled"]
    try:
        for enabled, finals in ((True, ("ON",)), (False, ("OFF", "BLE_ON"))):
            out = dut.run("bluetooth.set", {"enabled": enabled}, settle_timeout=8.0)
            assert out.status is Status.MET, out.message
            seen = [t["observed"]["state"] for t in out.detail["transitions"]]
            assert seen[-1] in finals
            assert out.detail["after"]["state"] in finals
            assert out.detail["after"]["bluetooth_on"] == int(enabled)
            assert all("at" in t for t in out.detail["transitions"])
            assert dut.run("bluetooth.get", {}).value["enabled"] is enabled
    finally:
        dut.run("bluetooth.set", {"enabled": original}, settle_timeout=8.0)


@pytest.mark.sim_only
def test_transition_is_polled_and_the_command_fits_the_sdk(dut) -> None:
    dut.phone.bluetooth.TURN_ON_S = 0.4
    out = dut.run("bluetooth.set", {"enabled": True})
    assert out.status is Status.MET
    states = [t["observed"]["state"] for t in out.detail["transitions"]]
    # AdapterState: OFF -> BLE_TURNING_ON -> BLE_ON -> TURNING_ON -> ON
    assert states[0] == "BLE_TURNING_ON" and states[-1] == "ON"
    # the module (API 33+) writes bluetooth_on=1 at the request, older releases leaving BLE_ON
    assert out.detail["transitions"][0]["observed"]["bluetooth_on"] == int(dut.sdk >= 33)
    verb = (
        ("cmd", "bluetooth_manager", "enable") if dut.sdk >= 33 else ("svc", "bluetooth", "enable")
    )
    assert _bt_effects(dut.execs()) == [verb]


@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_already_on_is_met_without_a_command(dut) -> None:
    dut.phone.bluetooth.request_enable()
    dut.phone.bluetooth.settle_now()
    out = dut.run("bluetooth.set", {"enabled": True})
    assert out.status is Status.MET
    assert _bt_effects(dut.execs()) == []
    assert out.evidence.target["observed"] == {"state": "ON", "bluetooth_on": 1}


# ---- BLE_ON: Bluetooth off with BLE scanning on ---------------------------------------------


def test_disable_that_rests_in_ble_on_is_met(dut, ble_scanning) -> None:
    assert dut.run("bluetooth.set", {"enabled": True}, settle_timeout=8.0).status is Status.MET
    out = dut.run("bluetooth.set", {"enabled": False}, settle_timeout=8.0)
    assert out.status is Status.MET, out.message
    # the evidence shows the real state, not a tidied "OFF"
    assert out.detail["after"] == {"state": "BLE_ON", "bluetooth_on": 0}
    assert out.evidence.target["observed"] == {"state": "BLE_ON", "bluetooth_on": 0}
    assert [t["observed"]["state"] for t in out.detail["transitions"]][-1] == "BLE_ON"
    assert "BLE_ON" in out.message


def test_get_reports_off_in_ble_on(dut, ble_scanning) -> None:
    out = dut.run("bluetooth.get", {})
    assert out.status is Status.MET
    assert out.value == {"enabled": False, "state": "BLE_ON", "bluetooth_on": 0}


def test_already_off_in_ble_on_sends_nothing(dut, ble_scanning) -> None:
    out = dut.run("bluetooth.set", {"enabled": False})
    assert out.status is Status.MET and out.message == "already in target"
    if dut.sim is not None:
        assert _bt_effects(dut.execs()) == []


def test_enable_from_ble_on_is_met(dut, ble_scanning) -> None:
    out = dut.run("bluetooth.set", {"enabled": True}, settle_timeout=8.0)
    assert out.status is Status.MET, out.message
    assert out.detail["before"] == {"state": "BLE_ON", "bluetooth_on": 0}
    assert out.detail["after"] == {"state": "ON", "bluetooth_on": 1}
    # BLE_ON -> TURNING_ON -> ON: the BLE part is already up
    assert "BLE_TURNING_ON" not in [t["observed"]["state"] for t in out.detail["transitions"]]


def test_reconcile_of_a_disable_that_landed_in_ble_on_says_happened(dut, ble_scanning) -> None:
    assert dut.run("bluetooth.set", {"enabled": True}, settle_timeout=8.0).status is Status.MET
    # an attempt sent the disable and was interrupted before it verified
    dut.device.run(
        bluetooth.bluetooth_set(
            False, shell_command=dut.device.capabilities["cmd_bluetooth_manager"]
        )
    )
    assert _wait_for_state(dut, ("BLE_ON",)) == "BLE_ON"
    ctx = dut.ctx("bluetooth.set")
    assert reconcile("bluetooth.set", {"enabled": False}, ctx) == "happened"
    assert reconcile("bluetooth.set", {"enabled": True}, dut.ctx("bluetooth.set")) == (
        "did_not_happen"
    )


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_reconcile_mid_disable_and_while_the_setting_disagrees(dut, ble_scanning) -> None:
    bt = dut.phone.bluetooth
    bt.request_enable()
    bt.settle_now()
    bt.TURN_OFF_S = 5.0
    bt.request_disable()  # TURNING_OFF, bluetooth_on already 0
    assert reconcile("bluetooth.set", {"enabled": False}, dut.ctx("bluetooth.set")) == "happened"
    assert reconcile("bluetooth.set", {"enabled": True}, dut.ctx("bluetooth.set")) == (
        "cannot_tell"
    )
    bt.settle_now()
    # a later enable request written but the adapter not moved yet: cannot tell
    dut.phone.settings.put("global", "bluetooth_on", "1", notify=False)
    assert reconcile("bluetooth.set", {"enabled": False}, dut.ctx("bluetooth.set")) == (
        "cannot_tell"
    )


# ---- unreadable state, airplane mode, no hardware ------------------------------------------


@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_unknown_state_text_is_not_met_with_the_text(dut) -> None:
    dut.phone.bluetooth.state_text_override = "?!?!? (17)"  # nameForState of an unknown value
    out = dut.run("bluetooth.set", {"enabled": False})
    assert out.status is Status.NOT_MET
    assert "'?!?!? (17)'" in out.message
    assert out.evidence.target["observed"]["state"] == "?!?!? (17)"
    assert out.evidence.target["met"] is False
    assert _bt_effects(dut.execs()) == []  # nothing sent to a phone it cannot read
    got = dut.run("bluetooth.get", {})
    assert got.status is Status.NOT_MET and "?!?!? (17)" in got.message
    assert reconcile("bluetooth.set", {"enabled": False}, dut.ctx("bluetooth.set")) == (
        "cannot_tell"
    )


@pytest.mark.sdks(33)
@pytest.mark.sim_only
def test_unreadable_bluetooth_on_cannot_tell_and_is_not_settled(dut) -> None:
    dut.phone.settings.put("global", "bluetooth_on", "on", notify=False)
    got = dut.run("bluetooth.get", {})
    assert got.value == {"enabled": False, "state": "OFF", "bluetooth_on": None}
    assert reconcile("bluetooth.set", {"enabled": False}, dut.ctx("bluetooth.set")) == (
        "cannot_tell"
    )
    out = dut.run("bluetooth.set", {"enabled": False})  # the disable writes 0 over it
    assert out.status is Status.MET
    assert out.detail["after"] == {"state": "OFF", "bluetooth_on": 0}


@pytest.mark.sdks(28, 35)
@pytest.mark.sim_only
def test_airplane_mode_bluetooth_on_2_reads_off_and_disable_persists_0(dut) -> None:
    scenarios.apply(dut.phone, "bt-airplane")
    dut.phone.log.clear()
    got = dut.run("bluetooth.get", {})
    assert got.value == {"enabled": False, "state": "OFF", "bluetooth_on": 2}
    assert reconcile("bluetooth.set", {"enabled": False}, dut.ctx("bluetooth.set")) == (
        "did_not_happen"
    )
    # off for now, but on again when airplane mode ends: disable(persist=true) writes 0
    out = dut.run("bluetooth.set", {"enabled": False})
    assert out.status is Status.MET, out.message
    assert out.detail["before"] == {"state": "OFF", "bluetooth_on": 2}
    assert out.detail["after"] == {"state": "OFF", "bluetooth_on": 0}
    assert len(_bt_effects(dut.execs())) == 1


@pytest.mark.sdks(28, 33, 35)
@pytest.mark.sim_only
def test_no_bluetooth_hardware_is_unsupported(dut) -> None:
    dut.phone.faults.no_bluetooth = True
    out = dut.run("bluetooth.set", {"enabled": True})
    assert out.status is Status.UNSUPPORTED
    assert "no Bluetooth adapter" in out.message
    assert _bt_effects(dut.execs()) == []
    assert dut.run("bluetooth.get", {}).status is Status.UNSUPPORTED


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_enabled_must_be_a_boolean(dut) -> None:
    assert_refused_running_nothing(dut, ("bluetooth.set",), {"enabled": "yes"}, "enabled")
