"""``ui.handoff``: a step handed to the person holding the phone (issue 34).

Some steps only a person may do: a log-in, a one-time code, a CAPTCHA, a payment's "are you
sure". The task names the app (``package``), says in the planner's words what the person
should do (``instruction``: shown on the card, never run), and names what phoned must then
observe on the screen (``expect``, the UI tier's expectation). phoned never taps, types or
reads what the person enters:

1. It reads the screen (the keyguard, the app in front, one dump). The expectation already
   observed: ``met``. Another app in front (not the lock screen, not a permission dialog the
   app raised, where the person may be acting): nothing was done, the task fails
   ``stale_state`` (``detail.stale``). Else the step is handed over: ``waiting`` with
   ``detail.person`` (``waiting_for`` ``person:PACKAGE:UNTIL``, ``daemon/lifecycle/waiting.py``),
   the screen kept as ``handoff_before_*``.
2. While it waits, the phone's worker looks again every pause check (``observed``: reads
   only, between other tasks; ``daemon/runtime/paused.py``); when the expectation shows or
   another app comes to the front, the task resumes, its stale check runs, and this run
   decides again from a fresh read (1.). The TTL (``ttl_s``) is the sweeper's: ``timeout``.

Evidence keeps the screens before and after with every input field blanked
(``ui_hierarchy.blank_inputs``: ``EditText`` and password nodes lose their text in the
hierarchy; in the screenshot their bounds are filled), and never a field's text: an
expectation on a field's text (``expect.field``) is refused at the door. A handoff in an app
phoned never acts in (the lock screen, a permission dialog, a purchase flow) is allowed: the
person acts there; phoned still only reads.
"""

from __future__ import annotations

import io
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phoned.device import ui_hierarchy
from phoned.device.actions import ui
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.ui_step import (
    EMULATOR_APP,
    PROTECTED_PACKAGES,
    Expect,
    StepParams,
    check,
    refusal,
    wanted,
)
from phoned.foundation.private_files import write_private
from pydantic import Field, StrictInt, field_validator

# ---- params ------------------------------------------------------------------------------

MAX_INSTRUCTION = 500
TTL_DEFAULT_S, TTL_MIN_S, TTL_MAX_S = 300, 10, 3600


