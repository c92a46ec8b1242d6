"""Audio model and the volume tools of the simulated phone, against cited fixtures."""

from __future__ import annotations

import pytest
from helpers import android_fixture as fixture
from helpers import call_tool as run

from phoned.sim.android.audio import DEVICE_BT_A2DP, DEVICE_SPEAKER, dumpsys_audio
from phoned.sim.android.audio_cli import MEDIA_SESSION_HELP, cmd_media_session, java_decode, media
from phoned.sim.phone import Phone


def session(phone: Phone, *args: str) -> tuple[int, str, str]:
    return run(phone, cmd_media_session, ["media_session", "volume", *args])


@pytest.mark.parametrize("sdk", [30, 33, 34, 35])
def test_media_session_get_matches_volumectrl_output(sdk: int) -> None:
    rc, out, err = session(Phone(sdk=sdk), "--stream", "3", "--get")
    assert (rc, err) == (0, "")
    assert out == fixture("media_session-34-volume-get.txt")


def test_set_out_of_range_exits_zero_and_leaves_volume() -> None:
    phone = Phone(sdk=34)
    rc, out, err = session(phone, "--stream", "3", "--set", "99")
    assert rc == 0
    assert out.startswith("[V] will control stream=3 (STREAM_MUSIC)\n")
    assert out.endswith(MEDIA_SESSION_HELP)
    assert err == fixture("media_session-34-volume-set-out-of-range.stderr.txt")
    assert phone.audio.get_index("music") == 5


def test_set_then_adjust_changes_only_the_active_device() -> None:
    phone = Phone(sdk=33)
    assert session(phone, "--stream", "3", "--set", "9")[0] == 0
    assert session(phone, "--stream", "3", "--adj", "raise")[0] == 0
    assert phone.audio.get_index("music") == 10
    assert phone.audio.active_device("music") == DEVICE_SPEAKER
    assert phone.audio.get_index("music", DEVICE_BT_A2DP) == 5
    assert phone.settings.get("system", "volume_music_speaker") == "10"


def test_adjust_clamps_at_the_top_of_the_range() -> None:
    phone = Phone(sdk=34)
    session(phone, "--stream", "4", "--set", "7")
    rc, out, _ = session(phone, "--stream", "4", "--adj", "raise", "--get")
    assert rc == 0
    assert out.endswith("[V] volume is 7 in range [1..7]\n")


def test_bad_adjustment_is_show_error_exit_zero() -> None:
    rc, _, err = session(Phone(sdk=34), "--adj", "up")
    assert rc == 0
    assert err == "Error: no valid volume adjustment, was up, expected lower|same|raise\n"


def test_non_numeric_index_is_an_exception_exit_255() -> None:
    rc, _, err = session(Phone(sdk=34), "--set", "loud")
    assert rc == 255
    assert err == 'java.lang.NumberFormatException: For input string: "loud"\n'


def test_bad_stream_type_is_reported_by_the_service() -> None:
    rc, out, err = session(Phone(sdk=34), "--stream", "42", "--get")
    assert rc == 255
    assert "[V] will control stream=42 (invalid stream)\n" in out
    assert err == "java.lang.IllegalArgumentException: Bad stream type 42\n"


def test_java_decode_follows_integer_decode() -> None:
    assert [java_decode(t) for t in ("11", "0x0b", "#b", "013", "-3", "+4", "0")] == [
        11,
        11,
        11,
        11,
        -3,
        4,
        0,
    ]


def test_media_volume_on_sdk28_uses_lowercase_tags() -> None:
    phone = Phone(sdk=28)
    rc, out, err = run(phone, media, ["media", "volume", "--stream", "3", "--set", "9", "--get"])
    assert (rc, err) == (0, "")
    assert out == fixture("media-28-volume-set-get.txt")


def test_media_volume_errors_go_to_stderr_and_exit_zero() -> None:
    rc, _, err = run(Phone(sdk=28), media, ["media", "volume", "--stream", "3", "--set", "16"])
    assert rc == 0
    assert err.startswith("usage: media [subcommand] [options]\n")
    assert err.endswith("\nError: invalid volume index 16 for stream 3 (should be in [0..15])\n")


def test_media_binary_is_gone_from_sdk30() -> None:
    rc, out, err = run(Phone(sdk=30), media, ["media", "volume", "--get"])
    assert (rc, out) == (127, "")
    assert err == "/system/bin/sh: media: inaccessible or not found\n"


def test_cmd_media_session_has_no_shell_command_on_sdk28() -> None:
    rc, out, err = session(Phone(sdk=28), "--get")
    assert (rc, out, err) == (0, "", "No shell command implementation.\n")


@pytest.mark.parametrize(
    ("sdk", "name"), [(28, "dumpsys-28-audio-music.txt"), (34, "dumpsys-34-audio-music.txt")]
)
def test_dumpsys_audio_music_block(sdk: int, name: str) -> None:
    rc, out, _ = run(Phone(sdk=sdk), dumpsys_audio, ["audio"])
    assert rc == 0
    assert "Stream volumes (device: index)\n" in out
    assert fixture(name) in out


def test_dumpsys_audio_reflects_a_set_on_the_speaker_only() -> None:
    phone = Phone(sdk=30)
    session(phone, "--stream", "3", "--set", "12")
    _, out, _ = run(phone, dumpsys_audio, ["audio"])
    music = out.split("- STREAM_MUSIC:\n", 1)[1].split("\n\n", 1)[0]
    assert "   streamVolume:12\n" in music
    assert "   Current: 2 (speaker): 12, 4 (wired_headset): 5," in music
    assert "Muted Internally" not in music


def test_ranges_are_the_aosp_defaults() -> None:
    audio = Phone(sdk=35).audio
    assert [
        audio.range(s) for s in ("voice_call", "system", "ring", "music", "alarm", "notification")
    ] == [
        (1, 5),
        (0, 7),
        (0, 7),
        (0, 15),
        (1, 7),
        (0, 7),
    ]
