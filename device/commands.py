"""The shell commands several parts of phoned run, as named argv constants and builders.

A method's own commands live in its action module (``device/methods/wifi.py`` builds ``cmd
wifi set-wifi-enabled``); this module keeps the ones that code outside a single method
module runs too: the device layer's probes, settings reads, the screen readers of
``phoned.device.actions.ui`` and ``phoned.device.actions.snapshot``, the reads of the daemon's device context,
the benchmarks' (``docs/methods-registry.md``, "Where a fact lives").

Commands that differ by API level are functions of the SDK; text values (numbers, message
bodies, package names) are appended as single argv elements, never interpolated into a
command line. The device layer quotes each element (``phoned.device.adb.quote_argv``), so mksh
reads it back as exactly one word. ``tests/unit/test_commands_pinned.py`` pins every
``Argv`` here and in the action modules for every SDK the simulator offers.

Sources of the command words (AOSP ``platform_frameworks_base`` unless noted):

* ``settings get|put NAMESPACE KEY``: packages/SettingsProvider/.../SettingsService.java.
* ``cmd notification help``: services/core/java/com/android/server/notification/
  NotificationShellCmd.java (probed for ``set_dnd``).
* ``cmd -l``, ``getprop``: the service manager's and init's shell tools.
* ``dumpsys audio``: AudioService.dump (the device context reads every stream's index).
* ``cmd role get-role-holders``: RoleShellCommand (packages/modules/Permission, API 31+;
  Android 10/11's frameworks/base RoleManagerShellCommand has no such command and prints
  ``Unknown command``); below, the secure setting ``sms_default_application`` (Telephony
  SmsApplication, kept in step with the role on 29+).
* ``am start``: services/core/java/com/android/server/am/ActivityManagerShellCommand.java and
  ``Intent.parseCommandArgs`` (``-W -a -d --es -p``).
* ``uiautomator dump``: frameworks/testing uiautomator DumpCommand.java.
* ``dumpsys package PKG``: PackageManagerService (Settings.dumpPackageLPr).
"""

from __future__ import annotations

Argv = tuple[str, ...]

# Identity and capability probes (device layer).
GETPROP_ALL: Argv = ("getprop",)
CMD_LIST_SERVICES: Argv = ("cmd", "-l")
NOTIFICATION_HELP: Argv = ("cmd", "notification", "help")


def settings_get(namespace: str, key: str) -> Argv:
    """``settings get NAMESPACE KEY``: prints the value, or ``null`` when unset."""
    return ("settings", "get", namespace, key)


def settings_put(namespace: str, key: str, value: str) -> Argv:
    """``settings put NAMESPACE KEY VALUE``: prints nothing on success."""
    return ("settings", "put", namespace, key, value)


# ---- read by a method and by the device context -----------------------------------------
ZEN_MODE_GET: Argv = settings_get("global", "zen_mode")  # dnd.*
BLUETOOTH_ON_GET: Argv = settings_get("global", "bluetooth_on")  # bluetooth.*
DUMPSYS_AUDIO: Argv = ("dumpsys", "audio")
# AudioManager.STREAM_* numbers of the streams phoned controls.
STREAMS: dict[str, int] = {
    "voice_call": 0,
    "system": 1,
    "ring": 2,
    "music": 3,
    "alarm": 4,
    "notification": 5,
}


# ---- Screen, keyguard, foreground --------------------------------------------------------
WAKEUP: Argv = ("input", "keyevent", "KEYCODE_WAKEUP")
DUMPSYS_WINDOW_POLICY: Argv = ("dumpsys", "window", "policy")
DUMPSYS_WINDOW_WINDOWS: Argv = ("dumpsys", "window", "windows")
DUMPSYS_WINDOW_DISPLAYS: Argv = ("dumpsys", "window", "displays")
FOCUS_IN_DISPLAYS_SINCE_SDK = 29


def dumpsys_window_focus(sdk: int) -> Argv:
    """Where ``mCurrentFocus``/``mFocusedApp`` are printed: ``dumpsys window displays`` from
    API 29 (DisplayContent.dump under RootWindowContainer.dumpDisplayContents), ``dumpsys
    window windows`` before (appium-adb ``dumpWindows``; appium/appium#13420)."""
    return DUMPSYS_WINDOW_DISPLAYS if sdk >= FOCUS_IN_DISPLAYS_SINCE_SDK else DUMPSYS_WINDOW_WINDOWS


