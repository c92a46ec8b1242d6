"""``bluetooth.set`` / ``bluetooth.get``: the adapter through its manager service.

State is read from ``dumpsys bluetooth_manager`` (the ``  enabled:`` and ``  state:`` lines)
and ``settings get global bluetooth_on`` (the persisted choice). Apply with
``cmd bluetooth_manager enable|disable`` where that shell command exists (API 33+, probed),
``svc bluetooth enable|disable`` below; both return before the adapter changes (``svc``
exits 0 even when nothing happens), so the action polls the transitions within
``ctx.settle_timeout`` and records each with its time. A phone without Bluetooth hardware
has no ``bluetooth_manager`` service at all.

"Off" means classic Bluetooth is off: ``OFF``, or ``BLE_ON`` where BLE scanning apps keep
the low-energy part running (``ble_scan_always_enabled``; BluetoothManagerService
``sendBrEdrDownCallback`` stays in BLE_ON while a BLE app is registered). Enabling passes
BLE_TURNING_ON and BLE_ON, disabling TURNING_OFF, BLE_ON and BLE_TURNING_OFF (AdapterState).
``bluetooth_on`` is written when the request arrives (``disable(persist=true)`` writes 0;
``MESSAGE_ENABLE`` writes 1 from Android 13, on the way out of BLE_ON before), and is 2 while
airplane mode holds a turned-on adapter off. Facts and sources: the parsers section below.

Sources of the commands: ``cmd bluetooth_manager enable|disable``: BluetoothShellCommand
(packages/modules/Bluetooth, API 33+); ``svc bluetooth enable|disable``: cmds/svc
BluetoothCommand.java (API <= 32).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any

from phoned.device import commands, parsers
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method
from phoned.device.actions.params import NoParams, Params
from phoned.device.actions.reads import got
from phoned.device.actions.setting import Change, ask
from phoned.device.commands import Argv
from phoned.device.evidence import now_iso
from phoned.device.probes import CMD_BLUETOOTH_MANAGER, SERVICES, service_running
from pydantic import Field, StrictBool

# ---- params ------------------------------------------------------------------------------


class BluetoothSet(Params):
    """Turn Bluetooth on or off."""

    enabled: StrictBool = Field(description="true: on, false: off", examples=[True])


# ---- commands ----------------------------------------------------------------------------
# Reading bluetooth_on is shared with the device context: ``commands.BLUETOOTH_ON_GET``.

DUMPSYS_BLUETOOTH: Argv = ("dumpsys", "bluetooth_manager")
BLUETOOTH_CMD_SINCE_SDK = 33


def bluetooth_set(enable: bool, *, shell_command: bool) -> Argv:
    """The enable/disable command: ``cmd bluetooth_manager`` where the service has a shell
    command (API 33+, probed), ``svc bluetooth`` below. Both return before the change."""
    verb = "enable" if enable else "disable"
    if shell_command:
        return ("cmd", "bluetooth_manager", verb)
    return ("svc", "bluetooth", verb)


# ---- parsers -----------------------------------------------------------------------------
#
# BluetoothManagerService.dump prints ``  enabled: <isEnabled()>`` and ``  state: <name>``
# first (frameworks/base services/core .../BluetoothManagerService.java up to Android 12;
# packages/modules/Bluetooth service/.../BluetoothManagerService.java from Android 13, read
# in LineageOS/android_packages_modules_Bluetooth lineage-20.0, -21.0 and -22.0). The name is
# BluetoothAdapter.nameForState: OFF, TURNING_ON, ON, TURNING_OFF, BLE_TURNING_ON, BLE_ON,
# BLE_TURNING_OFF, and ``?!?!? (N)`` for any other number (framework/java/android/bluetooth/
# BluetoothAdapter.java). ``enabled`` is ``getState() == STATE_ON``. With BLE apps
# registered (BLE scanning on, ``ble_scan_always_enabled`` 1) a disabled adapter rests in
# BLE_ON, ``enabled: false`` (BluetoothManagerService.sendBrEdrDownCallback "Staying in
# BLE_ON"; a Pixel 8 Pro dump in johnklee/bt_test_common's bt_utils README).

_BT_STATE = re.compile(r"^[ \t]*state:[ \t]*(.*?)[ \t\r]*$", re.MULTILINE)
_BT_ENABLED = re.compile(r"^\s*enabled:\s*(true|false)\s*$", re.MULTILINE)


class ClassicBluetooth(enum.Enum):
    """What the adapter state means for classic Bluetooth, the switch a user sees."""

    OFF = "off"  # OFF or BLE_ON: classic off and resting (BLE_ON: BLE-only for scanning apps)
    ON = "on"  # ON: BluetoothAdapter.isEnabled()
    TURNING_ON = "turning_on"  # BLE_TURNING_ON or TURNING_ON: on the way up
    TURNING_OFF = "turning_off"  # TURNING_OFF or BLE_TURNING_OFF: on the way down
    UNKNOWN = "unknown"  # no state line, a name nameForState never prints, or enabled disagrees


# AdapterState (packages/modules/Bluetooth android/app/.../btservice/AdapterState.java):
# enable OFF -> BLE_TURNING_ON -> BLE_ON -> TURNING_ON -> ON; disable ON -> TURNING_OFF ->
# BLE_ON, then BLE_TURNING_OFF -> OFF unless a BLE app keeps it in BLE_ON.
BLUETOOTH_STATES: dict[str, ClassicBluetooth] = {
    "OFF": ClassicBluetooth.OFF,
    "BLE_ON": ClassicBluetooth.OFF,
    "BLE_TURNING_ON": ClassicBluetooth.TURNING_ON,
    "TURNING_ON": ClassicBluetooth.TURNING_ON,
    "ON": ClassicBluetooth.ON,
    "TURNING_OFF": ClassicBluetooth.TURNING_OFF,
    "BLE_TURNING_OFF": ClassicBluetooth.TURNING_OFF,
}


def parse_bluetooth_state(text: str) -> str | None:
    """``dumpsys bluetooth_manager``: the first ``  state: X`` line's text, verbatim (``OFF``,
    ``BLE_ON``, ``?!?!? (17)``...). None when there is no such line."""
    match = _BT_STATE.search(text)
    return match[1] if match else None


def parse_bluetooth_enabled(text: str) -> bool | None:
    """``dumpsys bluetooth_manager``: the ``  enabled: true|false`` line."""
    match = _BT_ENABLED.search(text)
    return match[1] == "true" if match else None


def bluetooth_classic(state: str | None, enabled: bool | None = None) -> ClassicBluetooth:
    """Classify a state line (and the ``enabled`` line, when read): UNKNOWN unless the state
    is one nameForState prints and ``enabled`` agrees with it (true exactly in ON)."""
    kind = BLUETOOTH_STATES.get(state or "")
    if kind is None:
        return ClassicBluetooth.UNKNOWN
    if enabled is not None and enabled != (kind is ClassicBluetooth.ON):
        return ClassicBluetooth.UNKNOWN
    return kind


class BluetoothOn(enum.Enum):
    """``settings get global bluetooth_on``: the user's persisted choice, which
    BluetoothManagerService writes when a request arrives, not when the adapter settles.

    Values from BluetoothManagerService: ``BLUETOOTH_OFF`` 0, ``BLUETOOTH_ON_BLUETOOTH`` 1,
    ``BLUETOOTH_ON_AIRPLANE`` 2 (written for a persisted-on adapter when airplane mode turns
    on, back to 1 when it turns off). ``isBluetoothPersistedStateOn()`` is ``!= 0``, so any
    other number also reads as on.
    """

    OFF = "off"  # 0: turned off (disable(persist=true) writes it at the request)
    ON = "on"  # 1: turned on
    ON_AIRPLANE = "on_airplane"  # 2: on, held off while airplane mode is on
    ON_OTHER = "on_other"  # another integer: the manager treats it as on (!= BLUETOOTH_OFF)
    UNSET = "unset"  # ``null``: never written
    UNREADABLE = "unreadable"  # not an integer

    @property
    def wants_on(self) -> bool | None:
        """Whether the persisted choice is on; None when unset or unreadable."""
        if self in (BluetoothOn.UNSET, BluetoothOn.UNREADABLE):
            return None
        return self is not BluetoothOn.OFF


def parse_bluetooth_on(text: str) -> BluetoothOn:
    """``settings get global bluetooth_on`` into what the manager makes of it."""
    value = parsers.parse_settings_value(text)
    if value is None:
        return BluetoothOn.UNSET
    number = parsers.parse_settings_int(text)
    if number is None:
        return BluetoothOn.UNREADABLE
    return {0: BluetoothOn.OFF, 1: BluetoothOn.ON, 2: BluetoothOn.ON_AIRPLANE}.get(
        number, BluetoothOn.ON_OTHER
    )


# ---- actions -----------------------------------------------------------------------------

NO_HARDWARE = (
    "this phone has no Bluetooth adapter: the bluetooth_manager service is not registered "
    '(dumpsys: "Can\'t find service")'
)

# What each target accepts once settled: adapter states and persisted choices.
_SETTLED_STATES = {True: frozenset({"ON"}), False: frozenset({"OFF", "BLE_ON"})}
_SETTLED_SETTINGS = {
    True: frozenset({BluetoothOn.ON, BluetoothOn.ON_AIRPLANE, BluetoothOn.ON_OTHER}),
    False: frozenset({BluetoothOn.OFF}),
}
_EXPECTED = {
    True: {"state": ["ON"], "bluetooth_on": "not 0"},
    False: {"state": ["OFF", "BLE_ON"], "bluetooth_on": 0},
}


@dataclass(frozen=True)
class BtState:
    """One reading: the manager's state line (verbatim) and ``bluetooth_on``."""

    present: bool
    state: str | None
    classic: ClassicBluetooth
    setting: BluetoothOn
    setting_value: int | None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "bluetooth_on": self.setting_value}

    def is_settled(self, enabled: bool) -> bool:
        """Resting in the target: ON and persisted on, or OFF/BLE_ON and persisted off."""
        return (
            self.classic is not ClassicBluetooth.UNKNOWN
            and self.state in _SETTLED_STATES[enabled]
            and self.setting in _SETTLED_SETTINGS[enabled]
        )


