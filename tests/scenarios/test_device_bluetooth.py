"""bluetooth.set / bluetooth.get: the command per API level, async transitions, no hardware."""

from __future__ import annotations

import pytest

from device.actions import Status

pytestmark = pytest.mark.integration


def _bt_effects(execs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return [a for a in execs if a[:2] in (("cmd", "bluetooth_manager"), ("svc", "bluetooth"))]


def test_turn_on_then_off_through_the_transitions(dut) -> None:
    original = dut.run("bluetooth.get", {}).value["enabled"]
    try:
        for enabled, final in ((True, "ON"), (False, "OFF")):
            out = dut.run("bluetooth.set", {"enabled": enabled}, settle_timeout=8.0)
            assert out.status is Status.MET, out.message
            seen = [t["observed"]["state"] for t in out.detail["transitions"]]
            assert seen[-1] == final
            assert out.detail["after"] == {"state": final, "bluetooth_on": int(enabled)}
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
    assert states[0] == "TURNING_ON" and states[-1] == "ON"
    # bluetooth_on is written only once the adapter is ON
    assert out.detail["transitions"][0]["observed"]["bluetooth_on"] == 0
    verb = (
        ("cmd", "bluetooth_manager", "enable") if dut.sdk >= 33 else ("svc", "bluetooth", "enable")
    )
    assert _bt_effects(dut.execs()) == [verb]


@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_already_on_is_met_without_a_command(dut) -> None:
    dut.phone.bluetooth.request_enable()
    dut.phone.bluetooth.TURN_ON_S = 0.0
    out = dut.run("bluetooth.set", {"enabled": True})
    assert out.status is Status.MET
    assert _bt_effects(dut.execs()) == []
    assert out.evidence.target["observed"] == {"state": "ON", "bluetooth_on": 1}


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
    out = dut.run("bluetooth.set", {"enabled": "yes"})
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == "enabled"
    assert dut.execs() == []
