"""``ui.swipe`` / ``ui.scroll``: a swipe in a direction, and swipes until an element shows.

A swipe goes through the session's JSON-RPC ``swipe(fx, fy, tx, ty, steps)`` (uiautomator2
``UiDevice.swipe``: each step is about 5 ms), never a shell. ``direction`` is the way the
finger moves: ``up`` brings what is below into view. It crosses the element given (a list),
else the middle of the screen, over 60% of its extent. ``ui.scroll`` swipes until its
``until`` selector matches (its expectation), at most ``max_swipes`` times, and stops
early when a swipe changed nothing on the screen (the end of the list): not met, with the
screen. One approval covers the whole scroll.
"""

from __future__ import annotations

from typing import Any

from phoned.device.actions import ui
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import Method, fixed
from phoned.device.actions.params import Params
from phoned.device.actions.ui_step import (
    _PACKAGE_FIELD,
    EMULATOR_APP,
    EXPECT,
    STEP_READS,
    U2,
    Direction,
    Expect,
    Ready,
    Selector,
    StepParams,
    ask,
    keep_screen,
    matching,
    prepare,
    reconcile,
    resolve,
    step_row,
    swipe_points,
    u2_effect,
    verify,
    visible,
)
from pydantic import Field, StrictInt

# ---- params ------------------------------------------------------------------------------

STEPS = 20  # uiautomator2 swipe steps (~5 ms each)
MAX_SWIPES = 30


class UiSwipe(StepParams):
    """One swipe: its direction, optionally across an element, and what must show after."""

    direction: Direction = Field(description="the way the finger moves", examples=["up"])
    selector: Selector | None = Field(
        default=None, description="the element to swipe across (default: the screen's middle)"
    )
    expect: Expect = Field(description=EXPECT, examples=[{"package": "com.example.notes"}])


class UiScroll(Params):
    """Swipe until ``until`` shows (the expectation), at most ``max_swipes`` times."""

    package: str = _PACKAGE_FIELD
    until: Selector = Field(
        description="the element to bring into view (the expectation)",
        examples=[{"text": "Note 25"}],
    )
    direction: Direction = Field(
        default="up", description="the way the finger moves (up: what is below comes into view)"
    )
    within: Selector | None = Field(default=None, description="the scrollable element")
    max_swipes: StrictInt = Field(default=10, ge=1, le=MAX_SWIPES, description="at most")


# ---- commands ----------------------------------------------------------------------------
# None: uiautomator2 JSON-RPC swipe (never `input swipe`).

# ---- parsers -----------------------------------------------------------------------------
# None of its own: the screen is read by ui.dump.

# ---- actions -----------------------------------------------------------------------------


def _swipe(ctx: ActionContext, params: Any, ready: Ready, direction: Direction) -> Outcome | None:
    fx, fy, tx, ty = swipe_points(ready.screen, direction, ready.node)
    argv = (U2, "swipe", str(fx), str(fy), str(tx), str(ty), f"steps={STEPS}")
    return u2_effect(
        ctx, params, f"{params.package} swipe {direction}", argv,
        lambda client: client.swipe(fx, fy, tx, ty, steps=STEPS),
        {"direction": direction, "from": [fx, fy], "to": [tx, ty]},
    )  # fmt: skip


def swipe(ctx: ActionContext, params: UiSwipe) -> Outcome:
    """One swipe, then met only when the expectation is observed."""
    ready = prepare(ctx, params.package, params.selector)
    if isinstance(ready, Outcome):
        return ready
    asked = ask(ctx, params.package, ready, "swipe", {"direction": params.direction})
    if asked is not None:
        return asked
    failed = _swipe(ctx, params, ready, params.direction)
    if failed is not None:
        return failed
    return verify(ctx, params.expect, f"swiped {params.direction}")


def scroll(ctx: ActionContext, params: UiScroll) -> Outcome:
    """Swipe until ``until`` shows; met with the element, not met at the end or the bound."""
    ready = prepare(ctx, params.package, params.within)
    if isinstance(ready, Outcome):
        return ready
    wanted = params.until.model_dump(exclude_none=True)
    if matching(ready.screen, params.until):
        ctx.recorder.note("already in view: nothing swiped")
        return _found(ctx, wanted, 0, ready)
    asked = ask(ctx, params.package, ready, "scroll",
                {"direction": params.direction, "until": wanted})  # fmt: skip
    if asked is not None:
        return asked
    for swipes in range(1, params.max_swipes + 1):
        failed = _swipe(ctx, params, ready, params.direction)
        if failed is not None:
            return failed
        screen = ui.dump(ctx, "after")
        if matching(screen, params.until):
            return _found(ctx, wanted, swipes, Ready(screen, ready.node))
        if screen.digest == ready.screen.digest:
            return _not_found(ctx, wanted, swipes, screen, "a swipe changed nothing (the end)")
        again = resolve(ctx, screen, params.within) if params.within else Ready(screen, None)
        if isinstance(again, Outcome):
            return again
        ready = again
    return _not_found(ctx, wanted, params.max_swipes, ready.screen, "max_swipes reached")


def _found(ctx: ActionContext, wanted: dict[str, Any], swipes: int, ready: Ready) -> Outcome:
    keep_screen(ctx, ready.screen, "after")
    target = {"expected": {"appears": wanted}, "observed": {"swipes": swipes}, "met": True}
    return outcome(ctx, Status.MET, target, f"in view after {swipes} swipe(s)",
                   value={"swipes": swipes})  # fmt: skip


def _not_found(
    ctx: ActionContext, wanted: dict[str, Any], swipes: int, screen: ui.Screen, why: str
) -> Outcome:
    keep_screen(ctx, screen, "after")
    target = {"expected": {"appears": wanted}, "observed": {"swipes": swipes}, "met": False}
    return outcome(ctx, Status.NOT_MET, target, f"not in view after {swipes} swipe(s): {why}",
                   value={"swipes": swipes}, screen=visible(screen))  # fmt: skip


def reconcile_scroll(ctx: ActionContext, params: UiScroll, hint: dict[str, Any]) -> str:
    """An interrupted scroll: its element in view now says it landed, else cannot tell."""
    return "happened" if matching(ui.dump(ctx, "read"), params.until) else "cannot_tell"


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = step_row(  # docs/actions.md
    effect="uiautomator2 JSON-RPC `swipe(fx, fy, tx, ty, steps)` (never `input swipe`)",
    verified="ui.swipe: its expectation; ui.scroll: the `until` element in the hierarchy",
)

DECLARED = (
    Method(
        "ui.swipe", UiSwipe, swipe, fixed("ui.swiped"), reconcile=reconcile, previews=True,
        idempotent=False, screen=True,
        emulator_params={"package": EMULATOR_APP, "direction": "up",
                         "expect": {"package": EMULATOR_APP}},
        summary="Swipe in a direction in the app in front; completes only when its expectation "
        "is observed. Asks a person first by default.",
        reads=STEP_READS,
        changes="the app's scroll position or whatever the swipe does",
        actions_row=_ACTIONS_ROW,
    ),
    Method(
        "ui.scroll", UiScroll, scroll, fixed("ui.scrolled"), reconcile=reconcile_scroll,
        previews=True, screen=True,
        emulator_params={"package": EMULATOR_APP, "until": {"text": "phoned CI: not on this screen"}},
        summary="Swipe until an element shows (at most max_swipes); completes only when it is "
        "in view. Asks a person first by default.",
        reads=STEP_READS,
        changes="the app's scroll position",
    ),
)  # fmt: skip
