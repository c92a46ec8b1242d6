"""Every shell command phoned sends, pinned per SDK (as python-androidtv's
``tests/test_constants.py`` does for its constants): a changed command is a diff here.

``COMMON`` holds the commands every release gets; ``PER_SDK`` the ones that differ, with the
argv each simulator SDK gets. ``test_every_command_is_pinned`` fails for a new constant or
builder in ``device/commands.py`` that no row covers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest

from device import commands as c
from device.sim.profiles import SUPPORTED_SDKS

Argv = tuple[str, ...]

COMMON: dict[str, tuple[Argv, Argv]] = {
    # name: (built, expected)
    "GETPROP_ALL": (c.GETPROP_ALL, ("getprop",)),
    "CMD_LIST_SERVICES": (c.CMD_LIST_SERVICES, ("cmd", "-l")),
    "NOTIFICATION_HELP": (c.NOTIFICATION_HELP, ("cmd", "notification", "help")),
    "settings_get": (c.settings_get("global", "k"), ("settings", "get", "global", "k")),
    "ZEN_MODE_GET": (c.ZEN_MODE_GET, ("settings", "get", "global", "zen_mode")),
    "set_dnd": (c.set_dnd("none"), ("cmd", "notification", "set_dnd", "none")),
    "BLUETOOTH_ON_GET": (c.BLUETOOTH_ON_GET, ("settings", "get", "global", "bluetooth_on")),
    "DUMPSYS_BLUETOOTH": (c.DUMPSYS_BLUETOOTH, ("dumpsys", "bluetooth_manager")),
    "DUMPSYS_AUDIO": (c.DUMPSYS_AUDIO, ("dumpsys", "audio")),
    "WIFI_ON_GET": (c.WIFI_ON_GET, ("settings", "get", "global", "wifi_on")),
    "DUMPSYS_WIFI": (c.DUMPSYS_WIFI, ("dumpsys", "wifi")),
    "WAKEUP": (c.WAKEUP, ("input", "keyevent", "KEYCODE_WAKEUP")),
    "DUMPSYS_WINDOW_POLICY": (c.DUMPSYS_WINDOW_POLICY, ("dumpsys", "window", "policy")),
    "DUMPSYS_WINDOW_WINDOWS": (c.DUMPSYS_WINDOW_WINDOWS, ("dumpsys", "window", "windows")),
    "DUMPSYS_WINDOW_DISPLAYS": (c.DUMPSYS_WINDOW_DISPLAYS, ("dumpsys", "window", "displays")),
    "DUMPSYS_POWER": (c.DUMPSYS_POWER, ("dumpsys", "power")),
    "UI_DUMP_REMOVE": (c.UI_DUMP_REMOVE, ("rm", "-f", "/sdcard/window_dump.xml")),
    "UI_DUMP": (c.UI_DUMP, ("uiautomator", "dump", "/sdcard/window_dump.xml")),
    "UI_DUMP_READ": (c.UI_DUMP_READ, ("cat", "/sdcard/window_dump.xml")),
    "SCREENCAP": (c.SCREENCAP, ("screencap", "-p", "/sdcard/phoned_snapshot.png")),
    "tap": (c.tap(10, 20), ("input", "tap", "10", "20")),
    "SMS_ROLE_HOLDERS": (
        c.SMS_ROLE_HOLDERS,
        ("cmd", "role", "get-role-holders", "android.app.role.SMS"),
    ),
    "SMS_DEFAULT_SETTING": (
        c.SMS_DEFAULT_SETTING,
        ("settings", "get", "secure", "sms_default_application"),
    ),
    "sms_compose": (
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
    "sms_sent_query": (
        c.sms_sent_query(),
        (
            "content",
            "query",
            "--uri",
            "content://sms/sent",
            "--projection",
            "_id:address:date:body",
        ),
    ),
    "LISTENERS_GET": (
        c.LISTENERS_GET,
        ("settings", "get", "secure", "enabled_notification_listeners"),
    ),
    "DND_ACCESS_GET": (
        c.DND_ACCESS_GET,
        ("settings", "get", "secure", "enabled_notification_policy_access_packages"),
    ),
    "dumpsys_package": (c.dumpsys_package("com.x.y"), ("dumpsys", "package", "com.x.y")),
    "open_settings": (
        c.open_settings(c.ACTION_APP_DETAILS, "package:com.x.y"),
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
    "open_settings(no data)": (
        c.open_settings(c.ACTION_LISTENER_SETTINGS),
        ("am", "start", "-W", "-a", "android.settings.ACTION_NOTIFICATION_LISTENER_SETTINGS"),
    ),
    "open_settings(dnd access)": (
        c.open_settings(c.ACTION_DND_ACCESS_SETTINGS),
        ("am", "start", "-W", "-a", "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS"),
    ),
    "pm_grant": (
        c.pm_grant("com.x.y", "android.permission.CAMERA"),
        ("pm", "grant", "com.x.y", "android.permission.CAMERA"),
    ),
    "allow_listener": (
        c.allow_listener("com.x.y/.L"),
        ("cmd", "notification", "allow_listener", "com.x.y/.L"),
    ),
    "allow_dnd": (c.allow_dnd("com.x.y"), ("cmd", "notification", "allow_dnd", "com.x.y")),
}

# name: how it is built for an SDK
BUILT: dict[str, Callable[[int], Argv | None]] = {
    "set_dnd(SET_DND_SINCE_SDK)": lambda sdk: (
        c.set_dnd("priority") if sdk >= c.SET_DND_SINCE_SDK else None
    ),
    "bluetooth_set(on)": lambda sdk: c.bluetooth_set(
        True, shell_command=sdk >= c.BLUETOOTH_CMD_SINCE_SDK
    ),
    "bluetooth_set(off)": lambda sdk: c.bluetooth_set(
        False, shell_command=sdk >= c.BLUETOOTH_CMD_SINCE_SDK
    ),
    "wifi_set(on)": lambda sdk: c.wifi_set(True, sdk),
    "wifi_set(off)": lambda sdk: c.wifi_set(False, sdk),
    "volume_get": lambda sdk: c.volume_get(sdk, c.STREAMS["music"]),
    "volume_set": lambda sdk: c.volume_set(sdk, c.STREAMS["ring"], 4),
    "dumpsys_window_focus": c.dumpsys_window_focus,
    "sms_default_app": c.sms_default_app,
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
    "volume_get(29)": (c.volume_get(29, 3), (*_MEDIA, "--stream", "3", "--get")),
    "dumpsys_window_focus(29)": (c.dumpsys_window_focus(29), _DISPLAYS),
    "sms_default_app(30)": (c.sms_default_app(30), _SETTING),
    "sms_default_app(31)": (c.sms_default_app(31), _ROLE),
    "wifi_set(29)": (c.wifi_set(True, 29), ("svc", "wifi", "enable")),
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


def test_every_command_is_pinned() -> None:
    """Each argv constant and builder of ``device/commands.py`` has a row above."""
    public = {
        name
        for name, value in vars(c).items()
        if not name.startswith("_")
        and getattr(value, "__module__", c.__name__) == c.__name__
        and (inspect.isfunction(value) or (isinstance(value, tuple) and name.isupper()))
        and name != "SMS_SENT_PROJECTION"  # a projection, pinned through sms_sent_query
    }
    rows = {name.split("(")[0] for name in (*COMMON, *BUILT, *EDGES)}
    assert public - rows == set()
