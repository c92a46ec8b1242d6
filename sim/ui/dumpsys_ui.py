"""``dumpsys window``, ``dumpsys activity``, ``dumpsys power``, ``dumpsys display`` and
``dumpsys accessibility``.

Only the lines clients parse are printed, in the real shapes:
- ``mCurrentFocus=Window{<hash> u0 <title>}`` and ``mFocusedApp=`` (WindowState.toString /
  DisplayContent.dump): under ``dumpsys window windows`` up to API 28, under ``dumpsys window
  displays`` (one block per display, ``  Display: mDisplayId=N``) from API 29, when the
  windows section prints ``  mTopFocusedDisplayId=N`` instead (RootWindowContainer
  .dumpDisplayContents / dumpTopFocusedDisplayId; appium/appium#13420; display heads and
  two-space focus lines as in the captures in tests/fixtures/android/real/). ``mFocusedApp`` wraps the ActivityRecord in
  ``AppWindowToken{.. token=Token{..}}`` up to API 29 (AppWindowToken was merged into
  ActivityRecord in Android 11). Keyguard flags
  ``mShowingLockscreen``/``mDreamingLockscreen`` (PhoneWindowManager.dump, API 28) and the
  ``KeyguardServiceDelegate`` ``showing=`` block (API 29+).
- ``mResumedActivity: ActivityRecord{<hash> u0 pkg/.Cls t<task>}`` (API 28, per stack) and
  ``ResumedActivity:`` at the top level from API 29 (ActivityTaskManagerService);
  ``dumpsys activity top``: ``TASK <pkg> id=<n>`` / ``ACTIVITY pkg/.Cls <hash> pid=<pid>``.
- ``mWakefulness=Awake|Asleep``, ``mHoldingDisplaySuspendBlocker=``, ``Display Power:
  state=ON|OFF`` (PowerManagerService.dump; adbutils ``is_screen_on`` reads the blocker).
- ``DisplayViewport{... orientation=N ...}`` (DisplayManagerService; adbutils ``rotation``).
- ``dumpsys accessibility``: the window list (``A11yWindow[AccessibilityWindowInfo[title=..``
  or ``Window[..``; the shapes and their sources: ``device/app_labels.py``), only while the
  uiautomator2 server holds UiAutomation; app windows titled with the app's label in the
  phone's language (``labels.LOCALIZED_LABELS``).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from phoned.sim.shell.registry import ToolIO, service
from phoned.sim.ui import labels
from phoned.sim.ui.automation import U2_HOLDER
from phoned.sim.ui.model import Ui
from phoned.sim.ui.screens import ActivityRecord
from phoned.sim.ui.views import Window

# Android 10 moved the focus lines from the windows section to DisplayContent.dump.
FOCUS_IN_DISPLAYS_SDK = 29


def _hash(text: str) -> str:
    """A stable identity hash like ``Integer.toHexString(System.identityHashCode(x))``."""
    return f"{zlib.crc32(text.encode()) & 0x0FFFFFFF:07x}"


def _task_id(rec: ActivityRecord) -> int:
    return 100 + zlib.crc32(rec.package.encode()) % 900


def _pid(package: str) -> int:
    return 2000 + zlib.crc32(package.encode()) % 20000


def _user(io: ToolIO, package: str) -> int:
    """The Android user an app runs as: 10 for the work profile's apps (``work-profile``)."""
    return 10 if package in io.phone.service(Ui).work_profile_apps else 0


def activity_record(io: ToolIO, rec: ActivityRecord) -> str:
    """``ActivityRecord{HASH uUSER pkg/.Cls tTASK}`` (ActivityRecord.toString)."""
    user = _user(io, rec.package)
    return f"ActivityRecord{{{_hash(rec.cls)} u{user} {rec.component} t{_task_id(rec)}}}"


def window_token(io: ToolIO, window: Window) -> str:
    """``Window{HASH uUSER TITLE}`` (WindowState.toString); system windows are user 0."""
    title = f"{window.package}/{window.activity}" if window.activity else window.title
    user = _user(io, window.package) if window.activity else 0
    return f"Window{{{_hash(title)} u{user} {title}}}"


def _keyguard_lines(io: ToolIO) -> list[str]:
    locked = str(io.phone.service(Ui).locked).lower()
    if io.phone.sdk < 29:
        return [
            f"    mShowingLockscreen={locked} mShowingDream=false "
            f"mDreamingLockscreen={locked} mDreamingSleepToken=null"
        ]
    return [
        f"    mShowingDream=false mDreamingLockscreen={locked}",
        "    KeyguardServiceDelegate",
        f"      showing={locked}",
        f"      showingAndNotOccluded={locked}",
        "      inputRestricted=false",
    ]


def _focused_app(io: ToolIO) -> str:
    top = io.phone.service(Ui).top()
    app = activity_record(io, top)
    if io.phone.sdk >= 30:
        return app
    return f"AppWindowToken{{{_hash(top.package)} token=Token{{{_hash(top.cls)} {app}}}}}"


