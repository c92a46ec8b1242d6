"""volume.set / volume.get: range read from the device, checked before anything is sent."""

from __future__ import annotations

import pytest

from phoned.device.actions import Status

pytestmark = pytest.mark.integration


def _volume_sets(execs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return [a for a in execs if "--set" in a]


def test_level_and_percent_are_set_and_read_back(dut) -> None:
    before = dut.run("volume.get", {"stream": "music"}).value
    low, high = before["min"], before["max"]
    try:
        out = dut.run("volume.set", {"stream": "music", "level": high - 1})
        assert out.status is Status.MET, out.message
        assert out.evidence.target == {"expected": high - 1, "observed": high - 1, "met": True}
        assert dut.run("volume.get", {"stream": "music"}).value["level"] == high - 1
        out = dut.run("volume.set", {"stream": "alarm", "percent": 100})
        alarm = dut.run("volume.get", {"stream": "alarm"}).value
        assert out.status is Status.MET and alarm["level"] == alarm["max"]
    finally:
        dut.run("volume.set", {"stream": "music", "level": before["level"]})
    assert low <= before["level"] <= high


@pytest.mark.sim_only
def test_each_stream_uses_the_tool_of_its_sdk(dut) -> None:
    out = dut.run("volume.set", {"stream": "ring", "percent": 50})
    assert out.status is Status.MET
    # ring 0..7: 50 % rounds half up to 4
    assert out.value == 4 and dut.phone.audio.get_index("ring") == 4
    tool = ("cmd", "media_session", "volume") if dut.sdk >= 30 else ("media", "volume")
    assert _volume_sets(dut.execs()) == [(*tool, "--stream", "2", "--set", "4")]


@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"stream": "music", "level": 16}, "level"),
        ({"stream": "voice_call", "level": 0}, "level"),
        ({"stream": "alarm", "percent": 101}, "percent"),
        ({"stream": "music", "level": True}, "level"),
        ({"stream": "music"}, "level"),
        ({"stream": "tts", "level": 1}, "stream"),
    ],
)
def test_out_of_range_is_invalid_and_nothing_is_sent(dut, params, field) -> None:
    out = dut.run("volume.set", params)
    assert out.status is Status.INVALID_PARAMS
    assert out.detail["field"] == field
    assert _volume_sets(dut.execs()) == []
    assert dut.phone.audio.get_index("music") == 5


@pytest.mark.sdks(33)
@pytest.mark.sim_only
def test_already_at_level_sends_nothing(dut) -> None:
    out = dut.run("volume.set", {"stream": "music", "level": 5})
    assert out.status is Status.MET
    assert _volume_sets(dut.execs()) == []
