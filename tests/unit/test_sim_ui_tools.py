"""The screen's shell tools: outputs against cited formats, and their effects on the model."""

from __future__ import annotations

import io as _io
from pathlib import Path

import pytest
from helpers import sms_intent
from phoned.sim.android.packages import PackageManager
from phoned.sim.android.sms import SmsProvider
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import BufferSink, ToolIO, find_tool
from phoned.sim.ui.automation import UiCosts
from PIL import Image

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"


class FakePackages(PackageManager):
    """Grants and roles for the UI tests, independent of the package model's progress."""

    def __init__(self) -> None:
        self.granted: set[tuple[str, str]] = set()
        self.packages = {}  # no manifests: launcher activities come from the UI's own table
        self.disabled: set[str] = set()

    def is_installed(self, package: str) -> bool:
        return package.startswith(("com.google.android", "com.android", "com.example"))

    def is_granted(self, package: str, permission: str) -> bool:
        return (package, permission) in self.granted

    def grant(self, package: str, permission: str) -> None:
        self.granted.add((package, permission))

    def default_sms_package(self) -> str | None:
        return "com.google.android.apps.messaging"


class FakeSms(SmsProvider):
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []

    def insert(self, box: str, address: str, body: str) -> int:
        self.rows.append((box, address, body))
        return len(self.rows)

    def insert_values(self, values: dict) -> int:  # the composer's send: type 2 is "sent"
        return self.insert({2: "sent"}[values["type"]], values["address"], values["body"])


@pytest.fixture
def phone() -> Phone:
    p = Phone(sdk=34)
    p.ui.automation.costs = UiCosts.none()
    p.add_service(PackageManager, FakePackages())
    p.add_service(SmsProvider, FakeSms())
    return p


def run(phone: Phone, *argv: str, env: dict[str, str] | None = None) -> tuple[int, bytes, str]:
    out, err = BufferSink(), BufferSink()
    tool = find_tool(argv[0])
    assert tool is not None, argv[0]
    code = tool(ToolIO(phone, out, err, env=env or {}), list(argv))
    return code, bytes(out.data), err.data.decode("utf-8")


def text(result: tuple[int, bytes, str]) -> str:
    return result[1].decode("utf-8")


def test_am_start_unresolved_matches_captured_output(phone: Phone) -> None:
    expected = (FIXTURES / "ui-am-start-unresolved.txt").read_text().split("---\n", 1)[1]
    code, out, err = run(
        phone,
        "am",
        "start",
        "-a",
        "android.intent.action.MAIN",
        "-c",
        "android.intent.category.LAUNCHER",
        "xxx",
    )
    starting, error = expected.splitlines()
    assert out.decode() == starting + "\n"
    assert err == error + "\n"
    assert code == 1  # API 34; see am.py


def test_am_start_unresolved_exits_zero_on_old_releases() -> None:
    old = Phone(sdk=28)
    code, _out, err = run(old, "am", "start", "-a", "com.example.NOPE")
    assert code == 0 and err.startswith("Error: Activity not started, unable to resolve Intent {")


def test_am_start_smsto_masks_number_and_opens_composer(phone: Phone) -> None:
    body = "multi\nline \"quoted\" 'x' $HOME `id` ; rm -rf / ‏مرحبا‏ 👍🏽" + "y" * 10_000
    code, out, _err = run(
        phone,
        "am",
        "start",
        *sms_intent("+1-555-0100", body),
    )
    assert code == 0
    assert out.decode() == (
        "Starting: Intent { act=android.intent.action.SENDTO dat=smsto:xx-xxx-xxxx (has extras) }\n"
    )
    top = phone.ui.top()
    assert top.cls.endswith(".ui.conversation.ConversationActivity")
    assert top.state == {"recipient": "+1-555-0100", "body": body}


