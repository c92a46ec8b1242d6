"""The device planning context, read through the device layer (``DeviceContextProvider``).

Every value is read with one read-only command from ``phoned.device.commands`` (or the identity
and the capability probes of ``phoned.device.connection.Device``, ``device/probes.py``), parsed by a pure function from
``phoned.device.parsers`` (or one below, where the device layer has none), and stamped with the
time it was read and the command that read it. A value the phone does not print (an
unset setting, a section this release lacks) is left ``None`` and reported as missing,
never guessed.

Parsers defined here, because ``phoned.device.parsers`` has none yet:

* ``parse_battery_percent``: ``dumpsys battery``. ``BatteryService.dumpInternal``
  (aosp-mirror/platform_frameworks_base, services/core/java/com/android/server/
  BatteryService.java) prints ``Current Battery Service state:`` then two-space indented
  ``name: value`` lines, among them ``level: N`` and ``scale: M``; percent = N * 100 / M.
* ``parse_front_label``: ``dumpsys accessibility``, the app in front's window title (its
  label in the phone's language; sources in ``device/app_labels.py``). Read on every call;
  the launchable apps (``cmd package query-activities --components``, ``device/methods/
  apps.py``) only when asked (``apps``), each with the label when it is the app in front.
* ``zen_mode_name``: ``settings get global zen_mode`` values are Settings.Global.ZEN_MODE_OFF
  0, ZEN_MODE_IMPORTANT_INTERRUPTIONS 1, ZEN_MODE_NO_INTERRUPTIONS 2, ZEN_MODE_ALARMS 3
  (aosp-mirror/platform_frameworks_base, core/java/android/provider/Settings.java).
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from phoned.daemon.planning.context import ON_REQUEST, DeviceContext, Observed
from phoned.device import app_labels, commands, parsers
from phoned.device.actions import registry as methods_registry  # REGISTRY read at call time
from phoned.device.adb import AdbServer
from phoned.device.connection import Device, connect
from phoned.device.methods import apps
from phoned.device.probes import Capabilities

T = TypeVar("T")
Clock = Callable[[], float]

ZEN_MODE_NAMES: dict[int, str] = {0: "off", 1: "priority", 2: "total_silence", 3: "alarms"}
_BATTERY_FIELD = re.compile(r"^\s+(level|scale):\s*(-?\d+)\s*$", re.MULTILINE)


def parse_battery_percent(text: str) -> int | None:
    """``dumpsys battery``: charge in percent (``level`` scaled by ``scale``); None if absent."""
    values = {m[1]: int(m[2]) for m in _BATTERY_FIELD.finditer(text)}
    level, scale = values.get("level"), values.get("scale", 100)
    if level is None or scale <= 0 or level < 0:
        return None
    return round(level * 100 / scale)


def zen_mode_name(value: int | None) -> str | None:
    """The ``dnd.get`` mode word of a ``zen_mode`` value; None when unset or unknown."""
    return ZEN_MODE_NAMES.get(value) if value is not None else None


def parse_bluetooth_on(text: str) -> bool | None:
    """``settings get global bluetooth_on``: the persisted switch, 0 off, any other number on
    (BluetoothManagerService: 1 on, 2 on but held off while airplane mode is on)."""
    value = parsers.parse_settings_int(text)
    return None if value is None else value != 0


def parse_foreground_app(text: str) -> str | None:
    """``dumpsys window displays`` (``windows`` before API 29): ``package/activity`` of the
    app in front, or None when no app has focus or the text shows none."""
    found = parsers.parse_foreground(text)
    return f"{found.package}/{found.activity}" if found and found.package else None


def parse_volumes(text: str) -> dict[str, int] | None:
    """``dumpsys audio``: the index of each stream phoned controls, by its ``volume.*`` name."""
    streams = parsers.parse_audio_streams(text)
    out = {
        name: streams[f"STREAM_{name.upper()}"].index
        for name in commands.STREAMS
        if f"STREAM_{name.upper()}" in streams
    }
    return out or None


def parse_default_sms(sdk: int) -> Callable[[str], str | None]:
    """The parser of ``commands.sms_default_app(sdk)``: role holders (31+) or the setting."""

    def from_roles(text: str) -> str | None:
        holders = parsers.parse_role_holders(text)
        return holders[0] if holders else None

    def from_setting(text: str) -> str | None:
        value = parsers.parse_settings_value(text)
        return value.strip() or None if value is not None else None

    return from_roles if sdk >= commands.ROLE_SINCE_SDK else from_setting


def parse_front_label(text: str) -> str | None:
    """``dumpsys accessibility``: the label of the app in front (its window's title in the
    accessibility window list, ``phoned.device.app_labels``); None when no window shows one."""
    return app_labels.front_label(app_labels.parse_a11y_windows(text))


def launchable_apps(front: str | None, label: str | None) -> Callable[[str], dict[str, Any]]:
    """The parser of ``commands.LAUNCHABLE`` for the context: every launcher activity with the
    label of the app in front (``front``: ``pkg/activity``), null for the others, and why."""

    in_front = front.split("/", 1)[0] if front else None

    def parse(text: str) -> dict[str, Any]:
        found = parsers.parse_components(text)
        listed = [
            {"package": p, "activity": a, "label": label if p == in_front else None}
            for p, a in found
        ]
        return {"apps": listed, "labels": apps.LABELS_NOTE}

    return parse


def supported_methods(capabilities: Capabilities) -> frozenset[str]:
    """The methods this phone can carry out: each method's declared probes and ``needs``
    judged from its probed capabilities."""

    return frozenset(
        name for name, m in methods_registry.REGISTRY.items() if m.supported_on(capabilities)
    )


class DeviceReader:
    """Reads observed values from one connected ``Device`` with a clock for the stamps."""

    def __init__(self, device: Device, clock: Clock = time.time) -> None:
        self.device = device
        self.clock = clock

    def observe(self, argv: Sequence[str], parse: Callable[[str], T | None]) -> Observed[T] | None:
        """Run ``argv`` (read-only), parse stdout; None when the phone does not show it."""
        result = self.device.read(argv)
        at = self.clock()
        value = parse(result.stdout)
        return None if value is None else Observed(value, at, shlex.join(argv))

    def identity(self) -> tuple[Observed[str], Observed[int]]:
        """Model and SDK from ``getprop`` (read once per device)."""
        identity = self.device.identity
        at, source = self.clock(), shlex.join(commands.GETPROP_ALL)
        return Observed(identity.model, at, source), Observed(identity.sdk, at, source)

    def methods(self) -> Observed[frozenset[str]]:
        """Supported methods from the capability probes; the source names the commands of
        the probes that ran (``cmd -l; cmd notification help``, ``device/probes.py``)."""
        caps = self.device.capabilities
        return Observed(supported_methods(caps), self.clock(), caps.sources())


def read_context(device: Device, clock: Clock = time.time, apps: bool = False) -> DeviceContext:
    """Every planning value of ``device``, each with when and how it was read; with
    ``apps`` also the launchable apps (``launchable_apps``)."""
    reader = DeviceReader(device, clock)
    model, sdk = reader.identity()
    zen = reader.observe(
        commands.ZEN_MODE_GET, lambda t: zen_mode_name(parsers.parse_settings_int(t))
    )
    reads: dict[str, Any] = {
        "battery_percent": reader.observe(("dumpsys", "battery"), parse_battery_percent),
        "screen_on": reader.observe(commands.DUMPSYS_POWER, parsers.parse_screen_on),
        "locked": reader.observe(commands.DUMPSYS_WINDOW_POLICY, parsers.parse_keyguard_showing),
        "foreground_app": reader.observe(
            commands.dumpsys_window_focus(sdk.value), parse_foreground_app
        ),
        "foreground_label": reader.observe(commands.DUMPSYS_ACCESSIBILITY, parse_front_label),
        "dnd_mode": zen,
        "bluetooth_on": reader.observe(commands.BLUETOOTH_ON_GET, parse_bluetooth_on),
        "volumes": reader.observe(commands.DUMPSYS_AUDIO, parse_volumes),
        "default_sms_app": reader.observe(
            commands.sms_default_app(sdk.value), parse_default_sms(sdk.value)
        ),
    }
    if apps:
        front, label = reads["foreground_app"], reads["foreground_label"]
        reads["launchable_apps"] = reader.observe(
            commands.LAUNCHABLE,
            launchable_apps(front.value if front else None, label.value if label else None),
        )
    return DeviceContext(
        serial=device.serial, model=model, sdk=sdk, supported_methods=reader.methods(), **reads
    )


class AdbContextProvider:
    """``DeviceContextProvider`` over the adb server: connects and reads on every call."""

    def __init__(self, server: AdbServer, clock: Clock = time.time, apps: bool = False) -> None:
        self.server = server
        self.clock = clock
        self.apps = apps  # also read the launchable apps

    def device_context(self, serial: str) -> DeviceContext:
        """Connect to ``serial`` (or the only device when empty) and read its context."""
        device = connect(serial or None, self.server)
        try:
            return read_context(device, self.clock, self.apps)
        finally:
            device.close()


def context_json(ctx: DeviceContext) -> dict[str, Any]:
    """A planning context's device values as JSON: ``{value, observed_at, source}`` or null."""
    out: dict[str, Any] = {"serial": ctx.serial}
    for name in DeviceContext.__dataclass_fields__:
        if name == "serial":
            continue
        item = getattr(ctx, name)
        if item is None and name in ON_REQUEST:
            continue  # not asked for
        if item is None:
            out[name] = None
            continue
        value = sorted(item.value) if isinstance(item.value, frozenset) else item.value
        out[name] = {"value": value, "observed_at": item.observed_at, "source": item.source}
    return out
