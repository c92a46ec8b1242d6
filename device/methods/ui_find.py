"""``ui.find``: the elements of the screen a selector matches, read through the warm
uiautomator2 session (``ui.dump``: the active window's hierarchy, ``docs/ui-path.md``).

Read-only: nothing is tapped. Each element is answered with its text, content description,
resource id, class, package, bounds and the flags the dump carries (clickable, enabled,
checkable, checked, scrollable); ``index`` in the answer is what a changing step's selector
takes when several match. The facts of the dump format are in ``device/ui_hierarchy.py``.
"""

from __future__ import annotations

from typing import Any

from phoned.device.actions import ui
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import PACKAGE, Params
from phoned.device.actions.ui_step import (
    MAX_ELEMENTS,
    Selector,
    element,
    keep_screen,
    matching,
    visible,
)
from pydantic import Field

# ---- params ------------------------------------------------------------------------------


class UiFind(Params):
    """A selector; optionally the app that must be in front for the answer to count."""

    selector: Selector = Field(
        description="which elements", examples=[{"resource_id": "com.example.notes:id/save_button"}]
    )
    package: str | None = Field(
        default=None, pattern=rf"^{PACKAGE.pattern}$", max_length=255,
        description="the app that must be in front (else not met, with what is)",
    )  # fmt: skip


# ---- commands ----------------------------------------------------------------------------
# None of its own: ui.dump (uiautomator2 dump_hierarchy of the active window).

# ---- parsers -----------------------------------------------------------------------------
# None of its own: ui_hierarchy.parse_nodes.

# ---- actions -----------------------------------------------------------------------------


def find(ctx: ActionContext, params: UiFind) -> Outcome:
    """The matching elements (value: {"package", "count", "elements"}); met when at least one
    matches (and ``package`` is in front when given), else not met with the screen."""
    with ui.ScreenshotMeanwhile(ctx, "ui_found_screenshot") as shot:
        screen = ui.dump(ctx, "read")
    keep_screen(ctx, screen, "found", shot)
    found = matching(screen, params.selector)
    front = screen.packages[0] if screen.packages else None
    elements = [{"index": i, **element(n)} for i, n in enumerate(found[:MAX_ELEMENTS])]
    value: dict[str, Any] = {"package": front, "count": len(found), "elements": elements}
    ctx.recorder.observe("ui_matches", elements, "read", screen.read_by)
    wanted = params.selector.model_dump(exclude_none=True)
    target = {"expected": wanted, "observed": len(found), "met": bool(found)}
    if params.package is not None and front != params.package:
        target["met"] = False
        return outcome(ctx, Status.NOT_MET, target,
                       f"{front} is in front, not {params.package}", value=value,
                       screen=visible(screen))  # fmt: skip
    if not found:
        return outcome(ctx, Status.NOT_MET, target, f"no element matches {wanted}",
                       value=value, screen=visible(screen))  # fmt: skip
    return outcome(ctx, Status.MET, target, f"{len(found)} element(s) match", value=value)


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow.read_only(  # docs/actions.md
    reads="the active window's hierarchy through the warm uiautomator2 session "
    "(`dumpWindowHierarchy`), matched by resource id, text, content-desc, class"
)

DECLARED = (
    Method(
        "ui.find", UiFind, find, fixed("ui.found"),
        summary="Find the elements on the screen a selector matches (text, description, id, "
        "class, bounds, flags), through the warm uiautomator2 session.",
        reads="the active window's hierarchy (uiautomator2 dumpWindowHierarchy)",
        screen=True, actions_row=_ACTIONS_ROW,
        # any screen has a FrameLayout root; the example's notes app is not on an emulator
        emulator_params={"selector": {"class_name": "android.widget.FrameLayout"}},
    ),
)  # fmt: skip
