"""``ui.tap``: tap one element of the app in front, then wait for the expectation.

The element is found on the screen read just before (``ui_step.prepare``: the refused
screens, the app in front, one match or a choice among several); with the owner's approval
when the policy asks (by default for every UI step: ``approval_policy``); one tap at its
centre (``ui.tap``: uiautomator2 ``click`` through ``ActionContext.effect_call``, journaled);
then the expectation is polled within the settle bound. A tap is never repeated: one that
may have landed is ``unknown`` and reconciled by looking for its expectation.
"""

from __future__ import annotations

from phoned.device.actions import ui
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import Method, fixed
from phoned.device.actions.ui_step import (
    EMULATOR_APP,
    EMULATOR_ROW,
    EXPECT,
    STEP_READS,
    Expect,
    Ready,
    Selector,
    StepParams,
    ask,
    prepare,
    reconcile,
    step_row,
    unknown,
    verify,
)
from phoned.device.errors import InputRefused, TransportLost, UiAutomatorError
from pydantic import Field

# ---- params ------------------------------------------------------------------------------


class UiTap(StepParams):
    """The element to tap, the app it is in, and what must show after."""

    selector: Selector = Field(
        description="the element to tap",
        examples=[{"resource_id": "com.example.notes:id/open_list_button"}],
    )
    expect: Expect = Field(
        description=EXPECT,
        examples=[{"appears": {"resource_id": "com.example.notes:id/notes_list"}}],
    )


# ---- commands ----------------------------------------------------------------------------
# None of its own: ui.tap (uiautomator2 click, or input tap on the shell path).

# ---- parsers -----------------------------------------------------------------------------
# None of its own: the screen is read by ui.dump.

# ---- actions -----------------------------------------------------------------------------


def _words(ready: Ready) -> str:
    node = ready.element
    return node.resource_id or node.text or node.content_desc or node.cls


def tap(ctx: ActionContext, params: UiTap) -> Outcome:
    """Tap the element once, then met only when the expectation is observed."""
    ready = prepare(ctx, params.package, params.selector)
    if isinstance(ready, Outcome):
        return ready
    node = ready.element
    if not node.enabled:
        return outcome(ctx, Status.NOT_MET, {"expected": "enabled", "observed": "disabled",
                       "met": False}, f"{_words(ready)} is disabled: nothing was tapped")  # fmt: skip
    asked = ask(ctx, params.package, ready, "tap", {})
    if asked is not None:
        return asked
    try:
        ui.tap(ctx, "ui.tap", f"{params.package} {_words(ready)}", node.center,
               {"selector": params.selector.model_dump(exclude_none=True), "at": node.center})  # fmt: skip
    except InputRefused as exc:
        return outcome(ctx, Status.UNSUPPORTED, {"expected": None, "observed": None,
                       "met": False}, str(exc))  # fmt: skip
    except (TransportLost, UiAutomatorError) as exc:
        return unknown(ctx, "ui.tap", params, str(exc))
    return verify(ctx, params.expect, f"tapped {_words(ready)}")


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = step_row(  # docs/actions.md
    effect="uiautomator2 `click(x, y)` at the element's centre (`input tap X Y` on the shell path)",
    verified="the expectation (an element appears/goes, a field's text, the app in front), "
    "polled on the hierarchy",
)

DECLARED = (
    Method(
        "ui.tap", UiTap, tap, fixed("ui.tapped"), reconcile=reconcile, previews=True,
        idempotent=False, screen=True,
        emulator_params={"package": EMULATOR_APP, "selector": EMULATOR_ROW,
                         "expect": {"appears": EMULATOR_ROW}},
        summary="Tap an element of the app in front (by id, text, description, class); "
        "completes only when its expectation is observed. Asks a person first by default.",
        reads=STEP_READS,
        changes="whatever the tapped element does in the app",
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
