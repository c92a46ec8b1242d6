"""``wifi.set`` / ``wifi.get``: the Wi-Fi radio, on or off.

Read ``dumpsys wifi``: WifiServiceImpl.dump prints ``Wi-Fi is <state>`` (the state machine's
``WIFI_STATE_*`` by name: enabled, disabled, enabling, disabling, unknown state). Without that
line the ``wifi_on`` setting decides (WifiSettingsStore: 0 off, 1 on, 2 on in airplane mode,
3 off by airplane mode); it is the persisted request, written as the toggle is accepted.
Apply with ``cmd wifi set-wifi-enabled enabled|disabled`` (API 30+) or ``svc wifi
enable|disable`` (below): both return before the radio changes and print nothing when they
succeed, so the state is polled until it shows the target.

Sources of the commands (AOSP):

* ``cmd wifi set-wifi-enabled enabled|disabled``: WifiShellCommand (frameworks/opt/net/wifi,
  Android 11; a non-privileged command calling WifiServiceImpl.setWifiEnabled as
  ``com.android.shell``, printing nothing); ``svc wifi enable|disable``: cmds/svc
  WifiCommand.java (API <= 30: Svc.java drops ``wifi`` in Android 12). ``dumpsys wifi``:
  WifiServiceImpl.dump prints ``Wi-Fi is <state>``.
"""

from __future__ import annotations

import re
from typing import Any

from phoned.device import commands, parsers
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method
from phoned.device.actions.params import NoParams, Params
from phoned.device.actions.reads import got, read, target
from phoned.device.actions.setting import Change, Setting
from phoned.device.commands import Argv
from phoned.device.probes import SERVICES, service_running
from pydantic import Field, StrictBool

# ---- params ------------------------------------------------------------------------------


class WifiSet(Params):
    """Turn Wi-Fi on or off."""

    enabled: StrictBool = Field(description="true: on, false: off", examples=[False])


# ---- commands ----------------------------------------------------------------------------

WIFI_ON_GET: Argv = commands.settings_get("global", "wifi_on")
DUMPSYS_WIFI: Argv = ("dumpsys", "wifi")
WIFI_CMD_SINCE_SDK = 30


def wifi_set(enable: bool, sdk: int) -> Argv:
    """``cmd wifi set-wifi-enabled enabled|disabled`` from API 30, ``svc wifi enable|disable``
    below. Both ask WifiManager.setWifiEnabled and return before the radio changes."""
    if sdk >= WIFI_CMD_SINCE_SDK:
        return ("cmd", "wifi", "set-wifi-enabled", "enabled" if enable else "disabled")
    return ("svc", "wifi", "enable" if enable else "disable")


# ---- parsers -----------------------------------------------------------------------------

# WifiServiceImpl.dump: "Wi-Fi is " + the state machine's WIFI_STATE_* name (Android 12+:
# printed per client mode manager, ConcreteClientModeManager.dump).
_WIFI_IS = re.compile(
    r"^\s*Wi-Fi is (enabled|disabled|enabling|disabling|unknown state)\s*$", re.MULTILINE
)
# Settings.Global.WIFI_ON as WifiSettingsStore persists it: 0 off, 1 on, 2 on though airplane
# mode is on, 3 off because airplane mode is on.
_WIFI_ON_WORDS = {0: "disabled", 1: "enabled", 2: "enabled", 3: "disabled"}


def parse_wifi_state(text: str) -> str | None:
    """``dumpsys wifi``: ``enabled``, ``disabled``, ``enabling``, ``disabling`` or
    ``unknown state`` from the first ``Wi-Fi is`` line; None without one."""
    match = _WIFI_IS.search(text)
    return match.group(1) if match else None


def wifi_on_state(value: int | None) -> str | None:
    """The ``wifi_on`` setting as a state word (``enabled``/``disabled``); None if unknown."""
    return _WIFI_ON_WORDS.get(value) if value is not None else None


# ---- actions -----------------------------------------------------------------------------

SETTLED = ("enabled", "disabled")


def read_state(ctx: ActionContext, phase: str) -> str | None:
    """The radio's state word, observed as evidence; None when neither source shows one."""
    state = read(ctx, "wifi_state", DUMPSYS_WIFI, parse_wifi_state, phase)
    if state is not None:
        return state
    wifi_on = read(ctx, "wifi_on", WIFI_ON_GET, parsers.parse_settings_int, phase)
    return wifi_on_state(wifi_on)


