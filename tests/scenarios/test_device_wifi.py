"""wifi.set / wifi.get through the real adb server (simulated SDKs, or a real device)."""

from __future__ import annotations

import pytest
from helpers import assert_met_sending_nothing, assert_refused_running_nothing
from phoned.device.actions import Status, reconcile

pytestmark = pytest.mark.integration


def _toggles(execs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return [a for a in execs if a[:2] in (("cmd", "wifi"), ("svc", "wifi"))]


def test_off_and_on_are_set_and_read_back(dut) -> None:
    start = dut.run("wifi.get", {})
    assert start.status is Status.MET, start.message
    try:
        for enabled, word in ((False, "disabled"), (True, "enabled")):
            out = dut.run("wifi.set", {"enabled": enabled}, settle_timeout=10.0)
            assert out.status is Status.MET, out.message
            ev = out.evidence.to_json()
            assert ev["target"]["observed"] == word and ev["target"]["met"] is True
            assert ev["device"]["sdk"] == dut.sdk
            assert dut.run("wifi.get", {}).value == {"enabled": enabled, "state": word}
    finally:
        dut.run("wifi.set", {"enabled": start.value["enabled"]}, settle_timeout=10.0)


@pytest.mark.sim_only
def test_the_toggle_command_follows_the_release(dut) -> None:
    assert dut.run("wifi.set", {"enabled": False}).status is Status.MET
    if dut.sdk >= 30:
        assert _toggles(dut.execs()) == [("cmd", "wifi", "set-wifi-enabled", "disabled")]
    else:
        assert _toggles(dut.execs()) == [("svc", "wifi", "disable")]
    assert dut.phone.settings.get("global", "wifi_on") == "0"


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_the_radio_is_polled_through_disabling(dut) -> None:
    dut.phone.wifi.TRANSITION_S = 0.5
    out = dut.run("wifi.set", {"enabled": False})
    assert out.status is Status.MET
    seen = [o["value"] for o in out.evidence.to_json()["observations"] if o["name"] == "wifi_state"]
    assert seen[0] == "enabled" and "disabling" in seen and seen[-1] == "disabled"


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_already_in_target_sends_no_command(dut) -> None:
    out = dut.run("wifi.set", {"enabled": True})
    assert_met_sending_nothing(out, _toggles(dut.execs()))


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_a_non_boolean_is_invalid_and_nothing_runs(dut) -> None:
    assert_refused_running_nothing(dut, ("wifi.set",), {"enabled": "yes"}, "enabled")


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_reconcile_reads_the_settled_state(dut) -> None:
    assert reconcile("wifi.set", {"enabled": True}, dut.ctx("wifi.set")) == "happened"
    assert reconcile("wifi.set", {"enabled": False}, dut.ctx("wifi.set")) == "did_not_happen"
    dut.phone.wifi.TRANSITION_S = 30.0
    dut.phone.wifi.request(False)
    assert reconcile("wifi.set", {"enabled": False}, dut.ctx("wifi.set")) == "cannot_tell"
    assert _toggles(dut.execs()) == []