_ABSENT = BtState(False, None, ClassicBluetooth.UNKNOWN, BluetoothOn.UNSET, None)


def read_state(ctx: ActionContext, phase: str) -> BtState:
    """Both read-backs, each observed as evidence (the state line and setting verbatim)."""
    dump = ctx.recorder.read(DUMPSYS_BLUETOOTH)
    text = dump.stdout + dump.stderr
    if parsers.service_missing(text):
        ctx.recorder.observe("bluetooth_manager", "missing", phase, DUMPSYS_BLUETOOTH)
        return _ABSENT
    state = parse_bluetooth_state(text)
    classic = bluetooth_classic(state, parse_bluetooth_enabled(text))
    ctx.recorder.observe("bluetooth_state", state, phase, DUMPSYS_BLUETOOTH)
    setting_text = ctx.recorder.read(commands.BLUETOOTH_ON_GET).stdout
    setting = parse_bluetooth_on(setting_text)
    value = parsers.parse_settings_int(setting_text)
    observed: Any = setting_text.strip() if setting is BluetoothOn.UNREADABLE else value
    ctx.recorder.observe("bluetooth_on", observed, phase, commands.BLUETOOTH_ON_GET)
    return BtState(True, state, classic, setting, value)


def _unreadable(now: BtState) -> str:
    """Why a reading cannot be judged, quoting what the phone printed."""
    if now.classic is ClassicBluetooth.UNKNOWN:
        return f"cannot tell: dumpsys bluetooth_manager state line reads {now.state!r}"
    return "cannot tell: bluetooth_on is not a number"