def test_am_start_wait_block_per_sdk(phone: Phone) -> None:
    out = text(run(phone, "am", "start", "-W", "-n", "com.android.settings/.Settings"))
    lines = out.splitlines()
    assert lines[0] == "Starting: Intent { cmp=com.android.settings/.Settings }"
    assert lines[1:3] == ["Status: ok", "LaunchState: COLD"]
    assert lines[3] == "Activity: com.android.settings/.Settings"
    assert lines[4].startswith("TotalTime: ") and lines[-1] == "Complete"
    old = Phone(sdk=28)
    old_lines = text(
        run(old, "am", "start", "-W", "-n", "com.android.settings/.Settings")
    ).splitlines()
    assert "LaunchState" not in "".join(old_lines) and old_lines[3].startswith("ThisTime: ")


def test_am_start_missing_class(phone: Phone) -> None:
    code, _out, err = run(phone, "am", "start", "-n", "com.android.settings/.Nope")
    assert err == (
        "Error type 3\nError: Activity class "
        "{com.android.settings/com.android.settings.Nope} does not exist.\n"
    )
    assert code == 1


def test_settings_intents_open_their_screens(phone: Phone) -> None:
    run(
        phone,
        "am",
        "start",
        "-a",
        "android.settings.APPLICATION_DETAILS_SETTINGS",
        "-d",
        "package:com.example.notes",
    )
    assert phone.ui.top().state == {"package": "com.example.notes"}
    run(phone, "am", "start", "-a", "android.settings.ACTION_NOTIFICATION_LISTENER_SETTINGS")
    xml = phone.ui.hierarchy_xml(u2=False)
    assert 'text="Device &amp; app notifications"' in xml


def test_notification_listener_toggle_writes_secure_setting(phone: Phone) -> None:
    run(phone, "am", "start", "-a", "android.settings.ACTION_NOTIFICATION_LISTENER_SETTINGS")
    component = phone.ui.listener_apps[0][1]
    phone.ui.tap(540, 265 + 95)
    assert phone.settings.get("secure", "enabled_notification_listeners") == component
    phone.ui.tap(540, 265 + 95)
    assert phone.settings.get("secure", "enabled_notification_listeners") == ""


def test_compose_send_inserts_sent_message_and_clears(phone: Phone) -> None:
    run(
        phone,
        "am",
        "start",
        *sms_intent("5550100", "see you at 8"),
    )
    points: list[str] = []
    phone.fault_point = points.append  # type: ignore[method-assign,assignment]
    code, _o, _e = run(phone, "input", "tap", "990", "2120")
    assert code == 0
    assert phone.sms.rows == [("sent", "5550100", "see you at 8")]
    assert points == ["sms.after_send_tap"]
    assert phone.ui.top().state["body"] == ""
    assert [e.argv for e in phone.log.entries("click")] == [("tap", "990", "2120")]


def test_permission_dialog_allow_grants(phone: Phone) -> None:
    phone.faults.permission_dialog_packages.add("com.example.notes")
    phone.ui.permission_requests["com.example.notes"] = "android.permission.CAMERA"
    run(phone, "am", "start", "-n", "com.example.notes/.MainActivity")
    xml = phone.ui.hierarchy_xml(u2=False)
    assert 'package="com.google.android.permissioncontroller"' in xml
    assert 'text="Allow Notes to take pictures and record video?"' in xml
    assert (
        'resource-id="com.android.permissioncontroller:id/permission_allow_foreground_only_button"'
        in xml
    )
    phone.ui.tap(540, 1165)  # "While using the app"
    assert phone.packages.is_granted("com.example.notes", "android.permission.CAMERA")
    assert phone.ui.pending_permission is None


def test_permission_dialog_sdk28_lives_in_packageinstaller() -> None:
    old = Phone(sdk=28)
    old.add_service(PackageManager, FakePackages())
    old.faults.permission_dialog_packages.add("com.example.notes")
    run(old, "am", "start", "-n", "com.example.notes/.MainActivity")
    xml = old.ui.hierarchy_xml(u2=False)
    assert 'resource-id="com.android.packageinstaller:id/permission_deny_button"' in xml
    old.ui.tap(540, 1165)  # DENY is first on API 28
    assert not old.packages.is_granted("com.example.notes", "android.permission.CAMERA")
    assert old.ui.pending_permission is None