def get(ctx: ActionContext, params: NoParams) -> Outcome:
    """Whether Wi-Fi is on (value: {"enabled": bool, "state": word}); not met while the
    radio is between states or its state cannot be read."""
    state = read_state(ctx, "read")
    if state not in SETTLED:
        return outcome(ctx, Status.NOT_MET, target(None, state), f"Wi-Fi state is {state}")
    return got(ctx, {"enabled": state == "enabled", "state": state})


def set_enabled(ctx: ActionContext, params: WifiSet) -> Outcome:
    """Turn Wi-Fi on or off; met when the read-back shows the radio settled in the target."""
    return SETTING.run(ctx, params)


def reconcile(ctx: ActionContext, params: WifiSet, hint: dict[str, Any]) -> str:
    """Did an interrupted ``wifi.set`` take effect? Only a settled state decides."""
    return SETTING.reconcile(ctx, params, hint)


def _want(params: WifiSet) -> str:
    return "enabled" if params.enabled else "disabled"


def _read(ctx: ActionContext, params: WifiSet, phase: str) -> str | None:
    return read_state(ctx, phase)


def _reached(params: WifiSet, state: str | None) -> bool | None:
    return None if state not in SETTLED else state == _want(params)


def _already(ctx: ActionContext, params: WifiSet, before: str | None) -> Outcome:
    want = _want(params)
    return outcome(ctx, Status.MET, target(want, before), f"Wi-Fi already {want}")


def _unsupported(ctx: ActionContext, params: WifiSet, before: str | None) -> Outcome | None:
    if before is not None:
        return None
    return outcome(
        ctx, Status.UNSUPPORTED, target(_want(params), None), "the Wi-Fi state is unreadable"
    )


def _apply(ctx: ActionContext, params: WifiSet, before: str | None) -> Outcome:
    want = _want(params)
    argv = wifi_set(params.enabled, ctx.device.sdk)
    result = ctx.effect("wifi.set", f"wifi={want}", argv, {"enabled": params.enabled})
    after, ok = ctx.poll("wifi", lambda: read_state(ctx, "poll"), lambda s: s == want)
    message = f"Wi-Fi {after} (wanted {want})"
    if not ok and (result.stdout.strip() or not result.ok):
        message += f"; {' '.join(argv)} exited {result.exit_code}: {result.stdout.strip()[:200]}"
    status = Status.MET if ok else Status.NOT_MET
    return outcome(ctx, status, target(want, after), message, before=before, after=after)


def name_target(params: dict[str, Any], observed: Any) -> str:
    """``wifi.on`` / ``wifi.off`` (``wifi.<state>`` between states)."""
    state = observed.get("state") if isinstance(observed, dict) else observed
    return {"enabled": "wifi.on", "disabled": "wifi.off"}.get(str(state), f"wifi.{state}")


def _change(params: WifiSet, before: str | None) -> Change:
    """``wifi disabled -> enabled``, for the preview of an approval."""
    return Change("wifi", before or "unknown", _want(params))


SETTING = Setting(_read, _reached, _already, _apply, _unsupported, change=_change)


# ---- declaration -------------------------------------------------------------------------


_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads=(
        "`dumpsys wifi` (`Wi-Fi is <state>`), `settings get global wifi_on` when that line is "
        "missing"
    ),
    effect="`cmd wifi set-wifi-enabled enabled|disabled` (API 30+), else `svc wifi enable|disable`",
    verified="the state polled through enabling/disabling until it settles on the target",
)

DECLARED = (
    Method(
        "wifi.set",
        WifiSet,
        set_enabled,
        name_target,
        reconcile=reconcile,
        previews=True,
        probes=(SERVICES,),
        needs=service_running("wifi"),
        summary="Turn Wi-Fi on or off, verified by reading the Wi-Fi state back.",
        reads="the Wi-Fi state (dumpsys wifi, global wifi_on)",
        changes="Wi-Fi (on/off)",
        emulator_params={"enabled": True},
        actions_row=_ACTIONS_ROW,
    ),
    Method(
        "wifi.get",
        NoParams,
        get,
        name_target,
        probes=(SERVICES,),
        needs=service_running("wifi"),
        summary="Read whether Wi-Fi is on.",
        reads="the Wi-Fi state (dumpsys wifi, global wifi_on)",
    ),
)