def get(ctx: ActionContext, params: NoParams) -> Outcome:
    """Whether classic Bluetooth is on (value: {"enabled", "state", "bluetooth_on"}).

    ``enabled`` is true in ON only; BLE_ON (BLE scanning) is off. Not met, with the text
    read, when the state line is not one the manager prints.
    """
    now = read_state(ctx, "read")
    if not now.present:
        return outcome(ctx, Status.UNSUPPORTED, _target(None, None, False), NO_HARDWARE)
    if now.classic is ClassicBluetooth.UNKNOWN:
        return outcome(ctx, Status.NOT_MET, _target(None, now.to_json(), False), _unreadable(now))
    enabled = now.classic is ClassicBluetooth.ON
    return got(ctx, {"enabled": enabled, **now.to_json()})


def _target(expected: Any, observed: Any, met: bool) -> dict[str, Any]:
    return {"expected": expected, "observed": observed, "met": met}


def _poll_transitions(ctx: ActionContext, enabled: bool) -> tuple[BtState, list[dict[str, Any]]]:
    """Poll until settled or the bound passes; returns the last reading and each change.

    OFF and ON end a transition; BLE_ON is also passed on the way, so it counts as settled
    when two readings in a row show it.
    """
    transitions: list[dict[str, Any]] = []
    readings: list[BtState] = []

    def sample() -> BtState:
        now = read_state(ctx, "poll")
        readings.append(now)
        if not transitions or transitions[-1]["observed"] != now.to_json():
            transitions.append({"at": now_iso(), "observed": now.to_json()})
        return now

    def done(now: BtState) -> bool:
        if not now.is_settled(enabled):
            return False
        if now.state != "BLE_ON":
            return True
        return len(readings) > 1 and readings[-2].to_json() == now.to_json()

    last, _ = ctx.poll("bluetooth", sample, done)
    return last, transitions


