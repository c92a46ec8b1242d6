"""Parsers of device output, fed captured real output (tests/fixtures/android/README.md)."""

from __future__ import annotations

from pathlib import Path

from device import parsers
from device.actions import brightness, wifi

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"


def test_getprop_of_an_api34_emulator() -> None:
    props = parsers.parse_getprop((FIXTURES / "getprop-34-emulator.txt").read_text())
    assert props["ro.build.version.sdk"] == "34"
    assert props["ro.product.model"] == "sdk_gphone64_x86_64"
    assert props["ro.product.manufacturer"] == "Google"
    assert props["ro.build.fingerprint"].endswith(":userdebug/dev-keys")
    assert props["ro.build.version.base_os"] == ""
    assert len(props) == 22


def test_getprop_value_with_brackets_and_crlf() -> None:
    text = "[ro.build.description]: [x-user 14 [release-keys]]\r\n[a.b]: [1]\r\n"
    props = parsers.parse_getprop(text)
    assert props == {"ro.build.description": "x-user 14 [release-keys]", "a.b": "1"}


def test_getprop_multiline_value_is_joined() -> None:
    props = parsers.parse_getprop("[x.motd]: [line one\nline two]\n[y]: [2]\n")
    assert props == {"x.motd": "line one\nline two", "y": "2"}


def test_service_list_reads_indented_names_only() -> None:
    text = "Currently running services:\n  activity\n  bluetooth_manager\n  media_session\n"
    assert parsers.parse_service_list(text) == {"activity", "bluetooth_manager", "media_session"}


def test_help_lists_command_matches_subcommand_lines_only() -> None:
    help_text = "usage: cmd notification SUBCMD [args]\n\nSUBCMDs:\n  allow_listener COMPONENT\n  set_dnd [on|none (same as on)|priority|alarms|all|off (same as all)]\n"
    assert parsers.help_lists_command(help_text, "set_dnd")
    assert parsers.help_lists_command(help_text, "allow_listener")
    assert not parsers.help_lists_command(help_text, "allow_dnd")
    assert not parsers.help_lists_command(help_text, "SUBCMD")


def test_features_split_on_commas() -> None:
    assert parsers.parse_features("shell_v2,cmd,stat_v2\n") == {"shell_v2", "cmd", "stat_v2"}


def test_wifi_state_line_of_dumpsys_wifi() -> None:
    # The line as WifiServiceImpl.dump prints it ("Wi-Fi is " + the WIFI_STATE_* name); no
    # captured phone output in tests/fixtures yet, so these texts follow the AOSP source.
    text = "Wi-Fi is disabling\nStay-awake conditions: 0\nmInIdleMode false\n"
    assert wifi.parse_wifi_state(text) == "disabling"
    assert wifi.parse_wifi_state("ClientModeManager:\n  Wi-Fi is enabled\r\n") == "enabled"
    assert wifi.parse_wifi_state("Can't find service: wifi\n") is None
    assert wifi.parse_wifi_state("Wi-Fi is enabled but scanning\n") is None


def test_wifi_on_setting_as_a_state() -> None:
    # WifiSettingsStore: 0 off, 1 on, 2 on in airplane mode, 3 off by airplane mode
    words = {v: wifi.wifi_on_state(v) for v in (0, 1, 2, 3, 7, None)}
    assert words == {0: "disabled", 1: "enabled", 2: "enabled", 3: "disabled", 7: None, None: None}


def test_brightness_mode_setting_as_automatic_or_manual() -> None:
    # ``settings get`` prints the value on one line, ``null`` when unset (SettingsService,
    # as in tests/fixtures/android/real/settings-huawei-figal00-bluetooth_on.txt); 0 manual,
    # 1 automatic (Settings.System.SCREEN_BRIGHTNESS_MODE_*); no captured brightness output yet.
    modes = {t: brightness.parse_brightness_mode(t) for t in ("0\n", "1\r\n", "null\n", "2\n", "")}
    assert modes == {"0\n": False, "1\r\n": True, "null\n": None, "2\n": None, "": None}
