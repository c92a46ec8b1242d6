"""``screen.snapshot``: what the phone shows, without changing anything.

Foreground package/activity (``dumpsys window windows``), screen on (``dumpsys power``),
keyguard (``dumpsys window policy``), orientation (the hierarchy's ``rotation``), a digest
of the hierarchy (read through the UI session; ``window_path`` says which reader), and as
artifacts the hierarchy XML and a PNG screenshot when ``ctx.artifacts_dir`` is set. A
hierarchy that cannot be read ends ``not_met`` with the raw output, never a stale screen.
"""

from __future__ import annotations

from typing import Any

from device import ui_hierarchy
from device.actions import ui
from device.actions.base import ActionContext, Outcome, Status, outcome
from device.actions.method import Method, fixed
from device.actions.params import NoParams
from device.actions.reads import got
from device.errors import UiDumpFailed


def take(ctx: ActionContext, phase: str = "read", name: str = "snapshot") -> dict[str, Any]:
    """A snapshot as a plain dict (also used by other actions before they pause)."""
    on = ui.screen_on(ctx, phase)
    locked = ui.keyguard_showing(ctx, phase)
    front = ui.foreground(ctx, phase)
    screen = ui.dump(ctx, phase, artifact=f"{name}_hierarchy")
    shot = ui.screenshot(ctx, f"{name}_screenshot")
    return {
        "foreground": front.to_json() if front is not None else None,
        "screen_on": on,
        "locked": locked,
        "orientation": ui_hierarchy.rotation(screen.xml),
        "hierarchy_digest": screen.digest,
        "window_packages": screen.packages,
        "window_path": screen.path.value,
        "screenshot": shot,
    }


def snapshot(ctx: ActionContext, params: NoParams) -> Outcome:
    """Read the snapshot; met when every read succeeded, ``not_met`` when the hierarchy
    could not be read (the raw output is in the detail and the evidence)."""
    try:
        return got(ctx, take(ctx))
    except UiDumpFailed as exc:
        expected = {"hierarchy": "readable"}
        return outcome(
            ctx,
            Status.NOT_MET,
            {"expected": expected, "observed": None, "met": False},
            str(exc),
            screen_unreadable=exc.to_json(),
        )


DECLARED = (Method("screen.snapshot", NoParams, snapshot, fixed("screen.snapshot")),)