def _focus_lines(io: ToolIO, indent: str) -> list[str]:
    focus = io.phone.service(Ui).focused_window()
    return [
        f"{indent}mCurrentFocus={window_token(io, focus)}",
        f"{indent}mFocusedApp={_focused_app(io)}",
    ]


def _windows_section(io: ToolIO) -> list[str]:
    windows = io.phone.service(Ui).windows()
    lines = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
    for i, window in enumerate(reversed(windows)):
        lines.append(f"  Window #{i} {window_token(io, window)}:")
        lines.append(f"    mOwnerUid=10000 showForAllUsers=false package={window.package}")
    if io.phone.sdk >= FOCUS_IN_DISPLAYS_SDK:
        return [*lines, "  mTopFocusedDisplayId=0"]
    return [*lines, *_focus_lines(io, "  ")]


def _policy_section(io: ToolIO) -> list[str]:
    return ["WINDOW MANAGER POLICY STATE (dumpsys window policy)", *_keyguard_lines(io)]


def _display_head(io: ToolIO, display_id: int) -> str:
    """``  Display: mDisplayId=N`` and what follows it per release: ``rootTasks=N`` on
    Android 12 (captured, tests/fixtures/android/real/dumpsys_window_displays-31-*),
    ``(organized)`` on the default display of Android 14 and nothing on a virtual display
    (captured, ...-34-grep-virtual_display_first.txt)."""
    head = f"  Display: mDisplayId={display_id}"
    if display_id != 0 or io.phone.sdk < 29:
        return head
    return head + (
        " (organized)" if io.phone.sdk >= 33 else f" rootTasks={len(io.phone.service(Ui).stack)}"
    )


def _displays_section(io: ToolIO) -> list[str]:
    ui = io.phone.service(Ui)
    w, h = ui.size
    lines = ["WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)"]
    if ui.second_display is not None:
        # Children are printed bottom to top: an unfocused display (a cast screen, a cover
        # screen) comes before the focused default one, with no focus of its own.
        sw, sh = ui.second_display
        lines += [
            _display_head(io, 2),
            f"    init={sw}x{sh} 320dpi cur={sw}x{sh} app={sw}x{sh}",
            "  mCurrentFocus=null",
            "  mFocusedApp=null",
        ]
    lines += [
        _display_head(io, 0),
        f"    init={w}x{h} {ui.density}dpi cur={w}x{h} app={w}x{h}",
    ]
    if io.phone.sdk >= FOCUS_IN_DISPLAYS_SDK:
        lines += _focus_lines(io, "  ")
    return lines


# ``dumpsys window NAME`` prints only that section (WindowManagerService.doDump accepts the
# long names and the one-letter short forms); without a name every section, the policy
# state before the windows.
WINDOW_SECTIONS: dict[str, Callable[[ToolIO], list[str]]] = {
    "policy": _policy_section,
    "p": _policy_section,
    "windows": _windows_section,
    "w": _windows_section,
    "displays": _displays_section,
    "d": _displays_section,
}


def dump_window(io: ToolIO, args: list[str]) -> int:
    with io.phone.lock:
        section = WINDOW_SECTIONS.get(args[0]) if args else None
        if section is not None:
            lines = section(io)
        else:
            lines = [*_policy_section(io), "", *_displays_section(io), "", *_windows_section(io)]
    io.out("\n".join(lines) + "\n")
    return 0


def _activities(io: ToolIO) -> list[str]:
    ui = io.phone.service(Ui)
    top = ui.top()
    lines = [
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
        "Display #0 (activities from top to bottom):",
    ]
    for rec in reversed(ui.stack):
        lines += [
            f"  * Task{{{_hash(rec.package)} #{_task_id(rec)} type=standard "
            f"A=10000:{rec.package} U=0 visible={str(rec is top).lower()}}}",
            f"    * Hist #0: {activity_record(io, rec)}",
        ]
    resumed = activity_record(io, top) if ui.screen_on or io.phone.sdk < 29 else "null"
    lines.append(f"    mResumedActivity: {resumed}")
    if io.phone.sdk >= 29:
        lines += ["", f"  ResumedActivity: {resumed}"]
    return lines


def _top(io: ToolIO) -> list[str]:
    top = io.phone.service(Ui).top()
    return [
        "TASK " + top.package + f" id={_task_id(top)} userId=0",
        f"  ACTIVITY {top.component} {_hash(top.cls)} pid={_pid(top.package)}",
    ]


ACTIVITY_SECTIONS: dict[str, Callable[[ToolIO], list[str]]] = {
    "activities": _activities,
    "a": _activities,
    "top": _top,
}


def dump_activity(io: ToolIO, args: list[str]) -> int:
    section = ACTIVITY_SECTIONS.get(args[0] if args else "activities", _activities)
    with io.phone.lock:
        io.out("\n".join(section(io)) + "\n")
    return 0


