"""brightness.set / brightness.get through the real adb server (simulated SDKs, or a real
device): the level is only set in manual mode, and both settings are read back."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import assert_met_sending_nothing
from phoned.device.actions import Status, reconcile

pytestmark = pytest.mark.integration

PUTS = ("settings", "put")


def _puts(execs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return [a for a in execs if a[:2] == PUTS]


def _restore(dut: Any, start: dict[str, Any]) -> None:
    dut.run("brightness.set", {"level": start["level"]})
    if start["auto"]:
        dut.run("brightness.set", {"auto": True})


def test_a_level_is_set_in_manual_mode_and_read_back(dut) -> None:
    start = dut.run("brightness.get", {})
    assert start.status is Status.MET, start.message
    assert set(start.value) == {"level", "auto"} and 0 <= start.value["level"] <= 255
    level = 77 if start.value["level"] != 77 else 78
    try:
        out = dut.run("brightness.set", {"level": level})
        assert out.status is Status.MET, out.message
        target = out.evidence.to_json()["target"]
        assert target["expected"] == {"level": level, "auto": False}
        assert target["observed"] == {"level": level, "auto": False} and target["met"] is True
        assert dut.run("brightness.get", {}).value == {"level": level, "auto": False}
    finally:
        _restore(dut, start.value)


def test_auto_turns_adaptive_brightness_on_and_a_level_turns_it_off(dut) -> None:
    start = dut.run("brightness.get", {}).value
    try:
        out = dut.run("brightness.set", {"auto": True})
        assert out.status is Status.MET, out.message
        assert dut.run("brightness.get", {}).value["auto"] is True
        out = dut.run("brightness.set", {"level": 40})
        assert out.status is Status.MET, out.message
        assert dut.run("brightness.get", {}).value == {"level": 40, "auto": False}
    finally:
        _restore(dut, start)


@pytest.mark.sim_only
def test_from_automatic_mode_the_mode_is_written_before_the_level(dut) -> None:
    dut.phone.settings.put("system", "screen_brightness_mode", "1")
    out = dut.run("brightness.set", {"level": 200})
    assert out.status is Status.MET, out.message
    assert _puts(dut.execs()) == [
        ("settings", "put", "system", "screen_brightness_mode", "0"),
        ("settings", "put", "system", "screen_brightness", "200"),
    ]
    assert out.detail["before"] == {"level": 102, "auto": True}


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_already_in_target_sends_no_command(dut) -> None:
    out = dut.run("brightness.set", {"level": 102})  # the simulator's default, manual mode
    assert_met_sending_nothing(out, _puts(dut.execs()))


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_only_the_setting_that_differs_is_written(dut) -> None:
    assert dut.run("brightness.set", {"level": 30}).status is Status.MET
    assert _puts(dut.execs()) == [("settings", "put", "system", "screen_brightness", "30")]


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "level"),
        ({"level": 256}, "level"),
        ({"level": -1}, "level"),
        ({"level": "128"}, "level"),
        ({"level": 100, "auto": True}, "auto"),
        ({"auto": False}, "auto"),
    ],
)
def test_bad_params_name_the_field_and_nothing_runs(
    dut, params: dict[str, Any], field: str
) -> None:
    out = dut.run("brightness.set", params)
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == field, out.message
    assert dut.execs() == []


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_an_unset_mode_is_unreadable_for_get_and_written_by_set(dut) -> None:
    dut.phone.settings.delete("system", "screen_brightness_mode")  # `settings get` prints null
    got = dut.run("brightness.get", {})
    assert got.status is Status.NOT_MET and "unreadable" in got.message
    out = dut.run("brightness.set", {"level": 102})
    assert out.status is Status.MET, out.message
    assert _puts(dut.execs()) == [("settings", "put", "system", "screen_brightness_mode", "0")]


@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_a_level_that_does_not_stick_is_not_met(dut) -> None:
    # Something else owns the backlight (a vendor's brightness service): the put is undone.
    dut.phone.settings.on_put(
        "system",
        "screen_brightness",
        lambda key, value: dut.phone.settings.tables["system"].update({key: "102"}),
    )
    out = dut.run("brightness.set", {"level": 10}, settle_timeout=0.3)
    assert out.status is Status.NOT_MET
    assert out.evidence.to_json()["target"]["observed"] == {"level": 102, "auto": False}


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_reconcile_reads_both_settings(dut) -> None:
    ctx = dut.ctx("brightness.set")
    assert reconcile("brightness.set", {"level": 102}, ctx) == "happened"
    assert reconcile("brightness.set", {"level": 50}, ctx) == "did_not_happen"
    assert reconcile("brightness.set", {"auto": True}, ctx) == "did_not_happen"
    dut.phone.settings.put("system", "screen_brightness_mode", "1")
    assert reconcile("brightness.set", {"auto": True}, ctx) == "happened"
    assert reconcile("brightness.set", {"level": 102}, ctx) == "did_not_happen"
    dut.phone.settings.delete("system", "screen_brightness_mode")
    assert reconcile("brightness.set", {"auto": True}, ctx) == "cannot_tell"
    assert _puts(dut.execs()) == []