def test_keyguard_swipe_and_secure_lock(phone: Phone) -> None:
    run(phone, "input", "keyevent", "KEYCODE_SLEEP")
    assert not phone.ui.screen_on and phone.ui.locked
    assert "mWakefulness=Asleep" in text(run(phone, "dumpsys", "power"))
    run(phone, "input", "keyevent", "224")
    assert 'package="com.android.systemui"' in phone.ui.hierarchy_xml(u2=False)
    phone.ui.secure_lock = True
    run(phone, "input", "swipe", "540", "2000", "540", "500")
    assert phone.ui.locked
    phone.ui.secure_lock = False
    run(phone, "input", "swipe", "540", "2000", "540", "500")
    assert not phone.ui.locked


def test_input_text_types_ascii_and_rejects_unicode(phone: Phone) -> None:
    run(phone, "am", "start", "-a", "android.intent.action.SENDTO", "-d", "smsto:1")
    assert run(phone, "input", "text", "hello%sworld")[0] == 0
    assert phone.ui.top().state["body"] == "hello world"
    code, _o, err = run(phone, "input", "text", "café")
    assert code == 255 and "NullPointerException" in err


def test_wm_and_dumpsys_window_focus(phone: Phone) -> None:
    assert text(run(phone, "wm", "size")) == "Physical size: 1080x2400\n"
    assert text(run(phone, "wm", "density")) == "Physical density: 420\n"
    out = text(run(phone, "dumpsys", "window", "windows"))
    assert (
        "u0 com.google.android.apps.nexuslauncher/"
        "com.google.android.apps.nexuslauncher.NexusLauncherActivity}"
    ) in out
    acts = text(run(phone, "dumpsys", "activity", "activities"))
    assert "  ResumedActivity: ActivityRecord{" in acts
    assert "nexuslauncher/.NexusLauncherActivity t" in acts


def test_uiautomator_dump_writes_file_with_the_real_typo(phone: Phone) -> None:
    code, out, _err = run(phone, "uiautomator", "dump")
    assert code == 0 and out == b"UI hierchary dumped to: /sdcard/window_dump.xml\n"
    assert phone.fs.read("/sdcard/window_dump.xml").startswith(b"<?xml version='1.0'")


def test_screencap_png_is_a_full_size_image(phone: Phone) -> None:
    code, out, _err = run(phone, "screencap", "-p")
    assert code == 0 and out.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(_io.BytesIO(out))
    assert image.size == (1080, 2400)
    phone.ui.sleep()
    dark = Image.open(_io.BytesIO(run(phone, "screencap", "-p")[1]))
    assert dark.getextrema() == ((0, 0), (0, 0), (0, 0))


def test_monkey_launches_and_reports_missing(phone: Phone) -> None:
    launcher = ("-c", "android.intent.category.LAUNCHER")
    code, out, _err = run(
        phone, "monkey", "-p", "com.google.android.apps.messaging", *launcher, "1"
    )
    assert code == 0 and b"Events injected: 1" in out
    assert phone.ui.top().cls.endswith(".ui.ConversationListActivity")
    code, _out, err = run(phone, "monkey", "-p", "com.nope", "1")
    assert code == 251 and "No activities found to run" in err


def test_app_process_without_jar_aborts(phone: Phone) -> None:
    classpath = {"CLASSPATH": "/data/local/tmp/u2.jar"}
    code, _out, err = run(phone, "app_process", "/", "com.wetest.uia2.Main", env=classpath)
    assert code == 134 and err.startswith("Aborted")


def test_dumpsys_window_prints_only_the_section_asked_for() -> None:
    phone = Phone(sdk=34)
    phone.ui.locked = True
    _, policy, _ = run(phone, "dumpsys", "window", "policy")
    text = policy.decode()
    assert text.startswith("WINDOW MANAGER POLICY STATE (dumpsys window policy)")
    assert "showing=true" in text and "WINDOW MANAGER WINDOWS" not in text
    _, windows, _ = run(phone, "dumpsys", "window", "w")
    assert windows.decode().startswith("WINDOW MANAGER WINDOWS") and b"POLICY" not in windows
    _, everything, _ = run(phone, "dumpsys", "window")
    full = everything.decode()
    assert full.index("WINDOW MANAGER POLICY STATE") < full.index("WINDOW MANAGER WINDOWS")
