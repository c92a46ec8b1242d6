"""Parsers of device output, fed captured real output (tests/fixtures/android/README.md)."""

from __future__ import annotations

from pathlib import Path

from phoned.device import parsers
from phoned.device.methods import apps, brightness, notifications, wifi

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


# ---- apps (device/methods/apps.py) -------------------------------------------------------

# appium/appium#11307 (2018, API 26-28 ``ActivityStackSupervisor`` frames; stderr, exit 255),
# the first line of the captured stderr.
_DENIAL = (
    "Permission Denial: starting Intent { flg=0x10000000 cmp=com.kingnet.fiveline/.ui.main."
    "MainActivity } from null (pid=19537, uid=2000) not exported from uid 10246"
)


def test_start_refusal_reads_the_security_exception_line() -> None:
    text = f"Security exception: {_DENIAL}\n\njava.lang.SecurityException: {_DENIAL}\n"
    assert apps.start_refusal(text) == f"Security exception: {_DENIAL}"


def test_start_refusal_reads_the_exception_form_of_newer_builds() -> None:
    """appium/appium#19281 (ActivityTaskSupervisor frames: API 31+)."""
    text = f"Exception occurred while executing 'start':\njava.lang.SecurityException: {_DENIAL}\n"
    assert apps.start_refusal(text) == f"java.lang.SecurityException: {_DENIAL}"


def test_start_refusal_reads_unresolved_and_missing_class() -> None:
    unresolved = (FIXTURES / "real" / "am_start-pixel2-unresolved.txt").read_text()
    assert apps.start_refusal(unresolved).startswith(
        "Error: Activity not started, unable to resolve Intent { act=android.intent.action.MAIN"
    )
    missing = (
        "Starting: Intent { cmp=com.android.settings/.Nope }\nError type 3\n"
        "Error: Activity class {com.android.settings/com.android.settings.Nope} does not exist.\n"
    )
    assert apps.start_refusal(missing) == (
        "Error: Activity class {com.android.settings/com.android.settings.Nope} does not exist."
    )
    ok = (FIXTURES / "real" / "am_start-29-emulator-W-ok.txt").read_text()
    assert apps.start_refusal(ok) is None


def test_package_lines_of_pm_path_and_pm_list() -> None:
    # pm path: one package: line per APK (split APKs give several); nothing when not installed
    text = "package:/data/app/~~a==/com.example.notes-b==/base.apk\npackage:/data/app/x/split_config.en.apk\n"
    assert len(apps.parse_package_lines(text)) == 2
    assert apps.parse_package_lines("") == []
    assert apps.parse_package_lines("package:com.example.notes\npackage:com.example.notes2\n") == [
        "com.example.notes",
        "com.example.notes2",
    ]


def test_components_of_query_activities_and_resolve_activity() -> None:
    # PackageManagerShellCommand.printResolveInfo: --components prints flattenToShortString
    text = "com.android.settings/.Settings\ncom.google.android.dialer/.extensions.GoogleDialtactsActivity\n"
    assert parsers.parse_components(text) == [
        ("com.android.settings", "com.android.settings.Settings"),
        (
            "com.google.android.dialer",
            "com.google.android.dialer.extensions.GoogleDialtactsActivity",
        ),
    ]
    assert parsers.parse_components("No activities found\n") == []
    brief = (
        "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
        "com.google.android.apps.nexuslauncher/.NexusLauncherActivity\n"
    )
    assert parsers.parse_components(brief)[-1][0] == "com.google.android.apps.nexuslauncher"


def test_notifications_of_an_android_9_noredact_dump() -> None:
    """Android 9 (StagOS P @e57f169b): flat fields, ``appImportanceLocked`` glued to the header's
    key, no ``when=``; the key comes from the record's own line, the time from mUpdateTimeMs."""
    dump = (
        "Current Notification Manager state:\n"
        "  Notification List:\n"
        "    NotificationRecord(0x0a11ce00: pkg=org.telegram.messenger user=UserHandle{0} id=3 "
        "tag=null importance=3 key=0|org.telegram.messenger|3|null|10120appImportanceLocked=false"
        ": Notification(channel=x pri=0 contentView=null vibrate=null sound=null defaults=0x0 "
        "flags=0x10 color=0x00000000 vis=PRIVATE))\n"
        "      uid=10120 userId=0\n"
        "      key=0|org.telegram.messenger|3|null|10120\n"
        "      color=0x00000000      timeout=unknown\n"
        "      extras={\n"
        "          android.title=SpannableString (Анна (работа))\n"
        "          android.text=String (первая строка\n"
        "вторая)\n"
        "          android.subText=null\n"
        "      }\n"
        "      mUpdateTimeMs=1700000000123\n"
        "  \n"
        "  mSoundNotificationKey=null\n"
    )
    [record] = notifications.parse_notifications(dump) or []
    assert record.key == "0|org.telegram.messenger|3|null|10120"
    assert (record.title, record.text) == ("Анна (работа)", "первая строка\nвторая")
    assert record.posted_ms == 1700000000123 and record.redacted is False


def test_notifications_none_posted_and_not_a_dump() -> None:
    assert (
        notifications.parse_notifications(
            "Current Notification Manager state:\n  mSystemReady=true\n"
        )
        == []
    )
    assert notifications.parse_notifications("Can't find service: notification\n") is None


def test_notifications_redacted_forms_of_9_11_and_12_plus() -> None:
    for form in ("String", "String [length=5]"):
        dump = (
            "Current Notification Manager state:\n  Notification List:\n"
            "    NotificationRecord(0x1: pkg=a.b user=UserHandle{0} id=1 tag=null importance=3 "
            "key=0|a.b|1|null|1: Notification(channel=c))\n"
            "      key=0|a.b|1|null|1\n      extras={\n"
            f"          android.title={form}\n      }}\n      when=5\n"
        )
        [record] = notifications.parse_notifications(dump) or []
        assert record.title is None and record.redacted is True and record.posted_ms == 5


def test_notifications_read_through_a_pty_with_crlf_line_ends() -> None:
    dump = (
        "Current Notification Manager state:\r\n  Notification List:\r\n"
        "    NotificationRecord(0x1: pkg=a.b user=UserHandle{0} id=1 tag=null importance=3 "
        "key=0|a.b|1|null|1: Notification(channel=c))\r\n"
        "      key=0|a.b|1|null|1\r\n      extras={\r\n"
        "          android.title=String (Привет)\r\n      }\r\n      mUpdateTimeMs=7\r\n  \r\n"
        "  mArchive=Archive (1 notifications)\r\n"
    )
    [record] = notifications.parse_notifications(dump) or []
    assert (record.key, record.title, record.posted_ms) == ("0|a.b|1|null|1", "Привет", 7)
