"""Every shell command phoned runs on a phone, as a named argv constant.

Commands that differ by API level are functions of the SDK; action modules build argv only
from these, and text values (numbers, message bodies, package names) are appended as single
argv elements, never interpolated into a command line. The device layer quotes each element
(``device.adb.quote_argv``), so mksh reads it back as exactly one word.

Sources of the command words (AOSP ``platform_frameworks_base`` unless noted):

* ``settings get|put NAMESPACE KEY``: packages/SettingsProvider/.../SettingsService.java.
* ``cmd notification set_dnd|allow_listener|allow_dnd``: services/core/java/com/android/server/
  notification/NotificationShellCmd.java (``set_dnd`` from API 29; ``on`` = ``none`` = total
  silence, ``all`` = ``off``).
* ``cmd bluetooth_manager enable|disable``: BluetoothShellCommand (packages/modules/Bluetooth,
  API 33+); ``svc bluetooth enable|disable``: cmds/svc BluetoothCommand.java (API <= 32).
* ``cmd wifi set-wifi-enabled enabled|disabled``: WifiShellCommand (frameworks/opt/net/wifi,
  Android 11; a non-privileged command calling WifiServiceImpl.setWifiEnabled as
  ``com.android.shell``, printing nothing); ``svc wifi enable|disable``: cmds/svc
  WifiCommand.java (API <= 30: Svc.java drops ``wifi`` in Android 12). ``dumpsys wifi``:
  WifiServiceImpl.dump prints ``Wi-Fi is <state>``.
* ``cmd media_session volume``: services/core/java/com/android/server/media/VolumeCtrl.java
  (API 30+); ``media volume``: cmds/media VolumeCtrl.java (API <= 29, removed in Android 11).
* ``cmd role get-role-holders``: RoleShellCommand (packages/modules/Permission, API 31+;
  Android 10/11's frameworks/base RoleManagerShellCommand has no such command and prints
  ``Unknown command``); below, the secure setting ``sms_default_application`` (Telephony
  SmsApplication, kept in step with the role on 29+).
* ``am start``: services/core/java/com/android/server/am/ActivityManagerShellCommand.java and
  ``Intent.parseCommandArgs`` (``-W -a -d --es -p``).
* ``uiautomator dump``: frameworks/testing uiautomator DumpCommand.java.
* ``content query``: cmds/content/src/com/android/commands/content/Content.java.
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


# ---- Do Not Disturb ----------------------------------------------------------------------
ZEN_MODE_GET: Argv = settings_get("global", "zen_mode")
SET_DND_SINCE_SDK = 29
# dnd.set mode -> the NotificationShellCmd word (zen_mode it yields: 0, 1, 3, 2).
DND_WORDS: dict[str, str] = {
    "off": "off",
    "priority": "priority",
    "alarms": "alarms",
    "total_silence": "none",
}


def set_dnd(word: str) -> Argv:
    """``cmd notification set_dnd WORD`` (API 29+; exits 0 even when it did nothing)."""
    return ("cmd", "notification", "set_dnd", word)


# ---- Bluetooth ---------------------------------------------------------------------------
BLUETOOTH_ON_GET: Argv = settings_get("global", "bluetooth_on")
DUMPSYS_BLUETOOTH: Argv = ("dumpsys", "bluetooth_manager")
BLUETOOTH_CMD_SINCE_SDK = 33


def bluetooth_set(enable: bool, *, shell_command: bool) -> Argv:
    """The enable/disable command: ``cmd bluetooth_manager`` where the service has a shell
    command (API 33+, probed), ``svc bluetooth`` below. Both return before the change."""
    verb = "enable" if enable else "disable"
    if shell_command:
        return ("cmd", "bluetooth_manager", verb)
    return ("svc", "bluetooth", verb)


# ---- Wi-Fi -------------------------------------------------------------------------------
WIFI_ON_GET: Argv = settings_get("global", "wifi_on")
DUMPSYS_WIFI: Argv = ("dumpsys", "wifi")
WIFI_CMD_SINCE_SDK = 30


def wifi_set(enable: bool, sdk: int) -> Argv:
    """``cmd wifi set-wifi-enabled enabled|disabled`` from API 30, ``svc wifi enable|disable``
    below. Both ask WifiManager.setWifiEnabled and return before the radio changes."""
    if sdk >= WIFI_CMD_SINCE_SDK:
        return ("cmd", "wifi", "set-wifi-enabled", "enabled" if enable else "disabled")
    return ("svc", "wifi", "enable" if enable else "disable")


# ---- Volume ------------------------------------------------------------------------------
MEDIA_SESSION_VOLUME_SINCE_SDK = 30
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


def _volume_tool(sdk: int) -> Argv:
    if sdk >= MEDIA_SESSION_VOLUME_SINCE_SDK:
        return ("cmd", "media_session", "volume")
    return ("media", "volume")


def volume_get(sdk: int, stream: int) -> Argv:
    """``... volume --stream N --get``: prints ``volume is I in range [MIN..MAX]``."""
    return (*_volume_tool(sdk), "--stream", str(stream), "--get")


def volume_set(sdk: int, stream: int, index: int) -> Argv:
    """``... volume --stream N --set I`` (exits 0 even for an index out of range)."""
    return (*_volume_tool(sdk), "--stream", str(stream), "--set", str(index))


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
UI_DUMP_PATH = "/sdcard/window_dump.xml"
# Removed before every dump: ``uiautomator dump`` that fails (not idle, killed, another
# UiAutomation registered) writes no file and would leave the previous one to be read.
UI_DUMP_REMOVE: Argv = ("rm", "-f", UI_DUMP_PATH)
UI_DUMP: Argv = ("uiautomator", "dump", UI_DUMP_PATH)
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
SMS_SENT_PROJECTION = ("_id", "address", "date", "body")  # body last: it may hold ", x="


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


def sms_sent_query() -> Argv:
    """Rows of the sent box: ``Row: N _id=.., address=.., date=.., body=..``."""
    return (
        "content", "query", "--uri", "content://sms/sent",
        "--projection", ":".join(SMS_SENT_PROJECTION),
    )  # fmt: skip


# ---- Permissions -------------------------------------------------------------------------
LISTENERS_GET: Argv = settings_get("secure", "enabled_notification_listeners")
DND_ACCESS_GET: Argv = settings_get("secure", "enabled_notification_policy_access_packages")
ACTION_LISTENER_SETTINGS = "android.settings.ACTION_NOTIFICATION_LISTENER_SETTINGS"
ACTION_DND_ACCESS_SETTINGS = "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS"
ACTION_APP_DETAILS = "android.settings.APPLICATION_DETAILS_SETTINGS"


def dumpsys_package(package: str) -> Argv:
    """``dumpsys package PKG``: requested, install and runtime permission grants."""
    return ("dumpsys", "package", package)


def open_settings(action: str, data: str | None = None) -> Argv:
    """``am start -W -a ACTION [-d DATA]``: a settings screen."""
    argv: Argv = ("am", "start", "-W", "-a", action)
    return (*argv, "-d", data) if data is not None else argv


def pm_grant(package: str, permission: str) -> Argv:
    """``pm grant PKG PERMISSION`` (CI-only grant path)."""
    return ("pm", "grant", package, permission)


def allow_listener(component: str) -> Argv:
    """``cmd notification allow_listener COMPONENT`` (CI-only grant path)."""
    return ("cmd", "notification", "allow_listener", component)


def allow_dnd(package: str) -> Argv:
    """``cmd notification allow_dnd PACKAGE`` (CI-only grant path)."""
    return ("cmd", "notification", "allow_dnd", package)