def dump_power(io: ToolIO, args: list[str]) -> int:
    ui = io.phone.service(Ui)
    on = ui.screen_on
    lines = [
        "POWER MANAGER (dumpsys power)",
        "",
        "Power Manager State:",
        "  mDirty=0x0",
        # some Samsung builds print only getWakefulnessLocked()= (flutter/flutter#97235)
        f"  {'getWakefulnessLocked()' if ui.samsung_power else 'mWakefulness'}="
        f"{'Awake' if on else 'Asleep'}",
        "  mWakefulnessChanging=false",
        "  mIsPowered=true",
        f"  mHoldingWakeLockSuspendBlocker={str(on).lower()}",
        f"  mHoldingDisplaySuspendBlocker={str(on).lower()}",
        "",
        f"Display Power: state={'ON' if on else 'OFF'}",
    ]
    io.out("\n".join(lines) + "\n")
    return 0


def dump_display(io: ToolIO, args: list[str]) -> int:
    ui = io.phone.service(Ui)
    w, h = ui.size
    lines = [
        "DISPLAY MANAGER (dumpsys display)",
        f"  mDefaultViewport=DisplayViewport{{type=INTERNAL, valid=true, isActive=true, "
        f"displayId=0, uniqueId='local:4619827259835644672', physicalPort=0, "
        f"orientation={ui.rotation}, logicalFrame=Rect(0, 0 - {w}, {h}), "
        f"physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}",
        f"  mScreenState={'ON' if ui.screen_on else 'OFF'}",
    ]
    io.out("\n".join(lines) + "\n")
    return 0


# ``A11yWindow[`` replaced ``Window[`` in AccessibilityWindowManager's dump (the simulator
# switches at 34; ``device.app_labels`` reads both); the display id joined the window's
# ``toString`` with multi-display accessibility (the simulator prints it from 30).
A11Y_WINDOW_PREFIX_SDK = 34
A11Y_DISPLAY_SDK = 30


def _a11y_window(io: ToolIO, window: Window, layer: int, active: bool) -> str:
    """``AccessibilityWindowInfo.toString`` of one window: an app window's title is its
    label in the phone's language (``PhoneWindow.setTitle`` -> ``accessibilityTitle``)."""
    ui = io.phone.service(Ui)
    app = window.activity is not None
    title = labels.app_label(window.package, ui.context().locale) if app else "null"
    kind = "TYPE_APPLICATION" if app else "TYPE_SYSTEM"
    w, h = ui.size
    flag = "true" if active else "false"
    if io.phone.sdk < A11Y_DISPLAY_SDK:
        return (
            f"AccessibilityWindowInfo[title={title}, id={layer}, type={kind}, layer={layer}, "
            f"bounds=Rect(0, 0 - {w}, {h}), focused={flag}, active={flag}, "
            "pictureInPicture=false, hasParent=false, hasChildren=false]"
        )
    return (
        f"AccessibilityWindowInfo[title={title}, displayId=0, id={layer}, taskId=-1, "
        f"type={kind}, layer={layer}, region=SkRegion((0,0,{w},{h})), "
        f"bounds=Rect(0, 0 - {w}, {h}), focused={flag}, active={flag}, "
        "pictureInPicture=false, transitionTime=0, hasParent=false, isAnchored=false, "
        "hasChildren=false]"
    )


def dump_accessibility(io: ToolIO, args: list[str]) -> int:
    """``dumpsys accessibility``: the header, then the window list only while UiAutomation
    tracks windows (the uiautomator2 server holds it: UiDevice subscribes to them)."""
    ui = io.phone.service(Ui)
    lines = ["ACCESSIBILITY MANAGER (dumpsys accessibility)", "", "currentUserId=0"]
    if ui.automation.holder == U2_HOLDER:
        windows = list(reversed(ui.windows()))  # top first, as the window list is ordered
        focused = ui.focused_window()
        prefix = "A11yWindow[" if io.phone.sdk >= A11Y_WINDOW_PREFIX_SDK else "Window["
        shown = [
            prefix + _a11y_window(io, w, len(windows) - i, w == focused) + "]"
            for i, w in enumerate(windows)
        ]
        if io.phone.sdk >= A11Y_DISPLAY_SDK:
            lines.append("Display[0] : ")
        lines += [(",\n" if prefix == "Window[" else "\n").join(shown)]
    io.out("\n".join(lines) + "\n")
    return 0


DUMPS: dict[str, Callable[[ToolIO, list[str]], int]] = {
    "accessibility": dump_accessibility,
    "window": dump_window,
    "activity": dump_activity,
    "power": dump_power,
    "display": dump_display,
}


@service("dumpsys", "window", "activity", "power", "display", "accessibility")
def dumpsys_ui(io: ToolIO, argv: list[str]) -> int:
    """``dumpsys window|activity|power|display|accessibility [section]``."""
    return DUMPS[argv[0]](io, argv[1:])
