"""Every parser on real Android output: tests/fixtures/android/real/ (issue #11).

Each file there is output a real phone or emulator printed, copied from the public source named
in its ``## origin:`` header (``## `` lines are stripped before parsing). ``CASES`` maps every
file to what each parser that applies must return: the truth of what the phone meant, never what
today's parser happens to say. Where a parser is wrong today the case is a strict xfail naming
what is wrong, so the suite stays green and the marker turns into a failure once it is fixed.
docs/android-variants.md lists every command, its variants and their sources.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from phoned.device import parsers, ui_hierarchy
from phoned.device.methods import bluetooth, dnd, notifications, volume
from phoned.device.parsers import VolumeReading

REAL = Path(__file__).parent.parent / "fixtures" / "android" / "real"
HEADER = "## "
REQUIRED_HEADERS = ("## origin: ", "## device: ", "## command: ")


def header_lines(name: str) -> list[str]:
    return [
        line for line in (REAL / name).read_text("utf-8").splitlines() if line.startswith(HEADER)
    ]


def load(name: str) -> str:
    """The captured output of ``name`` with its ``## `` provenance lines removed."""
    text = (REAL / name).read_text("utf-8")
    kept = [line for line in text.splitlines(keepends=True) if not line.startswith(HEADER)]
    return "".join(kept)


@dataclass(frozen=True)
class Raises:
    """The parser must refuse the text with this error."""

    error: type[Exception]


@dataclass(frozen=True)
class Case:
    """One parser on one real file, and the value the phone meant."""

    file: str
    read: Callable[[str], Any]
    expected: Any
    wrong_today: str | None = None  # what today's parser gets wrong (strict xfail)


def _locale(text: str) -> str:
    """The phone's language as ``DeviceConnection.identity`` reads it (V112)."""
    return parsers.phone_locale(text)


def identity(text: str) -> tuple[str, str, str]:
    """(manufacturer, SDK, release) as ``DeviceConnection.identity`` reads them from getprop."""
    props = parsers.parse_getprop(text)
    return (
        props.get("ro.product.manufacturer", ""),
        props.get("ro.build.version.sdk", ""),
        props.get("ro.build.version.release", ""),
    )


def foreground(text: str) -> tuple[str | None, str | None, int | None] | None:
    """(package, activity, user) of the app in front, None when the text cannot tell."""
    found = parsers.parse_foreground(text)
    return None if found is None else (found.package, found.activity, found.user)


def dump_refused(text: str) -> bool:
    """Whether ``uiautomator dump`` said it wrote no file (the text as its output, exit 0)."""
    return ui_hierarchy.dump_failure(text, "", 0) is not None


def query_error(text: str) -> str | None:
    """The error a ``content query`` printed instead of rows (``sms_send`` reads it first)."""
    return parsers.content_query_error(text)


def boot_reasons(text: str) -> str | None:
    """``persist.sys.boot.reason.history``: a value printed over several lines."""
    return parsers.parse_getprop(text).get("persist.sys.boot.reason.history")


def music_volume(text: str) -> VolumeReading | None:
    """STREAM_MUSIC from ``dumpsys audio``, the fallback volume read."""
    return parsers.parse_audio_streams(text).get("STREAM_MUSIC")


BT_PIXEL = "dumpsys_bluetooth_manager-pixel8pro-ble_on.txt"
BT_ONEPLUS = "dumpsys_bluetooth_manager-oneplus12-turning_off.txt"
BT_REDMI = "dumpsys_bluetooth_manager-33-redmi10a-lineage20-on.txt"
UNRESOLVED_FENIX = (
    "Error: Activity not started, unable to resolve Intent { act=android.intent.action.MAIN "
    "cat=[android.intent.category.LAUNCHER] flg=0x10000000 pkg=org.mozilla.fenix.performancetest }"
)
UNRESOLVED_DEEPLINK = (
    "Error: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW "
    "dat=exp://127.0.0.1:19004/--/details/3 flg=0x10000000 pkg=com.deeplinking }"
)

