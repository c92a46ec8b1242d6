"""``dnd.set`` / ``dnd.get``: Do Not Disturb through ``cmd notification set_dnd``.

Read ``settings get global zen_mode`` (0 off, 1 priority, 3 alarms, 2 total silence:
Settings.Global.ZEN_MODE_*), apply with ``set_dnd`` (API 29+, probed through ``cmd
notification help``), and poll ``zen_mode`` until it shows the target and holds it for one
more read. ``settings put global zen_mode`` is never used: ZenModeHelper puts its own value
back. ``set_dnd`` exits 0 even when it failed (``Error occurred...``) or did nothing, so only
the read-back decides.

Sources (AOSP ``platform_frameworks_base``): ``cmd notification set_dnd``:
services/core/java/com/android/server/notification/NotificationShellCmd.java (``set_dnd``
from API 29; ``on`` = ``none`` = total silence, ``all`` = ``off``); it catches every
exception and prints ``Error occurred. Check logcat for details.`` with exit 0.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from phoned.device import commands, parsers
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method
from phoned.device.actions.params import NoParams, Params
from phoned.device.actions.reads import got, read, target
from phoned.device.actions.setting import Change, Setting
from phoned.device.commands import Argv
from phoned.device.probes import SET_DND
from pydantic import Field

# ---- params ------------------------------------------------------------------------------


class DndSet(Params):
    """The Do Not Disturb mode to set."""

    mode: Literal["off", "priority", "alarms", "total_silence"] = Field(
        description="off; priority (priority interruptions only); alarms (alarms only); "
        "total_silence (nothing)",
        examples=["priority"],
    )


# ---- commands ----------------------------------------------------------------------------
# Reading zen_mode is shared with the device context: ``commands.ZEN_MODE_GET``.

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


# ---- parsers -----------------------------------------------------------------------------

# NotificationShellCmd catches every exception and prints this prefix with exit 0.
NOTIFICATION_ERROR_PREFIX = "Error occurred. Check logcat for details."


def notification_cmd_failed(text: str) -> bool:
    """Whether a ``cmd notification`` reply reports a failure despite its exit code 0."""
    return NOTIFICATION_ERROR_PREFIX in text or text.startswith("Unknown command")


# ---- actions -----------------------------------------------------------------------------

# dnd mode -> Settings.Global zen_mode value
MODE_TO_ZEN: dict[str, int] = {"off": 0, "priority": 1, "alarms": 3, "total_silence": 2}
ZEN_TO_MODE: dict[int, str] = {v: k for k, v in MODE_TO_ZEN.items()}


def read_zen(ctx: ActionContext, phase: str) -> int | None:
    """``zen_mode`` now (None when unset or unreadable), observed as evidence."""
    return read(ctx, "zen_mode", commands.ZEN_MODE_GET, parsers.parse_settings_int, phase)


def get(ctx: ActionContext, params: NoParams) -> Outcome:
    """The current DND mode (``off``/``priority``/``alarms``/``total_silence``)."""
    zen = read_zen(ctx, "read")
    return got(ctx, ZEN_TO_MODE.get(zen) if zen is not None else None)


def _settled(ctx: ActionContext, want: int) -> tuple[int | None, bool]:
    """Poll until ``zen_mode`` shows ``want`` and still shows it one interval later."""
    value, ok = ctx.poll("zen_mode", lambda: read_zen(ctx, "poll"), lambda v: v == want)
    if not ok:
        return value, False
    time.sleep(ctx.poll_interval)
    again = read_zen(ctx, "after")
    return again, again == want


def set_mode(ctx: ActionContext, params: DndSet) -> Outcome:
    """Set the DND mode; met only when ``zen_mode`` settles on the target."""
    return SETTING.run(ctx, params)


def reconcile(ctx: ActionContext, params: DndSet, hint: dict[str, Any]) -> str:
    """Did an interrupted ``dnd.set`` take effect? Compares ``zen_mode`` with the target."""
    return SETTING.reconcile(ctx, params, hint)


def _read(ctx: ActionContext, params: DndSet, phase: str) -> int | None:
    return read_zen(ctx, phase)


def _reached(params: DndSet, zen: int | None) -> bool | None:
    return None if zen is None else zen == MODE_TO_ZEN[params.mode]


def _already(ctx: ActionContext, params: DndSet, before: int | None) -> Outcome:
    want, mode = MODE_TO_ZEN[params.mode], params.mode
    return outcome(ctx, Status.MET, target(want, before), f"DND already {mode}", value=mode)


def _unsupported(ctx: ActionContext, params: DndSet, before: int | None) -> Outcome | None:
    if ctx.device.capabilities[SET_DND.name]:
        return None
    return outcome(
        ctx, Status.UNSUPPORTED, target(MODE_TO_ZEN[params.mode], before),
        f"this phone (API {ctx.device.sdk}) has no 'cmd notification set_dnd' (added in "
        "API 29) and writing zen_mode through 'settings put' is reverted by Android",
    )  # fmt: skip


def _apply(ctx: ActionContext, params: DndSet, before: int | None) -> Outcome:
    mode = params.mode
    want = MODE_TO_ZEN[mode]
    word = DND_WORDS[mode]
    result = ctx.effect("dnd.set", f"zen_mode={want}", set_dnd(word), {"mode": mode})
    if not result.ok or notification_cmd_failed(result.stdout):
        after = read_zen(ctx, "after")
        return outcome(
            ctx, Status.NOT_MET, target(want, after),
            f"set_dnd {word} failed (exit {result.exit_code}): {result.stdout.strip()[:200]}",
            before=before, after=after,
        )  # fmt: skip
    after, ok = _settled(ctx, want)
    if not ok:
        return outcome(
            ctx, Status.NOT_MET, target(want, after),
            f"set_dnd {word} exited 0 but zen_mode stayed {after} (wanted {want})",
            before=before, after=after,
        )  # fmt: skip
    return outcome(
        ctx, Status.MET, target(want, after), f"DND {mode}", value=mode, before=before, after=after
    )


def name_target(params: dict[str, Any], observed: Any) -> str:
    """``dnd.<mode>``: a zen_mode value or a mode word."""
    mode = ZEN_TO_MODE.get(observed, observed) if isinstance(observed, int) else observed
    return f"dnd.{mode}"


def _zen_words(zen: int | None) -> str:
    return "unknown" if zen is None else f"{zen} ({ZEN_TO_MODE.get(zen, 'unknown mode')})"


def _change(params: DndSet, before: int | None) -> Change:
    """``zen_mode 0 (off) -> 1 (priority)``, for the preview of an approval."""
    return Change("zen_mode", _zen_words(before), _zen_words(MODE_TO_ZEN[params.mode]))


SETTING = Setting(_read, _reached, _already, _apply, _unsupported, change=_change)


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads="`settings get global zen_mode`",
    effect=(
        "`mode` `off`/`priority`/`alarms`/`total_silence` is sent as `cmd notification set_dnd "
        "off|priority|alarms|none` (Android's word for total silence is `none`; probe `cmd "
        "notification help`; API < 29: `unsupported`)"
    ),
    verified="`zen_mode` polled until it shows the target and holds it one more read",
)

DECLARED = (
    Method(
        "dnd.set", DndSet, set_mode, name_target, reconcile=reconcile, previews=True,
        probes=(SET_DND,),
        needs=lambda c: bool(c[SET_DND.name]),  # cmd notification set_dnd, API 29+
        summary="Set the Do Not Disturb mode, verified by reading it back.",
        reads="global setting zen_mode", changes="the Do Not Disturb mode (zen_mode)",
        actions_row=_ACTIONS_ROW,
    ),
    Method(
        "dnd.get", NoParams, get, name_target,
        summary="Read the Do Not Disturb mode.", reads="global setting zen_mode",
    ),
)  # fmt: skip
