"""Every shell command phoned sends, pinned per SDK (as python-androidtv's
``tests/test_constants.py`` does for its constants): a changed command is a diff here.

The commands are found, not listed: every ``Argv`` constant (annotated ``: Argv``) and
every builder (annotated ``-> Argv``) of ``device/commands.py`` and of each action module
the method registry finds. ``COMMON`` holds the commands every release gets; ``BUILT`` and
``PER_SDK`` the ones that differ, with the argv each simulator SDK gets; ``EDGES`` the
releases between. ``test_every_command_is_pinned`` fails for a constant or builder no row
covers, naming the row to add.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import ModuleType

import pytest
from phoned.device import commands as c
from phoned.device.actions.registry import METHOD_MODULES
from phoned.device.methods import (
    apps,
    bluetooth,
    brightness,
    dnd,
    notifications,
    permission,
    sms_send,
    volume,
    wifi,
)
from phoned.sim.profiles import SUPPORTED_SDKS

Argv = tuple[str, ...]

COMMON: dict[str, tuple[Argv, Argv]] = {
    "apps.pm_path": (apps.pm_path("com.example.notes"), ("pm", "path", "com.example.notes")),
    "apps.disabled_packages": (
        apps.disabled_packages("com.example.notes"),
        ("pm", "list", "packages", "-d", "com.example.notes"),
    ),
    "apps.start_app(launcher)": (
        apps.start_app("com.example.notes"),
        (
            "am",
            "start",
            "-W",
            "-a",
            "android.intent.action.MAIN",
            "-c",
            "android.intent.category.LAUNCHER",
            "-p",
            "com.example.notes",
        ),
    ),
    "apps.start_app(activity)": (
        apps.start_app("com.example.notes", activity=".MainActivity"),
        ("am", "start", "-W", "-n", "com.example.notes/.MainActivity"),
    ),
    "apps.start_app(url)": (
        apps.start_app("com.example.notes", url="https://notes.example.com/n/1"),
        (
            "am",
            "start",
            "-W",
            "-a",
            "android.intent.action.VIEW",
            "-d",
            "https://notes.example.com/n/1",
            "-p",
            "com.example.notes",
        ),
    ),
    "apps.force_stop": (
        apps.force_stop("com.example.notes"),
        ("am", "force-stop", "com.example.notes"),
    ),
    "apps.HOME_RESOLVE": (
        apps.HOME_RESOLVE,
        (
            "cmd",
            "package",
            "resolve-activity",
            "--brief",
            "-a",
            "android.intent.action.MAIN",
            "-c",
            "android.intent.category.HOME",
        ),
    ),
    "commands.LAUNCHABLE": (
        c.LAUNCHABLE,
        (
            "cmd",
            "package",
            "query-activities",
            "--components",
            "-a",
            "android.intent.action.MAIN",
            "-c",
            "android.intent.category.LAUNCHER",
        ),
    ),
    # name: (built, expected)
    "commands.GETPROP_ALL": (c.GETPROP_ALL, ("getprop",)),
    "commands.CMD_LIST_SERVICES": (c.CMD_LIST_SERVICES, ("cmd", "-l")),
    "commands.NOTIFICATION_HELP": (c.NOTIFICATION_HELP, ("cmd", "notification", "help")),
    "commands.settings_get": (c.settings_get("global", "k"), ("settings", "get", "global", "k")),
    "commands.settings_put": (
        c.settings_put("system", "k", "1"),
        ("settings", "put", "system", "k", "1"),
    ),
    "notifications.DUMPSYS_NOTIFICATION": (
        notifications.DUMPSYS_NOTIFICATION,
        ("dumpsys", "notification", "--noredact"),
    ),
    "brightness.BRIGHTNESS_GET": (
        brightness.BRIGHTNESS_GET,
        ("settings", "get", "system", "screen_brightness"),
    ),
    "brightness.BRIGHTNESS_MODE_GET": (
        brightness.BRIGHTNESS_MODE_GET,
        ("settings", "get", "system", "screen_brightness_mode"),
    ),
    "brightness.brightness_set": (
        brightness.brightness_set(128),
        ("settings", "put", "system", "screen_brightness", "128"),
    ),
    "brightness.brightness_mode_set(manual)": (
        brightness.brightness_mode_set(False),
        ("settings", "put", "system", "screen_brightness_mode", "0"),
    ),
    "brightness.brightness_mode_set(automatic)": (
        brightness.brightness_mode_set(True),
        ("settings", "put", "system", "screen_brightness_mode", "1"),
    ),
    "commands.ZEN_MODE_GET": (c.ZEN_MODE_GET, ("settings", "get", "global", "zen_mode")),
    "dnd.set_dnd": (dnd.set_dnd("none"), ("cmd", "notification", "set_dnd", "none")),
    "commands.BLUETOOTH_ON_GET": (
        c.BLUETOOTH_ON_GET,
        ("settings", "get", "global", "bluetooth_on"),
    ),
    "bluetooth.DUMPSYS_BLUETOOTH": (bluetooth.DUMPSYS_BLUETOOTH, ("dumpsys", "bluetooth_manager")),
    "commands.DUMPSYS_AUDIO": (c.DUMPSYS_AUDIO, ("dumpsys", "audio")),
    "wifi.WIFI_ON_GET": (wifi.WIFI_ON_GET, ("settings", "get", "global", "wifi_on")),
    "wifi.DUMPSYS_WIFI": (wifi.DUMPSYS_WIFI, ("dumpsys", "wifi")),
    "commands.WAKEUP": (c.WAKEUP, ("input", "keyevent", "KEYCODE_WAKEUP")),
    "commands.DUMPSYS_WINDOW_POLICY": (c.DUMPSYS_WINDOW_POLICY, ("dumpsys", "window", "policy")),
    "commands.DUMPSYS_WINDOW_WINDOWS": (c.DUMPSYS_WINDOW_WINDOWS, ("dumpsys", "window", "windows")),
    "commands.DUMPSYS_WINDOW_DISPLAYS": (
        c.DUMPSYS_WINDOW_DISPLAYS,
        ("dumpsys", "window", "displays"),
    ),
    "commands.DUMPSYS_POWER": (c.DUMPSYS_POWER, ("dumpsys", "power")),
    "commands.DUMPSYS_ACCESSIBILITY": (c.DUMPSYS_ACCESSIBILITY, ("dumpsys", "accessibility")),
    "commands.UI_DUMP_REMOVE": (c.UI_DUMP_REMOVE, ("rm", "-f", "/sdcard/window_dump.xml")),
    "commands.UI_DUMP": (c.UI_DUMP, ("uiautomator", "dump", "/sdcard/window_dump.xml")),
    "commands.UI_DUMP_READ": (c.UI_DUMP_READ, ("cat", "/sdcard/window_dump.xml")),
    "commands.PROCESSES_WITH_ARGS": (c.PROCESSES_WITH_ARGS, ("ps", "-A", "-o", "PID,USER,ARGS")),
    "commands.U2_APK_FORCE_STOP": (
        c.U2_APK_FORCE_STOP,
        ("am", "force-stop", "com.github.uiautomator"),
    ),
    "commands.kill_process": (c.kill_process(4242), ("kill", "4242")),
    "commands.process_alive": (c.process_alive(4242), ("ps", "-o", "PID", "-p", "4242")),
    "commands.SCREENCAP": (c.SCREENCAP, ("screencap", "-p", "/sdcard/phoned_snapshot.png")),
    "commands.tap": (c.tap(10, 20), ("input", "tap", "10", "20")),
    "commands.SMS_ROLE_HOLDERS": (
        c.SMS_ROLE_HOLDERS,
        ("cmd", "role", "get-role-holders", "android.app.role.SMS"),
    ),
    "commands.SMS_DEFAULT_SETTING": (
        c.SMS_DEFAULT_SETTING,
        ("settings", "get", "secure", "sms_default_application"),
    ),
    "commands.sms_compose": (
        c.sms_compose("+15551234567", "hi; there", "com.google.android.apps.messaging"),
        (
            "am",
            "start",
            "-W",
            "-a",
            "android.intent.action.SENDTO",
            "-d",
            "smsto:+15551234567",
            "--es",
            "sms_body",
            "hi; there",
            "-p",
            "com.google.android.apps.messaging",
        ),
    ),
    "sms_send.sms_sent_query": (
        sms_send.sms_sent_query(),
        (
            "content",
            "query",
            "--uri",
            "content://sms/sent",
            "--projection",
            "_id:address:date:sub_id:body",
        ),
    ),
    "sms_send.chat_store_query": (
        sms_send.chat_store_query("content://im/chat"),
        (
            "content",
            "query",
            "--uri",
            "content://im/chat",
            "--projection",
            "_id:address:date:type:sub_id:body",
        ),
    ),
    "permission.LISTENERS_GET": (
        permission.LISTENERS_GET,
        ("settings", "get", "secure", "enabled_notification_listeners"),
    ),
    "permission.DND_ACCESS_GET": (
        permission.DND_ACCESS_GET,
        ("settings", "get", "secure", "enabled_notification_policy_access_packages"),
    ),
    "commands.dumpsys_package": (c.dumpsys_package("com.x.y"), ("dumpsys", "package", "com.x.y")),
    "permission.open_settings": (
        permission.open_settings(permission.ACTION_APP_DETAILS, "package:com.x.y"),
        (
            "am",
            "start",
            "-W",
            "-a",
            "android.settings.APPLICATION_DETAILS_SETTINGS",
            "-d",
            "package:com.x.y",
        ),
    ),
    "permission.open_settings(no data)": (
        permission.open_settings(permission.ACTION_LISTENER_SETTINGS),
        ("am", "start", "-W", "-a", "android.settings.ACTION_NOTIFICATION_LISTENER_SETTINGS"),
    ),
    "permission.open_settings(dnd access)": (
        permission.open_settings(permission.ACTION_DND_ACCESS_SETTINGS),
        ("am", "start", "-W", "-a", "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS"),
    ),
    "permission.pm_grant": (
        permission.pm_grant("com.x.y", "android.permission.CAMERA"),
        ("pm", "grant", "com.x.y", "android.permission.CAMERA"),
    ),
    "permission.allow_listener": (
        permission.allow_listener("com.x.y/.L"),
        ("cmd", "notification", "allow_listener", "com.x.y/.L"),
    ),
    "permission.allow_dnd": (
        permission.allow_dnd("com.x.y"),
        ("cmd", "notification", "allow_dnd", "com.x.y"),
    ),
}

# name: how it is built for an SDK
BUILT: dict[str, Callable[[int], Argv | None]] = {
    "dnd.set_dnd(SET_DND_SINCE_SDK)": lambda sdk: (
        dnd.set_dnd("priority") if sdk >= dnd.SET_DND_SINCE_SDK else None
    ),
    "bluetooth.bluetooth_set(on)": lambda sdk: bluetooth.bluetooth_set(
        True, shell_command=sdk >= bluetooth.BLUETOOTH_CMD_SINCE_SDK
    ),
    "bluetooth.bluetooth_set(off)": lambda sdk: bluetooth.bluetooth_set(
        False, shell_command=sdk >= bluetooth.BLUETOOTH_CMD_SINCE_SDK
    ),
    "wifi.wifi_set(on)": lambda sdk: wifi.wifi_set(True, sdk),
    "wifi.wifi_set(off)": lambda sdk: wifi.wifi_set(False, sdk),
    "volume.volume_get": lambda sdk: volume.volume_get(sdk, c.STREAMS["music"]),
    "volume.volume_set": lambda sdk: volume.volume_set(sdk, c.STREAMS["ring"], 4),
    "commands.dumpsys_window_focus": c.dumpsys_window_focus,
    "commands.sms_default_app": c.sms_default_app,
}
_MEDIA = ("media", "volume")
_SESSION = ("cmd", "media_session", "volume")
_SVC_ON, _SVC_OFF = ("svc", "bluetooth", "enable"), ("svc", "bluetooth", "disable")
_CMD_ON = ("cmd", "bluetooth_manager", "enable")
_CMD_OFF = ("cmd", "bluetooth_manager", "disable")
_SET_DND = ("cmd", "notification", "set_dnd", "priority")
_ROLE = ("cmd", "role", "get-role-holders", "android.app.role.SMS")
_SETTING = ("settings", "get", "secure", "sms_default_application")
_WINDOWS, _DISPLAYS = ("dumpsys", "window", "windows"), ("dumpsys", "window", "displays")

_WIFI_SVC = (("svc", "wifi", "enable"), ("svc", "wifi", "disable"))
_WIFI_CMD = (("cmd", "wifi", "set-wifi-enabled", "enabled"),
             ("cmd", "wifi", "set-wifi-enabled", "disabled"))  # fmt: skip

# sdk: the BUILT commands in order
PER_SDK: dict[int, tuple[Argv | None, ...]] = {
    28: (None, _SVC_ON, _SVC_OFF, *_WIFI_SVC, (*_MEDIA, "--stream", "3", "--get"),
         (*_MEDIA, "--stream", "2", "--set", "4"), _WINDOWS, _SETTING),
    30: (_SET_DND, _SVC_ON, _SVC_OFF, *_WIFI_CMD, (*_SESSION, "--stream", "3", "--get"),
         (*_SESSION, "--stream", "2", "--set", "4"), _DISPLAYS, _SETTING),
    33: (_SET_DND, _CMD_ON, _CMD_OFF, *_WIFI_CMD, (*_SESSION, "--stream", "3", "--get"),
         (*_SESSION, "--stream", "2", "--set", "4"), _DISPLAYS, _ROLE),
    34: (_SET_DND, _CMD_ON, _CMD_OFF, *_WIFI_CMD, (*_SESSION, "--stream", "3", "--get"),
         (*_SESSION, "--stream", "2", "--set", "4"), _DISPLAYS, _ROLE),
    35: (_SET_DND, _CMD_ON, _CMD_OFF, *_WIFI_CMD, (*_SESSION, "--stream", "3", "--get"),
         (*_SESSION, "--stream", "2", "--set", "4"), _DISPLAYS, _ROLE),
}  # fmt: skip

# The below-29 read of media volume on SDK 29 (no simulator profile): ``media volume``.
EDGES: dict[str, tuple[Argv, Argv]] = {
    "volume.volume_get(29)": (volume.volume_get(29, 3), (*_MEDIA, "--stream", "3", "--get")),
    "commands.dumpsys_window_focus(29)": (c.dumpsys_window_focus(29), _DISPLAYS),
    "commands.sms_default_app(30)": (c.sms_default_app(30), _SETTING),
    "commands.sms_default_app(31)": (c.sms_default_app(31), _ROLE),
    "wifi.wifi_set(29)": (wifi.wifi_set(True, 29), ("svc", "wifi", "enable")),
}


@pytest.mark.parametrize("name", sorted(COMMON))
def test_common_command(name: str) -> None:
    built, expected = COMMON[name]
    assert built == expected


@pytest.mark.parametrize("sdk", SUPPORTED_SDKS)
def test_commands_of_each_sdk(sdk: int) -> None:
    built = {name: build(sdk) for name, build in BUILT.items()}
    assert built == dict(zip(BUILT, PER_SDK[sdk], strict=True))


@pytest.mark.parametrize("name", sorted(EDGES))
def test_release_edges(name: str) -> None:
    built, expected = EDGES[name]
    assert built == expected


def test_every_sdk_the_simulator_offers_is_pinned() -> None:
    assert set(PER_SDK) == set(SUPPORTED_SDKS)


def _argv_names(module: ModuleType) -> set[str]:
    """The module's own ``Argv`` constants (annotated) and builders (returning ``Argv``)."""
    constants = {n for n, a in vars(module).get("__annotations__", {}).items() if a == "Argv"}
    builders = {
        name
        for name, fn in vars(module).items()
        if inspect.isfunction(fn)
        and fn.__module__ == module.__name__
        and not name.startswith("_")
        and fn.__annotations__.get("return") == "Argv"
    }
    return constants | builders


def _short(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


MODULES = (c, *METHOD_MODULES)


def test_every_command_is_pinned() -> None:
    """Each argv constant and builder of ``device/commands.py`` and of every action module
    has a row above."""
    found = {f"{_short(m)}.{name}": m for m in MODULES for name in _argv_names(m)}
    rows = {name.split("(")[0] for name in (*COMMON, *BUILT, *EDGES)}
    missing = sorted(set(found) - rows)
    assert not missing, (
        f"commands no row pins: {missing}; add each to tests/unit/test_commands_pinned.py: "
        "COMMON ('module.NAME': (built, expected argv)) when every SDK gets the same argv, "
        "else BUILT ('module.NAME(case)': lambda sdk: ...) with its argv in PER_SDK"
    )
    assert rows - set(found) == set(), "rows for commands that no longer exist"