def adapter_change(enabled: bool, before: BtState) -> Change:
    """``bluetooth adapter OFF -> ON``: the state line read now, and the one asked for (a
    disable may also rest in BLE_ON; the card says OFF, the switch a person sees)."""
    return Change("bluetooth adapter", before.state or "?", "ON" if enabled else "OFF")


def set_enabled(ctx: ActionContext, params: BluetoothSet) -> Outcome:
    """Turn classic Bluetooth on or off; met when the adapter rests in the target (ON, or
    OFF/BLE_ON) and ``bluetooth_on`` agrees. Not met, sending nothing, when the state line
    cannot be read. When the owner's policy asks, it stops before the command with the
    preview ``bluetooth adapter OFF -> ON`` read from the phone (``setting.ask``)."""
    enabled = params.enabled
    want = _EXPECTED[enabled]
    before = read_state(ctx, "before")
    if not before.present:
        return outcome(ctx, Status.UNSUPPORTED, _target(want, None, False), NO_HARDWARE)
    if before.is_settled(enabled):
        ctx.recorder.note("already in the target state: no command sent")
        return outcome(
            ctx, Status.MET, _target(want, before.to_json(), True), "already in target",
            value=enabled,
        )  # fmt: skip
    if before.classic is ClassicBluetooth.UNKNOWN:
        return outcome(
            ctx, Status.NOT_MET, _target(want, before.to_json(), False),
            f"{_unreadable(before)}; no command sent", before=before.to_json(),
        )  # fmt: skip
    argv = bluetooth_set(enabled, shell_command=ctx.device.capabilities[CMD_BLUETOOTH_MANAGER.name])
    if _answer(enabled, before) == "happened":
        # An earlier request is still taking effect: verify it, send nothing.
        ctx.recorder.note(f"already {before.state}: waiting for it, no command sent")
        exit_note = "no command (transition already under way)"
    else:
        asked = ask(ctx, adapter_change(enabled, before), before.to_json())
        if asked is not None:
            return asked
        result = ctx.effect("bluetooth.set", f"enabled={enabled}", argv, {"enabled": enabled})
        exit_note = f"{' '.join(argv)} exited {result.exit_code}"
    after, transitions = _poll_transitions(ctx, enabled)
    detail = {"before": before.to_json(), "after": after.to_json(), "transitions": transitions}
    if not after.is_settled(enabled):
        why = _unreadable(after) if after.classic is ClassicBluetooth.UNKNOWN else "not settled"
        return outcome(
            ctx, Status.NOT_MET, _target(want, after.to_json(), False),
            f"{exit_note} but Bluetooth did not rest in {'/'.join(sorted(_SETTLED_STATES[enabled]))} "
            f"within {ctx.settle_timeout:g}s ({why})", **detail,
        )  # fmt: skip
    return outcome(
        ctx,
        Status.MET,
        _target(want, after.to_json(), True),
        f"Bluetooth {'on' if enabled else 'off'} ({after.state})",
        value=enabled,
        **detail,
    )