def _no_controls(value: str, what: str) -> str:
    """``value`` unless it holds a control character (Unicode category Cc: NUL, ESC, newline
    ...), which a card would have to show as something else than the planner wrote."""
    bad = next((c for c in value if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise ValueError(f"{what} must not contain control characters (found U+{ord(bad):04X})")
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


class UiHandoff(StepParams):
    """The app, what the person should do there, and what phoned must then observe."""

    instruction: str = Field(
        min_length=1, max_length=MAX_INSTRUCTION,
        description="what the person should do, in the planner's words: shown on the card, "
        "never run",
        examples=["Type a note and tap Save"],
    )  # fmt: skip
    expect: Expect = Field(
        description="what phoned must observe once the person did the step (the UI tier's "
        "expectation, without field+text: phoned never reads what the person enters)",
        examples=[{"appears": {"resource_id": "com.example.notes:id/saved_count", "text": "1"}}],
    )
    ttl_s: StrictInt = Field(
        default=TTL_DEFAULT_S, ge=TTL_MIN_S, le=TTL_MAX_S,
        description="how long the person has, in seconds; then the task fails timeout",
    )  # fmt: skip

    @field_validator("instruction")
    @classmethod
    def _instruction_ok(cls, value: str) -> str:
        return _no_controls(value, "the instruction")

    @field_validator("expect")
    @classmethod
    def _expect_ok(cls, value: Expect) -> Expect:
        if value.field is not None:
            raise ValueError(
                "a handoff never reads what the person enters: expect a screen that shows "
                "the step was done (appears, disappears, package), not a field's text"
            )
        for text in _strings(value.model_dump(exclude_none=True)):
            _no_controls(text, "the expectation")
        return value


# ---- commands ----------------------------------------------------------------------------
# None of its own: the keyguard and the app in front with the shared dumpsys reads, the
# screen with ui.dump, the screenshot with screencap (ui.screenshot). Nothing with an effect.

# ---- parsers -----------------------------------------------------------------------------
# None of its own: ui_hierarchy.blank_inputs takes the input fields out of a dump.

# ---- actions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Look:
    """One read of the phone for a handoff: whether it is done, or stale (another app)."""

    met: bool
    stale: str  # why another app in front makes the step stale; "" when it does not
    observed: dict[str, Any]
    screen: ui.Screen | None


def look(ctx: ActionContext, params: UiHandoff, phase: str) -> Look:
    """Read the keyguard, the app in front and the screen (reads only); the expectation
    checked on that screen. Stale: another app in front that is not a screen the person may
    be acting on (the lock screen, a dialog of the permission controller or installer)."""
    locked = ui.keyguard_showing(ctx, phase)
    front = ui.foreground(ctx, phase)
    package = front.package if front is not None else None
    if locked:
        return Look(False, "", {"locked": True}, None)
    seen = check(ctx, params.expect, phase)
    observed = {**seen.observed, "front": package}
    if seen.met:
        return Look(True, "", observed, seen.screen)
    person_acts_there = package in PROTECTED_PACKAGES or refusal(front, seen.screen, locked)
    if package != params.package and package is not None and not person_acts_there:
        why = f"stale: {package} is in front, not {params.package}; nothing was done"
        return Look(False, why, observed, seen.screen)
    return Look(False, "", observed, seen.screen)


def observed(ctx: ActionContext, params: UiHandoff) -> bool:
    """Whether a paused handoff should resume now: the expectation shows, or another app
    came to the front (the resumed run then fails it ``stale_state``). Reads only."""
    seen = look(ctx, params, "read")
    return seen.met or bool(seen.stale)


def keep_blanked(ctx: ActionContext, screen: ui.Screen, when: str) -> None:
    """Keep ``screen`` as ``handoff_<when>_hierarchy`` (every input field's text removed)
    and a screenshot as ``handoff_<when>_screenshot`` with those fields' bounds filled: the
    raw screenshot goes to a private file that is removed once blanked."""
    if ctx.artifacts_dir is None:
        return
    folder = Path(ctx.artifacts_dir)
    xml, fields = ui_hierarchy.blank_inputs(screen.xml)
    path = write_private(folder / f"handoff_{when}_hierarchy.xml", xml)
    ctx.recorder.artifacts[f"handoff_{when}_hierarchy"] = str(path)
    raw_name = f"handoff_{when}_raw"
    raw = ui.screenshot(ctx, raw_name)
    ctx.recorder.artifacts.pop(raw_name, None)
    if raw is None:
        return
    from PIL import Image, ImageDraw  # lazy: PIL is loaded only by the verbs that use it (start-up)

    try:
        with Image.open(raw) as image:
            shown = image.convert("RGB")
        draw = ImageDraw.Draw(shown)
        for left, top, right, bottom in fields:
            if right > left and bottom > top:
                draw.rectangle((left, top, right - 1, bottom - 1), fill=(128, 128, 128))
        out = io.BytesIO()
        shown.save(out, format="PNG")
    finally:
        Path(raw).unlink(missing_ok=True)
    kept = write_private(folder / f"handoff_{when}_screenshot.png", out.getvalue())
    ctx.recorder.artifacts[f"handoff_{when}_screenshot"] = str(kept)


def handoff(ctx: ActionContext, params: UiHandoff) -> Outcome:
    """Hand the step to the person, or judge it done or stale from a fresh read; nothing
    is tapped, typed or read of what the person enters."""
    seen = look(ctx, params, "before")
    target = {"expected": wanted(params.expect), "observed": seen.observed, "met": seen.met}
    if seen.met or seen.stale:
        if seen.screen is not None:
            keep_blanked(ctx, seen.screen, "after")
        if seen.met:
            return outcome(ctx, Status.MET, target, "the person did the step: expectation observed")
        return outcome(ctx, Status.UNSUPPORTED, target, seen.stale, stale=True, refused=seen.stale)
    kept = (
        ctx.artifacts_dir is not None
        and (Path(ctx.artifacts_dir) / "handoff_before_screenshot.png").exists()
    )
    if seen.screen is not None and not kept:  # the screen the person was handed, once
        keep_blanked(ctx, seen.screen, "before")
    return outcome(
        ctx, Status.WAITING, target,
        f"waiting for you on the phone, in {params.package}: {params.instruction}",
        person=params.package, ttl_s=params.ttl_s,
    )  # fmt: skip


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads="`dumpsys window` (the app in front, keyguard), the hierarchy through uiautomator2, "
    "`screencap -p` (input fields blanked before it is kept)",
    effect="none: the person does the step; phoned never taps, types or reads what they enter",
    verified="the expectation (an element appears/goes, the app in front), polled by the "
    "pause watcher while the task waits",
)

DECLARED = (
    Method(
        "ui.handoff", UiHandoff, handoff, fixed("ui.handed_off"),
        # the script brings Settings to the front first: the expectation already holds, so
        # the step completes at once (nobody is there to do one on an emulator in CI)
        emulator_params={"package": EMULATOR_APP, "instruction": "Nothing to do: Settings shows",
                         "expect": {"package": EMULATOR_APP}, "ttl_s": 10},
        summary="Hand a step to the person on the phone (a log-in, a code, a confirmation): "
        "the task waits, showing the instruction and the screen, until phoned observes the "
        "expectation; never taps, types or reads what the person enters.",
        reads="the app in front, the keyguard, the hierarchy (uiautomator2), a screenshot "
        "with input fields blanked",
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