NOTIFY_TV = "dumpsys_notification-31plus-androidtv-redacted.txt"
NOTIFY_PIXEL = "dumpsys_notification-36-pixel-redacted.txt"
PIXEL_KEY = "0|android|2345|ChFBbmRyb2lkTG9ja1NjcmVlbhIRTm9TY3JlZW5Mb2NrSXNzdWUYAA==|1000"


def posted(text: str) -> list[tuple[str, str, str | None, str | None, int | None, bool]] | None:
    """(package, key, title, text, post time ms, redacted) of every record of the list."""
    found = notifications.parse_notifications(text)
    if found is None:
        return None
    return [(r.package, r.key, r.title, r.text, r.posted_ms, r.redacted) for r in found]


CASES: list[Case] = [
    # ---- notifications.list: dumpsys notification (without --noredact on both) ----------
    # Android 12-13 TV build: the USB debugging notification of user -1 (all users); title
    # and text redacted to their lengths; post time from mUpdateTimeMs.
    Case(
        NOTIFY_TV, posted, [("android", "-1|android|26|null|1000", None, None, 1706767655811, True)]
    ),
    # Pixel, Android 16: a tag with '=' in it; the key from the record's own key= line.
    Case(NOTIFY_PIXEL, posted, [("android", PIXEL_KEY, None, None, 1779530853650, True)]),
    # ---- Bluetooth: dumpsys bluetooth_manager -----------------------------------------
    # Pixel 8 Pro after disable(): classic Bluetooth off, the LE stack left up.
    Case(BT_PIXEL, bluetooth.parse_bluetooth_state, "BLE_ON"),
    Case(BT_PIXEL, bluetooth.parse_bluetooth_enabled, False),
    Case(BT_PIXEL, parsers.service_missing, False),
    Case(BT_ONEPLUS, bluetooth.parse_bluetooth_state, "TURNING_OFF"),
    Case(BT_ONEPLUS, bluetooth.parse_bluetooth_enabled, False),
    Case(BT_ONEPLUS, parsers.service_missing, False),
    # "  State: ON" of AdapterProperties further down must not be taken for the state line.
    Case(BT_REDMI, bluetooth.parse_bluetooth_state, "ON"),
    Case(BT_REDMI, bluetooth.parse_bluetooth_enabled, True),
    Case(BT_REDMI, parsers.service_missing, False),
    # Huawei, never enabled since boot: OFF, and the service not even bound.
    Case(
        "dumpsys_bluetooth_manager-huawei-figal00-off.txt", bluetooth.parse_bluetooth_state, "OFF"
    ),
    Case(
        "dumpsys_bluetooth_manager-huawei-figal00-off.txt", bluetooth.parse_bluetooth_enabled, False
    ),
    Case("settings-huawei-figal00-bluetooth_on.txt", parsers.parse_settings_int, 0),
    # ---- foreground: dumpsys window windows (API 28) / displays (API 29+) ----------------
    Case(
        "dumpsys_window_windows-28-grep-photos.txt",
        foreground,
        ("com.google.android.apps.photos", "com.google.android.apps.photos.home.HomeActivity", 0),
    ),
    # API 29+ `dumpsys window windows` has no focus lines (they moved to DisplayContent.dump,
    # `dumpsys window displays`): the text cannot tell what is in front, though the phones had
    # myer.com.android (am start -W: StartScreenActivity), bilibili and Firefox starting. The
    # SnapshotCache top apps and the hidden (mViewVisibility=0x8) launcher RecentsActivity in
    # these dumps are not in front: None is the only honest reading.
    Case("dumpsys_window_windows-29-emulator-no_focus.txt", foreground, None),
    Case("dumpsys_window_windows-33-bilibili-no_focus.txt", foreground, None),
    Case("dumpsys_window_windows-29-samsung-a70-no_focus.txt", foreground, None),
    Case(
        "dumpsys_window_displays-31plus-androiddemo.txt",
        foreground,
        ("com.hq.android.androiddemo", "com.hq.android.androiddemo.MainActivity", 0),
    ),
    Case(
        "dumpsys_window_displays-31-aosp-snapcam.txt",
        foreground,
        ("org.codeaurora.snapcam", "com.android.camera.CameraLauncher", 0),
    ),
    # Display blocks without focus lines (grep kept only the size lines): nothing to tell.
    Case("dumpsys_window_displays-34-grep-virtual_display_first.txt", foreground, None),
    Case(
        "dumpsys_window-grep-u10-factory.txt",
        foreground,
        (
            "com.google.android.factory.factory",
            "com.google.android.factory.factory.FactoryMainActivity",
            10,
        ),
    ),
    # ---- keyguard: dumpsys window policy ----------------------------------------------
    Case("dumpsys_window_policy-keyguard-swipe-locked.txt", parsers.parse_keyguard_showing, True),
    Case(
        "dumpsys_window-26-emulator-grep-lockscreen-locked.txt",
        parsers.parse_keyguard_showing,
        True,
    ),
    Case(
        "dumpsys_window-26-emulator-grep-lockscreen-unlocked.txt",
        parsers.parse_keyguard_showing,
        False,
    ),
    # ---- screen: dumpsys power --------------------------------------------------------
    Case("dumpsys_power-28-samsung-awake.txt", parsers.parse_screen_on, True),
    # ---- am start ---------------------------------------------------------------------
    Case("am_start-29-emulator-W-ok.txt", parsers.am_start_failed, None),
    Case("am_start-pixel2-unresolved.txt", parsers.am_start_failed, UNRESOLVED_FENIX),
    Case("am_start-W-unresolved-deeplink.txt", parsers.am_start_failed, UNRESOLVED_DEEPLINK),
    # ---- uiautomator dump: exit 0 either way; only the words tell -------------------------
    # DumpCommand prints its errors and returns (exit 0), leaving any older dump file in place.
    Case("uiautomator_dump-ok.txt", dump_refused, False),
    Case("uiautomator_dump-idle_error.txt", dump_refused, True),
    Case("uiautomator_dump-28-null_root.txt", dump_refused, True),
    # ... and its output is never a hierarchy.
    Case("uiautomator_dump-ok.txt", ui_hierarchy.parse_nodes, Raises(ui_hierarchy.HierarchyError)),
    Case(
        "uiautomator_dump-idle_error.txt",
        ui_hierarchy.parse_nodes,
        Raises(ui_hierarchy.HierarchyError),
    ),
    Case(
        "uiautomator_dump-28-null_root.txt",
        ui_hierarchy.parse_nodes,
        Raises(ui_hierarchy.HierarchyError),
    ),
    # ---- volume: dumpsys audio --------------------------------------------------------
    # Output on HDMI ("Devices: hdmi"), whose index is "400 (hdmi): 15".
    Case(
        "dumpsys_audio-shield-darcy-streams.txt",
        music_volume,
        VolumeReading(15, 0, 15),
    ),
    # ---- content query: a provider error is no answer, not an empty table ----------------
    Case(
        "content_query-error-unhandled_uri.txt",
        query_error,
        "Error while accessing provider:com.threebanana.notes.provider.NotePad",
    ),
    # ---- input refused: MIUI without "USB debugging (Security settings)" -----------------
    Case(
        "input-29-xiaomi-inject_denied.txt",
        parsers.input_refused,
        "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS "
        "permission",
    ),
    # ---- identity: getprop ------------------------------------------------------------
    Case("getprop-34-samsung-galaxy-a55-subset.txt", identity, ("samsung", "34", "14")),
    Case("getprop-28-samsung-s8-oneui1-subset.txt", identity, ("samsung", "28", "9")),
    Case("getprop-34-samsung-s24-oneui61-subset.txt", identity, ("samsung", "34", "14")),
    Case("getprop-33-xiaomi12-miui14-subset.txt", identity, ("Xiaomi", "33", "13")),
    Case("getprop-35-xiaomi14-hyperos2-subset.txt", identity, ("Xiaomi", "35", "15")),
    Case("getprop-35-pixel6-subset.txt", identity, ("Google", "35", "15")),
    # the owner's language: persist.sys.locale first, a script subtag kept (V112)
    Case("getprop-34-samsung-s24-oneui61-subset.txt", _locale, "zh-Hans-CN"),
    Case("getprop-35-pixel6-subset.txt", _locale, "zh-Hans-CN"),  # over ro.product en-US
    # Values over several lines (and CRLF line ends, as these files were saved) stay whole.
    Case(
        "getprop-35-xiaomi14-hyperos2-subset.txt",
        boot_reasons,
        "reboot,ota,1756533808\nreboot,update,system-update,1756533772",
    ),
    Case(
        "getprop-35-pixel6-subset.txt",
        boot_reasons,
        "shutdown,battery,1577880005\nreboot,userrequested,1754564793\n"
        "reboot,factory_reset,1754377100",
    ),
]