# What a reading says about a request for each target, keyed by (target, adapter state,
# persisted choice); anything not listed cannot be told. "happened": the target holds or
# the manager is carrying the request out; "did_not_happen": resting the other way.
# Sources (BluetoothManagerService): the request writes bluetooth_on before the adapter
# moves, so a setting that disagrees with a resting adapter is a request not yet carried
# out (or a later one) - cannot tell. BLE_ON with bluetooth_on 1 continues to ON
# (continueFromBleOnState); BLE_TURNING_ON with 0 may be a BLE-only start or, before
# Android 13, an enable that persists 1 only at BLE_ON. TURNING_OFF with 2 is airplane
# mode turning the adapter off, not a disable (which writes 0).
_ON, _OFF, _AIR = BluetoothOn.ON, BluetoothOn.OFF, BluetoothOn.ON_AIRPLANE
_ANSWERS: dict[tuple[bool, str, BluetoothOn], str] = {
    (True, "ON", _ON): "happened",
    (True, "ON", _AIR): "happened",
    (True, "TURNING_ON", _ON): "happened",
    (True, "BLE_TURNING_ON", _ON): "happened",
    (True, "BLE_ON", _ON): "happened",
    (True, "BLE_ON", _OFF): "did_not_happen",
    (True, "OFF", _OFF): "did_not_happen",
    (True, "OFF", _AIR): "did_not_happen",
    (False, "OFF", _OFF): "happened",
    (False, "BLE_ON", _OFF): "happened",
    (False, "TURNING_OFF", _OFF): "happened",
    (False, "BLE_TURNING_OFF", _OFF): "happened",
    (False, "OFF", _AIR): "did_not_happen",
    (False, "ON", _ON): "did_not_happen",
}


def _answer(enabled: bool, now: BtState) -> str:
    """The table's answer for one reading; ``cannot_tell`` for anything unreadable."""
    if not now.present or now.classic is ClassicBluetooth.UNKNOWN or now.state is None:
        return "cannot_tell"
    setting = BluetoothOn.ON if now.setting is BluetoothOn.ON_OTHER else now.setting
    return _ANSWERS.get((enabled, now.state, setting), "cannot_tell")


def reconcile(ctx: ActionContext, params: BluetoothSet, hint: dict[str, Any]) -> str:
    """Did an interrupted ``bluetooth.set`` take effect?

    ``happened`` when the adapter rests in the target (a disable resting in BLE_ON too) or
    the manager is carrying the request out; ``did_not_happen`` when it rests the other way;
    ``cannot_tell`` otherwise, and whenever the state line or setting cannot be read.
    """
    return _answer(params.enabled, read_state(ctx, "read"))


def name_target(params: dict[str, Any], observed: Any) -> str:
    """``bluetooth.on`` / ``bluetooth.off``: classic Bluetooth (BLE_ON is off)."""
    if isinstance(observed, dict) and "state" in observed:
        state = observed["state"]
        observed = bluetooth_classic(state if isinstance(state, str) else None).value
    if isinstance(observed, bool):
        return f"bluetooth.{'on' if observed else 'off'}"
    return f"bluetooth.{observed}"


# ---- declaration -------------------------------------------------------------------------


_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads="`dumpsys bluetooth_manager` (`state:`), `settings get global bluetooth_on`",
    effect=(
        "`cmd bluetooth_manager enable|disable` where the service is listed in `cmd -l` (API 33+),"
        " else `svc bluetooth`"
    ),
    verified=(
        "both read-backs polled through TURNING_ON/OFF; every change recorded with its time in "
        "`detail.transitions`"
    ),
)

DECLARED = (
    Method(
        "bluetooth.set", BluetoothSet, set_enabled, name_target, reconcile=reconcile,
        previews=True, probes=(SERVICES, CMD_BLUETOOTH_MANAGER),
        needs=service_running("bluetooth_manager"),
        summary="Turn Bluetooth on or off, verified by reading the adapter state back.",
        reads="the Bluetooth adapter state (dumpsys bluetooth_manager, bluetooth_on)",
        changes="the Bluetooth adapter (on/off)",
        actions_row=_ACTIONS_ROW,
    ),
    Method(
        "bluetooth.get", NoParams, get, name_target, probes=(SERVICES, CMD_BLUETOOTH_MANAGER), needs=service_running("bluetooth_manager"),
        summary="Read whether Bluetooth is on.",
        reads="the Bluetooth adapter state (dumpsys bluetooth_manager, bluetooth_on)",
    ),
)  # fmt: skip
