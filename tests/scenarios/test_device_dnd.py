"""dnd.set / dnd.get through the real adb server (simulated SDKs, or a real device)."""

from __future__ import annotations

import pytest
from helpers import assert_met_sending_nothing
from phoned.device.actions import Status

pytestmark = pytest.mark.integration


def _set_dnd_calls(execs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return [a for a in execs if a[:3] == ("cmd", "notification", "set_dnd")]


@pytest.mark.sdks(30, 33, 34, 35)
def test_each_mode_is_set_and_read_back(dut) -> None:
    if dut.sdk < 29:
        pytest.skip("set_dnd needs API 29")
    try:
        for mode, zen in (("priority", 1), ("alarms", 3), ("total_silence", 2), ("off", 0)):
            out = dut.run("dnd.set", {"mode": mode})
            assert out.status is Status.MET, out.message
            ev = out.evidence.to_json()
            assert ev["target"] == {"expected": zen, "observed": zen, "met": True}
            phases = [o["phase"] for o in ev["observations"] if o["name"] == "zen_mode"]
            assert phases[0] == "before" and phases[-1] == "after"
            assert any(c["argv"][:3] == ["cmd", "notification", "set_dnd"] for c in ev["commands"])
            assert ev["device"]["sdk"] == dut.sdk
            assert dut.run("dnd.get", {}).value == mode
    finally:
        dut.run("dnd.set", {"mode": "off"})


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_total_silence_uses_the_word_none_and_never_settings_put(dut) -> None:
    assert dut.run("dnd.set", {"mode": "total_silence"}).status is Status.MET
    assert _set_dnd_calls(dut.execs()) == [("cmd", "notification", "set_dnd", "none")]
    assert not [a for a in dut.execs() if a[:2] == ("settings", "put")]


@pytest.mark.sdks(28)
@pytest.mark.sim_only
def test_set_dnd_missing_on_api_28_is_unsupported(dut) -> None:
    out = dut.run("dnd.set", {"mode": "priority"})
    assert out.status is Status.UNSUPPORTED
    assert "API 29" in out.message
    assert _set_dnd_calls(dut.execs()) == []
    assert dut.phone.settings.get("global", "zen_mode") == "0"


@pytest.mark.sdks(30, 35)
@pytest.mark.sim_only
def test_a_silent_noop_ends_not_met_with_before_and_after(dut) -> None:
    dut.phone.faults.dnd_noop = True
    out = dut.run("dnd.set", {"mode": "alarms"}, settle_timeout=0.5)
    assert out.status is Status.NOT_MET
    assert out.detail["before"] == 0 and out.detail["after"] == 0
    assert out.evidence.target == {"expected": 3, "observed": 0, "met": False}
    assert len(_set_dnd_calls(dut.execs())) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_already_in_target_sends_no_command(dut) -> None:
    out = dut.run("dnd.set", {"mode": "off"})
    assert_met_sending_nothing(out, _set_dnd_calls(dut.execs()))


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_unknown_mode_is_invalid_and_nothing_runs(dut) -> None:
    before = len(dut.execs())
    out = dut.run("dnd.set", {"mode": "on"})
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == "mode"
    assert len(dut.execs()) == before
