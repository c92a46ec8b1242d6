"""``screen.snapshot``: what the phone shows, without changing anything.

The full snapshot of ``phoned.device.actions.snapshot.take`` (the same reader a pausing task uses):
foreground package/activity/user (``dumpsys window displays``, ``windows`` before API 29),
screen on (``dumpsys power``), keyguard (``dumpsys window policy``), orientation (the
hierarchy's ``rotation``), a digest of the hierarchy (read through the UI session;
``window_path`` says which reader), and as artifacts the hierarchy XML and a PNG screenshot
when ``ctx.artifacts_dir`` is set. A hierarchy that cannot be read ends ``not_met`` with the
raw output, never a stale screen.
"""

from __future__ import annotations

from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import NoParams
from phoned.device.actions.reads import got
from phoned.device.actions.snapshot import take

# ---- params: ``NoParams``; commands and parsers: ``device.actions.snapshot`` reads the screen through
# the shared readers (``device.commands``, ``device.parsers``), as a pausing task does.

# ---- actions -----------------------------------------------------------------------------


def snapshot(ctx: ActionContext, params: NoParams) -> Outcome:
    """Read a full snapshot (``phoned.device.actions.snapshot.take``, the one reader pauses use too); met
    when every read succeeded, ``not_met`` when the hierarchy could not be read (the raw
    output is in the detail and the evidence)."""

    snap = take(ctx, "screen.snapshot", {}, "full")
    unreadable = snap.texts.get("unreadable")
    if unreadable is not None:
        expected = {"hierarchy": "readable"}
        return outcome(
            ctx,
            Status.NOT_MET,
            {"expected": expected, "observed": None, "met": False},
            f"the hierarchy could not be read ({unreadable.get('path')}: "
            f"{unreadable.get('reason')})",
            screen_unreadable=unreadable,
        )
    return got(ctx, {**snap.to_json(), "screenshot": snap.artifacts.get("snapshot_screenshot")})


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow.read_only(  # docs/actions.md
    reads=(
        "`dumpsys power`, `dumpsys window policy`, `dumpsys window windows`, `uiautomator dump`, "
        "`screencap -p` (pulled with adb sync)"
    )
)

DECLARED = (
    Method(
        "screen.snapshot", NoParams, snapshot, fixed("screen.snapshot"),
        summary="Take a snapshot of the screen: windows, foreground app, UI hierarchy, screenshot.",
        reads="window list, UI hierarchy and a screenshot",
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
