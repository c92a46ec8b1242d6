"""``brightness.get`` / ``brightness.set``: the screen backlight level and adaptive brightness.

Facts (AOSP ``platform_frameworks_base``):

* ``settings get system screen_brightness`` is the backlight level 0..255
  (android.provider.Settings.System.SCREEN_BRIGHTNESS javadoc: "The screen backlight
  brightness between 0 and 255"). SettingsProvider has no validator for it
  (packages/SettingsProvider/src/android/provider/settings/validators/
  SystemSettingsValidators.java), so the range is checked here, before anything is sent.
* ``settings get system screen_brightness_mode`` is 0 = SCREEN_BRIGHTNESS_MODE_MANUAL,
  1 = SCREEN_BRIGHTNESS_MODE_AUTOMATIC (Settings.System); its validator in
  SystemSettingsValidators.java is BOOLEAN_VALIDATOR (only 0 and 1 are stored).
* ``settings get`` prints ``null`` for an unset key; ``settings put`` prints nothing on
  success (packages/SettingsProvider/.../SettingsService.java).
* Under automatic mode the adaptive-brightness controller drives the backlight, so a level
  only means something in manual mode: ``brightness.set {level}`` writes mode 0, then the
  level, and is met only when the read-back shows mode 0 and the level; ``{auto: true}``
  writes mode 1 and is met when the mode reads 1. A write already in place is not sent
  again. Reconciling reads both settings back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from phoned.device import commands, parsers
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method
from phoned.device.actions.params import NoParams, Params
from phoned.device.actions.reads import got, read
from phoned.device.actions.setting import Change, Setting
from phoned.device.commands import Argv
from pydantic import Field, StrictInt, ValidationInfo, field_validator, model_validator

# ---- params ------------------------------------------------------------------------------

MAX_LEVEL = 255  # Settings.System.SCREEN_BRIGHTNESS: "between 0 and 255"


class BrightnessSet(Params):
    """Exactly one of ``level`` (0..255, manual mode) or ``auto: true`` (adaptive)."""

    level: StrictInt | None = Field(
        default=None,
        ge=0,
        le=MAX_LEVEL,
        description="backlight level 0..255; turns adaptive brightness off",
        examples=[128],
    )
    auto: Literal[True] | None = Field(
        default=None, description="true: turn adaptive brightness on (instead of a level)"
    )

    @field_validator("auto")
    @classmethod
    def _not_with_level(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        if value is not None and info.data.get("level") is not None:
            raise ValueError("give exactly one of level or auto, not both")
        return value

    @model_validator(mode="after")
    def _one_of(self) -> BrightnessSet:
        if self.level is None and self.auto is None:
            raise ValueError("give exactly one of level or auto")
        return self


# ---- commands ----------------------------------------------------------------------------

LEVEL_KEY, MODE_KEY = "screen_brightness", "screen_brightness_mode"
BRIGHTNESS_GET: Argv = commands.settings_get("system", LEVEL_KEY)
BRIGHTNESS_MODE_GET: Argv = commands.settings_get("system", MODE_KEY)
MODE_MANUAL, MODE_AUTOMATIC = 0, 1  # Settings.System.SCREEN_BRIGHTNESS_MODE_*


def brightness_set(level: int) -> Argv:
    """``settings put system screen_brightness LEVEL``."""
    return commands.settings_put("system", LEVEL_KEY, str(level))


def brightness_mode_set(auto: bool) -> Argv:
    """``settings put system screen_brightness_mode 1|0`` (automatic / manual)."""
    return commands.settings_put("system", MODE_KEY, str(MODE_AUTOMATIC if auto else MODE_MANUAL))


# ---- parsers -----------------------------------------------------------------------------


def parse_brightness_mode(text: str) -> bool | None:
    """``settings get system screen_brightness_mode``: True for automatic (1), False for
    manual (0); None when unset (``null``) or any other value (the provider's
    BOOLEAN_VALIDATOR stores only 0 and 1, so anything else is not a mode it wrote)."""
    value = parsers.parse_settings_int(text)
    if value is None:
        return None
    return {MODE_MANUAL: False, MODE_AUTOMATIC: True}.get(value)


# ---- actions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Brightness:
    """One reading of both settings; None where a setting is unset or unreadable."""

    level: int | None
    auto: bool | None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "auto": self.auto}

    def reached(self, params: BrightnessSet) -> bool:
        """Adaptive on for ``auto``; else manual mode at exactly the level asked for."""
        if params.auto:
            return self.auto is True
        return self.auto is False and self.level == params.level


def read_brightness(ctx: ActionContext, phase: str) -> Brightness:
    """Both settings, each observed as evidence."""
    level = read(ctx, LEVEL_KEY, BRIGHTNESS_GET, parsers.parse_settings_int, phase)
    auto = read(ctx, MODE_KEY, BRIGHTNESS_MODE_GET, parse_brightness_mode, phase)
    return Brightness(level, auto)


def _expected(params: BrightnessSet) -> dict[str, Any]:
    return {"auto": True} if params.auto else {"level": params.level, "auto": False}


def _target(params: BrightnessSet, now: Brightness) -> dict[str, Any]:
    return {"expected": _expected(params), "observed": now.to_json(), "met": now.reached(params)}


def get(ctx: ActionContext, params: NoParams) -> Outcome:
    """The level and whether adaptive brightness is on (value: {"level", "auto"}); not met
    when either setting is unset or unreadable."""
    now = read_brightness(ctx, "read")
    if now.level is None or now.auto is None:
        target = {"expected": None, "observed": now.to_json(), "met": False}
        return outcome(ctx, Status.NOT_MET, target, f"brightness unreadable: {now.to_json()}")
    return got(ctx, now.to_json())


def set_brightness(ctx: ActionContext, params: BrightnessSet) -> Outcome:
    """Set a level in manual mode, or turn adaptive brightness on; met only when both
    settings read back as asked."""
    return SETTING.run(ctx, params)


def reconcile(ctx: ActionContext, params: BrightnessSet, hint: dict[str, Any]) -> str:
    """Did an interrupted ``brightness.set`` take effect? Both settings decide."""
    return SETTING.reconcile(ctx, params, hint)


def _read(ctx: ActionContext, params: BrightnessSet, phase: str) -> Brightness:
    return read_brightness(ctx, phase)


def _reached(params: BrightnessSet, now: Brightness) -> bool | None:
    """As asked; None when a setting that decides is unset or unreadable."""
    if now.auto is None or (params.level is not None and now.level is None):
        return None
    return now.reached(params)


def _already(ctx: ActionContext, params: BrightnessSet, before: Brightness) -> Outcome:
    return outcome(
        ctx, Status.MET, _target(params, before), "brightness already as asked",
        value=before.to_json(),
    )  # fmt: skip


def _apply(ctx: ActionContext, params: BrightnessSet, before: Brightness) -> Outcome:
    want_auto = bool(params.auto)
    if before.auto is not want_auto:
        mode = MODE_AUTOMATIC if want_auto else MODE_MANUAL
        argv = brightness_mode_set(want_auto)
        ctx.effect("brightness.set", f"{MODE_KEY}={mode}", argv, {"auto": want_auto})
    if params.level is not None and before.level != params.level:
        argv = brightness_set(params.level)
        ctx.effect("brightness.set", f"{LEVEL_KEY}={params.level}", argv, {"level": params.level})
    after, ok = ctx.poll(
        "brightness", lambda: read_brightness(ctx, "after"), lambda now: now.reached(params),
        timeout=min(ctx.settle_timeout, 2.0),
    )  # fmt: skip
    status = Status.MET if ok else Status.NOT_MET
    message = f"brightness {after.to_json()} (wanted {_expected(params)})"
    return outcome(
        ctx, status, _target(params, after), message, value=after.to_json(),
        before=before.to_json(), after=after.to_json(),
    )  # fmt: skip


def name_target(params: dict[str, Any], observed: Any) -> str:
    """``brightness.auto`` (adaptive on) or ``brightness.<level>`` (manual)."""
    if isinstance(observed, dict):
        return "brightness.auto" if observed.get("auto") else f"brightness.{observed.get('level')}"
    return f"brightness.{observed}"


def _brightness_words(level: int | None, auto: bool | None) -> str:
    if auto:
        return "auto"
    return "unknown" if level is None else str(level)


def _change(params: BrightnessSet, before: Brightness) -> Change:
    """``brightness 120 -> 200`` (or ``-> auto``), for the preview of an approval."""
    after = _brightness_words(params.level, params.auto)
    return Change("brightness", _brightness_words(before.level, before.auto), after)


SETTING = Setting(_read, _reached, _already, _apply, change=_change)


# ---- declaration -------------------------------------------------------------------------

_READS = "system settings screen_brightness and screen_brightness_mode"

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads=(
        "`settings get system screen_brightness` (0..255) and `screen_brightness_mode` (0 manual, "
        "1 automatic)"
    ),
    effect=(
        "a level: `settings put system screen_brightness_mode 0`, then `settings put system "
        "screen_brightness N` (each only when it differs); `auto: true`: `... "
        "screen_brightness_mode 1`"
    ),
    verified="both settings read back: mode 0 and the level, or mode 1",
)

DECLARED = (
    Method(
        "brightness.set", BrightnessSet, set_brightness, name_target, reconcile=reconcile, previews=True,
        summary="Set the screen brightness: a level 0..255 in manual mode, or adaptive "
        "brightness on; verified by reading both settings back.",
        reads=_READS, changes="the screen brightness level and mode (manual/adaptive)",
        actions_row=_ACTIONS_ROW,
    ),
    Method(
        "brightness.get", NoParams, get, name_target,
        summary="Read the screen brightness level and whether adaptive brightness is on.",
        reads=_READS,
    ),
)  # fmt: skip
