"""``bluetooth.set`` / ``bluetooth.get``: the adapter through its manager service.

State is read from ``dumpsys bluetooth_manager`` (``  state: ON|OFF|TURNING_ON|TURNING_OFF``)
and ``settings get global bluetooth_on`` (written by the manager once a transition
completes). Apply with ``cmd bluetooth_manager enable|disable`` where that shell command
exists (API 33+, probed), ``svc bluetooth enable|disable`` below; both return before the
adapter changes (``svc`` exits 0 even when nothing happens), so the action polls through
TURNING_ON/TURNING_OFF within ``ctx.settle_timeout`` and records each transition with its
time. A phone without Bluetooth hardware has no ``bluetooth_manager`` service at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from device import commands, parsers
from device.actions.base import ActionContext, Outcome, Status, outcome
from device.actions.reads import got, invalid, target
from device.evidence import now_iso

NO_HARDWARE = (
    "this phone has no Bluetooth adapter: the bluetooth_manager service is not registered "
    '(dumpsys: "Can\'t find service")'
)


@dataclass(frozen=True)
class BtState:
    """One reading: the manager's adapter state and the ``bluetooth_on`` setting."""

    present: bool
    state: str | None
    setting: int | None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "bluetooth_on": self.setting}

    def is_settled(self, enabled: bool) -> bool:
        return self.state == ("ON" if enabled else "OFF") and self.setting == int(enabled)


def read_state(ctx: ActionContext, phase: str) -> BtState:
    """Both read-backs, each observed as evidence."""
    dump = ctx.recorder.read(commands.DUMPSYS_BLUETOOTH)
    text = dump.stdout + dump.stderr
    if parsers.service_missing(text):
        ctx.recorder.observe("bluetooth_manager", "missing", phase, commands.DUMPSYS_BLUETOOTH)
        return BtState(False, None, None)
    state = parsers.parse_bluetooth_state(text)
    ctx.recorder.observe("bluetooth_state", state, phase, commands.DUMPSYS_BLUETOOTH)
    setting_text = ctx.recorder.read(commands.BLUETOOTH_ON_GET).stdout
    setting = parsers.parse_settings_int(setting_text)
    ctx.recorder.observe("bluetooth_on", setting, phase, commands.BLUETOOTH_ON_GET)
    return BtState(True, state, setting)


def get(ctx: ActionContext, params: dict[str, Any]) -> Outcome:
    """Whether Bluetooth is on (value: {"enabled", "state", "bluetooth_on"})."""
    now = read_state(ctx, "read")
    if not now.present:
        return outcome(ctx, Status.UNSUPPORTED, target(None, None), NO_HARDWARE)
    return got(ctx, {"enabled": now.state == "ON", **now.to_json()})


def _poll_transitions(ctx: ActionContext, enabled: bool) -> tuple[BtState, list[dict[str, Any]]]:
    """Poll until settled or the bound passes; returns the last reading and each change."""
    transitions: list[dict[str, Any]] = []

    def sample() -> BtState:
        now = read_state(ctx, "poll")
        if not transitions or transitions[-1]["observed"] != now.to_json():
            transitions.append({"at": now_iso(), "observed": now.to_json()})
        return now

    last, _ = ctx.poll("bluetooth", sample, lambda s: s.is_settled(enabled))
    return last, transitions


_TOWARDS = {True: "TURNING_ON", False: "TURNING_OFF"}  # the transition into each target


def set_enabled(ctx: ActionContext, params: dict[str, Any]) -> Outcome:
    """Turn Bluetooth on or off; met when the state and ``bluetooth_on`` both settle."""
    enabled = params.get("enabled")
    if not isinstance(enabled, bool):
        return invalid(ctx, "enabled", f"enabled must be true or false, got {enabled!r}")
    want = {"state": "ON" if enabled else "OFF", "bluetooth_on": int(enabled)}
    before = read_state(ctx, "before")
    if not before.present:
        return outcome(ctx, Status.UNSUPPORTED, target(want, None), NO_HARDWARE)
    if before.is_settled(enabled):
        ctx.recorder.note("already in the target state: no command sent")
        return outcome(
            ctx, Status.MET, target(want, before.to_json()), "already in target", value=enabled
        )
    argv = commands.bluetooth_set(
        enabled, shell_command=ctx.device.capabilities.cmd_bluetooth_manager
    )
    if before.state == _TOWARDS[enabled]:
        # An earlier attempt's command is still taking effect: verify it, send nothing.
        ctx.recorder.note(f"already {before.state}: waiting for it, no command sent")
        exit_note = "no command (transition already under way)"
    else:
        result = ctx.effect("bluetooth.set", f"enabled={enabled}", argv, {"enabled": enabled})
        exit_note = f"{' '.join(argv)} exited {result.exit_code}"
    after, transitions = _poll_transitions(ctx, enabled)
    detail = {"before": before.to_json(), "after": after.to_json(), "transitions": transitions}
    if not after.is_settled(enabled):
        return outcome(
            ctx, Status.NOT_MET, target(want, after.to_json()),
            f"{exit_note} but Bluetooth did not reach "
            f"{want['state']} within {ctx.settle_timeout:g}s", **detail,
        )  # fmt: skip
    return outcome(
        ctx,
        Status.MET,
        target(want, after.to_json()),
        f"Bluetooth {want['state']}",
        value=enabled,
        **detail,
    )


def reconcile(ctx: ActionContext, params: dict[str, Any]) -> str:
    """Did an interrupted ``bluetooth.set`` take effect?

    Settled in the target state, or on its way there (TURNING_ON for enable): happened.
    Settled the other way: did not happen. On its way the other way: cannot tell.
    """
    enabled = params.get("enabled")
    now = read_state(ctx, "read")
    if not isinstance(enabled, bool) or not now.present or now.state is None:
        return "cannot_tell"
    if now.is_settled(enabled) or now.state == _TOWARDS[enabled]:
        return "happened"
    if now.state == _TOWARDS[not enabled]:
        return "cannot_tell"
    return "did_not_happen"