DUMPSYS_POWER: Argv = ("dumpsys", "power")
# The launcher activity of every enabled app, one ``PKG/.Cls`` a line (app.list and the
# planning context's launchable apps; PackageManagerShellCommand.runQueryIntentActivities).
LAUNCHABLE: Argv = (
    "cmd", "package", "query-activities", "--components",
    "-a", "android.intent.action.MAIN", "-c", "android.intent.category.LAUNCHER",
)  # fmt: skip
# The accessibility windows and their titles (the app's label in the phone's language):
# ``device/app_labels.py``.
DUMPSYS_ACCESSIBILITY: Argv = ("dumpsys", "accessibility")
UI_DUMP_PATH = "/sdcard/window_dump.xml"
# Removed before every dump: ``uiautomator dump`` that fails (not idle, killed, another
# UiAutomation registered) writes no file and would leave the previous one to be read.
UI_DUMP_REMOVE: Argv = ("rm", "-f", UI_DUMP_PATH)
UI_DUMP: Argv = ("uiautomator", "dump", UI_DUMP_PATH)
# Before a dump: the uiautomator2 servers that would hold UiAutomation
# (``device/uiautomation_holders.py``), found with toybox ps and stopped as uiautomator2
# stops them: the 3.x ``app_process`` server by its pid, the 2.x app with ``am force-stop``.
PROCESSES_WITH_ARGS: Argv = ("ps", "-A", "-o", "PID,USER,ARGS")
U2_APK_FORCE_STOP: Argv = ("am", "force-stop", "com.github.uiautomator")


def kill_process(pid: int) -> Argv:
    """``kill PID`` (toybox kill, SIGTERM): the shell may end its own processes."""
    return ("kill", str(pid))


def process_alive(pid: int) -> Argv:
    """``ps -o PID -p PID``: the header alone once the process is gone."""
    return ("ps", "-o", "PID", "-p", str(pid))


UI_DUMP_READ: Argv = ("cat", UI_DUMP_PATH)
SCREENSHOT_PATH = "/sdcard/phoned_snapshot.png"
SCREENCAP: Argv = ("screencap", "-p", SCREENSHOT_PATH)


def tap(x: int, y: int) -> Argv:
    """``input tap X Y`` (screen coordinates in pixels)."""
    return ("input", "tap", str(x), str(y))


# ---- SMS ---------------------------------------------------------------------------------
ROLE_SMS = "android.app.role.SMS"
ROLE_SINCE_SDK = 31  # get-role-holders exists from Android 12
SMS_ROLE_HOLDERS: Argv = ("cmd", "role", "get-role-holders", ROLE_SMS)
SMS_DEFAULT_SETTING: Argv = settings_get("secure", "sms_default_application")


def sms_default_app(sdk: int) -> Argv:
    """How to read the default SMS app: the SMS role holders (API 31+) or the secure
    setting (below: no ``get-role-holders`` before Android 12)."""
    return SMS_ROLE_HOLDERS if sdk >= ROLE_SINCE_SDK else SMS_DEFAULT_SETTING


def sms_compose(number: str, body: str, package: str) -> Argv:
    """Open the composer of ``package`` for ``number`` with ``body``; waits for the launch.

    ``SENDTO smsto:NUMBER`` with the ``sms_body`` string extra is the documented compose
    intent (Intent.ACTION_SENDTO, Telephony "sms_body"); ``-p`` pins the default SMS app.
    """
    return (
        "am", "start", "-W",
        "-a", "android.intent.action.SENDTO",
        "-d", f"smsto:{number}",
        "--es", "sms_body", body,
        "-p", package,
    )  # fmt: skip


# ---- Permissions (permission.*; the daemon's recheck of a paused task) ------------------


def dumpsys_package(package: str) -> Argv:
    """``dumpsys package PKG``: requested, install and runtime permission grants."""
    return ("dumpsys", "package", package)