# Real outputs of commands phoned sends but reads with no parser yet; why each matters.
UNREAD: dict[str, str] = {
    "pm_grant-oneplus7pro-not_requested.txt": (
        "`pm grant` refused (not requested): phoned reads the grant back, not this text"
    ),
    "pm_grant-shell_denied.txt": (
        "`pm grant` refused to the shell itself (no GRANT_RUNTIME_PERMISSIONS): the CI grant "
        "path cannot work on such a phone; read back as not granted"
    ),
}


def _param(case: Case) -> Any:
    name = getattr(case.read, "__name__", "read")
    marks = []
    if case.wrong_today is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=f"issue #11: {case.wrong_today}"))
    return pytest.param(case, id=f"{case.file}::{name}", marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_parser_reads_what_the_phone_meant(case: Case) -> None:
    text = load(case.file)
    if isinstance(case.expected, Raises):
        with pytest.raises(case.expected.error):
            case.read(text)
    else:
        assert case.read(text) == case.expected


def corpus_files() -> list[str]:
    return sorted(path.name for path in REAL.iterdir() if path.is_file())


@pytest.mark.parametrize("name", corpus_files())
def test_every_file_names_its_origin_device_and_command(name: str) -> None:
    headers = header_lines(name)
    for prefix in REQUIRED_HEADERS:
        values = [line[len(prefix) :].strip() for line in headers if line.startswith(prefix)]
        assert values and all(values), f"{name}: no {prefix.strip()} header"
    assert load(name).strip(), f"{name}: nothing captured after the header"


def test_every_file_is_in_the_table_and_every_row_has_a_file() -> None:
    in_table = {case.file for case in CASES} | set(UNREAD)
    assert set(corpus_files()) - in_table == set(), "corpus files no case reads"
    assert in_table - set(corpus_files()) == set(), "cases without a corpus file"


# Every text parser phoned has; none may raise on real output except a hierarchy refusal.
ALL_PARSERS: list[Callable[[str], Any]] = [
    parsers.parse_getprop,
    parsers.parse_service_list,
    parsers.parse_features,
    parsers.parse_settings_value,
    parsers.parse_settings_int,
    parsers.parse_colon_list,
    dnd.notification_cmd_failed,
    bluetooth.parse_bluetooth_state,
    bluetooth.parse_bluetooth_enabled,
    parsers.service_missing,
    volume.parse_volume_get,
    parsers.parse_audio_streams,
    parsers.parse_role_holders,
    parsers.parse_package_permissions,
    parsers.parse_keyguard_showing,
    parsers.parse_screen_on,
    notifications.parse_notifications,
    parsers.parse_foreground,
    parsers.am_start_failed,
    parsers.input_refused,
    bluetooth.parse_bluetooth_on,
    parsers.content_query_error,
    ui_hierarchy.parse_nodes,
    ui_hierarchy.rotation,
    ui_hierarchy.find_permission_dialog,
]


@pytest.mark.parametrize("name", corpus_files())
def test_no_parser_crashes_on_any_real_output(name: str) -> None:
    text = load(name)
    for read in ALL_PARSERS:
        with contextlib.suppress(ui_hierarchy.HierarchyError):
            read(text)
    parsers.parse_content_rows(text, ("_id", "address", "date", "body"))
