"""Parsers used by the device actions, fed captured or AOSP-derived real output.

Fixtures live in tests/fixtures/android/ (each cites its device/build or source); short
inline texts cite their AOSP source beside them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from phoned.device import parsers, phone_numbers, ui_hierarchy
from phoned.device.methods import bluetooth, dnd, volume

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"


def _fixture(name: str) -> str:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("##"))


def test_settings_get_null_and_numbers() -> None:
    # SettingsService.java prints String.valueOf(value): "null" for a missing key
    assert parsers.parse_settings_value("null\n") is None
    assert parsers.parse_settings_int("2\n") == 2
    assert parsers.parse_settings_int("null\n") is None
    assert parsers.parse_colon_list("a/a.B:b/b.C\n") == ["a/a.B", "b/b.C"]
    assert parsers.parse_colon_list("\n") == []


def test_notification_errors_that_exit_zero() -> None:
    # NotificationShellCmd: every failure inside the try prints this prefix, exit 0
    assert dnd.notification_cmd_failed(
        "Error occurred. Check logcat for details. Invalid filter: 0\n"
    )
    assert not dnd.notification_cmd_failed("")


def test_bluetooth_manager_dump_android_13_layout() -> None:
    # BluetoothManagerService.dump (packages/modules/Bluetooth, Android 13): masked address
    text = (
        "Bluetooth Status\n  enabled: false\n  state: TURNING_ON\n"
        "  address: XX:XX:XX:XX:82:10\n  name: Pixel 6\n  time since enabled: 00:00:00.120\n"
    )
    assert bluetooth.parse_bluetooth_state(text) == "TURNING_ON"
    assert bluetooth.parse_bluetooth_enabled(text) is False
    # service manager reply when no bluetooth_manager is registered (no hardware)
    assert parsers.service_missing("Can't find service: bluetooth_manager\n")
    assert not parsers.service_missing(text)


def test_volume_get_of_both_tools() -> None:
    r = volume.parse_volume_get(_fixture("media_session-34-volume-get.txt"))
    assert (r.index, r.min_index, r.max_index) == (5, 0, 15) if r else False
    r28 = volume.parse_volume_get(_fixture("media-28-volume-set-get.txt"))
    assert r28 == parsers.VolumeReading(9, 0, 15)
    assert volume.parse_volume_get("Error: invalid volume index 99 for stream 3") is None


def test_dumpsys_audio_stream_blocks() -> None:
    for name in ("dumpsys-28-audio-music.txt", "dumpsys-34-audio-music.txt"):
        streams = parsers.parse_audio_streams(_fixture(name))
        assert streams == {"STREAM_MUSIC": parsers.VolumeReading(5, 0, 15)}


def test_dumpsys_package_install_and_runtime_grants() -> None:
    perms = parsers.parse_package_permissions(_fixture("dumpsys-33-package-notes-permissions.txt"))
    assert perms["install"]["android.permission.ACCESS_NOTIFICATION_POLICY"] is True
    assert perms["runtime"] == {
        "android.permission.CAMERA": True,
        "android.permission.POST_NOTIFICATIONS": False,
    }


def test_role_holders_and_content_rows() -> None:
    # RoleShellCommand joins holders with ";"
    assert parsers.parse_role_holders("com.a;com.b\n") == ["com.a", "com.b"]
    assert parsers.parse_role_holders("\n") == []
    text = _fixture("content-34-sms-query-projection.txt")
    rows = parsers.parse_content_rows(text, ("_id", "address", "body", "type"))
    assert rows[0] == {
        "_id": "2",
        "address": "+15557654321",
        "body": "Hi, see you\nat 5",
        "type": "2",
    }
    assert rows[1]["body"] == "hello"
    assert parsers.parse_content_rows("No result found.\n", ("_id",)) == []


def test_body_last_keeps_commas_and_newlines() -> None:
    text = "Row: 0 _id=7, address=+1555, date=1700000000000, body=a, body=b\nRow: 1 x\n"
    rows = parsers.parse_content_rows(text, ("_id", "address", "date", "body"))
    assert rows[0]["body"] == "a, body=b\nRow: 1 x"  # a hostile body is one value


def test_keyguard_per_sdk() -> None:
    # API 28 PhoneWindowManager.dump
    assert parsers.parse_keyguard_showing(
        "    mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=true"
    )
    # API 29+: KeyguardServiceDelegate block
    text = "    mShowingDream=false mDreamingLockscreen=false\n    KeyguardServiceDelegate\n      showing=true\n"
    assert parsers.parse_keyguard_showing(text) is True
    assert parsers.parse_keyguard_showing("nothing") is None


def test_power_and_foreground() -> None:
    assert parsers.parse_screen_on("  mWakefulness=Asleep\n") is False
    focus = parsers.parse_foreground("  mCurrentFocus=Window{36f3969 u0 com.a.b/com.a.b.Main}\n")
    assert focus is not None and (focus.package, focus.activity) == ("com.a.b", "com.a.b.Main")
    app = parsers.parse_foreground("  mFocusedApp=ActivityRecord{8e07961 u0 com.x/.Main t188}\n")
    assert app is not None and (app.package, app.activity, app.user) == ("com.x", "com.x.Main", 0)


def test_foreground_behind_the_keyguard_names_the_window_and_the_app() -> None:
    text = (
        "  mCurrentFocus=Window{9e50e52 u0 NotificationShade}\n"
        "  mFocusedApp=ActivityRecord{8e07961 u0 com.x/.Main t188}\n"
    )
    found = parsers.parse_foreground(text)
    assert found is not None
    assert (found.package, found.window) == ("com.x", "NotificationShade")


def test_foreground_of_a_work_profile_app_keeps_its_user() -> None:
    text = "  mCurrentFocus=Window{5c4591 u10 com.x/com.x.Main}\n"
    found = parsers.parse_foreground(text)
    assert found is not None and found.user == 10


def test_foreground_with_no_focus_is_known_empty_and_no_line_is_unknown() -> None:
    empty = parsers.parse_foreground("  mCurrentFocus=null\n  mFocusedApp=null\n")
    assert empty is not None and empty.package is None
    assert parsers.parse_foreground("WINDOW MANAGER WINDOWS (dumpsys window windows)\n") is None
    assert parsers.parse_foreground("") is None


def test_foreground_picks_the_top_focused_display() -> None:
    displays = (
        "  Display: mDisplayId=2 (organized)\n  mCurrentFocus=null\n  mFocusedApp=null\n"
        "  Display: mDisplayId=0 (organized)\n"
        "  mCurrentFocus=Window{1 u0 com.a/com.a.Main}\n"
        "  mFocusedApp=ActivityRecord{2 u0 com.a/.Main t3}\n"
    )
    found = parsers.parse_foreground(displays)
    assert found is not None and (found.package, found.display) == ("com.a", 0)
    on_two = displays.replace("mDisplayId=2 (organized)\n  mCurrentFocus=null", (
        "mDisplayId=2 (organized)\n  mCurrentFocus=Window{4 u0 com.cast/com.cast.Show}"
    )) + "  mTopFocusedDisplayId=2\n"  # fmt: skip
    found = parsers.parse_foreground(on_two)
    assert found is not None and (found.package, found.display) == ("com.cast", 2)


def test_foreground_reads_the_android_14_activity_record_shape() -> None:
    # openatx/uiautomator2#952 (Android 13/14): ``ActivityRecord{HASH u0 pkg/.Cls} tN}``
    text = "  mFocusedApp=ActivityRecord{d9b8281 u0 tv.danmaku.bili/.MainActivityV2} t57}\n"
    found = parsers.parse_foreground(text)
    assert found is not None and found.activity == "tv.danmaku.bili.MainActivityV2"


def test_am_start_errors() -> None:
    assert parsers.am_start_failed(
        "Starting: Intent { }\nError: Activity not started, unable to resolve Intent { }\n"
    )
    assert parsers.am_start_failed("Starting: Intent { }\nStatus: ok\nComplete\n") is None


DIALOG = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" resource-id="com.android.permissioncontroller:id/grant_dialog" '
    'class="android.widget.LinearLayout" package="com.google.android.permissioncontroller" '
    'content-desc="" focused="false" bounds="[0,800][1080,1600]">'
    '<node index="0" text="Allow Notes to take pictures and record video?" '
    'resource-id="com.android.permissioncontroller:id/permission_message" class="android.widget.TextView" '
    'package="com.google.android.permissioncontroller" content-desc="" focused="false" bounds="[0,900][1080,1000]" />'
    '<node index="1" text="While using the app" resource-id="com.android.permissioncontroller:id/'
    'permission_allow_foreground_only_button" class="android.widget.Button" '
    'package="com.google.android.permissioncontroller" content-desc="" focused="false" bounds="[0,1100][1080,1200]" />'
    '<node index="2" text="Don&apos;t allow" resource-id="com.android.permissioncontroller:id/'
    'permission_deny_button" class="android.widget.Button" '
    'package="com.google.android.permissioncontroller" content-desc="" focused="false" bounds="[0,1300][1080,1400]" />'
    "</node></hierarchy>"
)


def test_permission_dialog_detector() -> None:
    # ids from PermissionController res/layout grant_permissions.xml
    found = ui_hierarchy.find_permission_dialog(DIALOG)
    assert found is not None
    assert found["package"] == "com.google.android.permissioncontroller"
    assert found["message"].startswith("Allow Notes")
    assert found["buttons"] == {
        "permission_allow_foreground_only_button": "While using the app",
        "permission_deny_button": "Don't allow",
    }
    composer = DIALOG.replace("permissioncontroller", "messaging").replace("permission_", "x_")
    assert ui_hierarchy.find_permission_dialog(composer) is None


def test_hierarchy_text_escapes_and_digest() -> None:
    xml = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"1\">"
        '<node text="a&#10;b &amp; &#128512;" resource-id="p:id/compose_message_text" '
        'class="android.widget.EditText" package="p" content-desc="" focused="true" bounds="[0,0][10,20]" />'
        '<node text="12:00" resource-id="com.android.systemui:id/clock" class="android.widget.TextView" '
        'package="com.android.systemui" content-desc="" focused="false" bounds="[0,0][5,5]" /></hierarchy>'
    )
    nodes = ui_hierarchy.parse_nodes(xml)
    assert nodes[0].text == "a\nb & 😀" and nodes[0].center == (5, 10)
    assert ui_hierarchy.rotation(xml) == 1
    assert ui_hierarchy.app_packages(nodes) == ["p"]
    assert ui_hierarchy.digest(nodes) == ui_hierarchy.digest(nodes[:1])  # clock left out


def test_runtime_permissions_are_read_for_one_user() -> None:
    # layout of Settings.dumpPackageLPr with an owner and a work profile (User 0 / User 10)
    text = (
        "Packages:\n"
        "  Package [com.example.notes] (1a2b3c):\n"
        "    install permissions:\n"
        "      android.permission.INTERNET: granted=true\n"
        "    User 0: ceDataInode=1 installed=true hidden=false\n"
        "      runtime permissions:\n"
        "        android.permission.POST_NOTIFICATIONS: granted=true, flags=[ USER_SET ]\n"
        "    User 10: ceDataInode=2 installed=true hidden=false\n"
        "      runtime permissions:\n"
        "        android.permission.POST_NOTIFICATIONS: granted=false, flags=[ ]\n"
    )
    owner = parsers.parse_package_permissions(text)
    assert owner["runtime"] == {"android.permission.POST_NOTIFICATIONS": True}
    assert owner["install"] == {"android.permission.INTERNET": True}
    work = parsers.parse_package_permissions(text, user=10)
    assert work["runtime"] == {"android.permission.POST_NOTIFICATIONS": False}


def test_samsung_wakefulness_line() -> None:
    # flutter/flutter#97235: some Samsung builds print getWakefulnessLocked()= only
    assert parsers.parse_screen_on("  getWakefulnessLocked()=Awake\n") is True
    assert parsers.parse_screen_on("  getWakefulnessLocked()=Asleep\n") is False


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("+15551234567", "+1 (555) 123-4567", True),
        ("+447700900123", "07700 900123", True),  # E.164 vs national with trunk 0
        ("5551234567", "+15551234567", True),
        ("+15551234567", "+15551234568", False),
        ("123456", "0123456", False),  # under 7 digits only an exact match counts
        ("12345", "912345", False),
        ("", "", False),
    ],
)
def test_same_phone_number(a: str, b: str, same: bool) -> None:
    # the one comparison moved to device.phone_numbers (issue 33); no region: as before
    assert phone_numbers.same_number(a, b) is same


def test_audio_stream_without_stream_volume_and_two_devices_is_left_out() -> None:
    # the STREAM_ALARM block of the Shield capture: two devices, no streamVolume: ambiguous
    text = (
        "- STREAM_ALARM:\n   Muted: false\n   Min: 1\n   Max: 7\n"
        "   Current: 2 (speaker): 4, 400 (hdmi): 7\n   Devices: speaker, hdmi\n"
    )
    assert parsers.parse_audio_streams(text) == {}


def test_send_buttons_of_other_messaging_apps() -> None:
    from phoned.device.actions.composer import compose_field
    from phoned.device.methods.sms_send import choose_send
    from phoned.device.ui_hierarchy import parse_nodes

    compose_ui = parse_nodes(
        '<hierarchy><node resource-id="Compose:Draft:Send" class="android.view.View" '
        'package="com.google.android.apps.messaging" bounds="[900,2000][1000,2100]"/></hierarchy>'
    )
    found, _ = choose_send(compose_ui, None, None)  # no compose field: the known tag decides
    assert found is not None and found.center == (950, 2050)
    samsung = parse_nodes(
        '<hierarchy><node resource-id="com.samsung.android.messaging:id/message_edit_text" '
        'class="android.widget.EditText" text="hi" package="com.samsung.android.messaging" '
        'bounds="[0,2000][800,2100]"/><node resource-id="com.samsung.android.messaging:id/'
        'send_button1" content-desc="보내기" package="com.samsung.android.messaging" '
        'bounds="[900,2000][1000,2100]"/></hierarchy>'
    )
    field = compose_field(samsung, "com.samsung.android.messaging")
    assert field is not None and field.text == "hi"
    button, why = choose_send(samsung, "ko-KR", None)  # one SIM's button: that one
    assert button is not None and button.content_desc == "보내기", why


def test_a_send_button_per_sim_is_chosen_by_the_task_never_guessed() -> None:
    """Samsung Messages builds with a button per SIM (``send_button1`` / ``send_button2``,
    public automation scripts, docs/android-variants.md V120): the task's ``sim`` picks one;
    with two and no ``sim`` nothing is tapped; a single-button app cannot honour a ``sim``."""
    from phoned.device.methods.sms_send import choose_send
    from phoned.device.ui_hierarchy import parse_nodes

    pkg = "com.samsung.android.messaging"
    two = parse_nodes(
        f'<hierarchy><node resource-id="{pkg}:id/send_button1" package="{pkg}" '
        f'bounds="[700,2000][850,2100]"/><node resource-id="{pkg}:id/send_button2" '
        f'package="{pkg}" bounds="[900,2000][1000,2100]"/></hierarchy>'
    )
    button, _ = choose_send(two, "ko-KR", 2)
    assert button is not None and button.resource_id.endswith("send_button2")
    button, why = choose_send(two, "ko-KR", None)
    assert button is None and "params.sim" in why
    one = parse_nodes(
        f'<hierarchy><node resource-id="{pkg}:id/send_button" content-desc="전송" '
        f'package="{pkg}" bounds="[900,2000][1000,2100]"/></hierarchy>'
    )
    assert choose_send(one, "ko-KR", None)[0] is not None
    button, why = choose_send(one, "ko-KR", 1)
    assert button is None and "does not choose a SIM" in why


def test_a_send_button_found_by_its_description_in_the_phones_language() -> None:
    """No known id: the description is read in the app's own translation (AOSP Messaging
    ``sendButtonContentDescription`` ru "Отправить сообщение"; Samsung ``send_description``
    ko "전송"); a description no app ships is no send button. Since issue #33 a description
    only cross-checks the layout (``phoned.device.send_control``): it never picks a control alone."""
    from phoned.device.send_control import word_meaning

    assert word_meaning("Отправить сообщение", "ru-RU") == "send_button"
    assert word_meaning("전송", "ko-KR") == "send_button"
    assert word_meaning("Удалить", "ru-RU") is None
