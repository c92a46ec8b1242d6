"""What the screen shows, read through the shell: power, keyguard, foreground, hierarchy.

The hierarchy comes from ``uiautomator dump`` to a file and ``cat`` (two shell round trips,
every command in the evidence). On a real phone the dump costs about 1-3 s (it waits for the
UI to idle); the uiautomator2 session (``Device.ui()``) dumps faster once running but costs
seconds to start (push and launch its server), so one-off reads do not use it. The
``uiautomator dump`` file names only the active window, which is what the checks need: the
app in front, the recipient, the compose field, a permission dialog over the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from device import commands, parsers, ui_hierarchy
from device.actions.base import ActionContext
from device.actions.reads import read
from device.ui_hierarchy import Node


@dataclass(frozen=True)
class Screen:
    """One reading of the hierarchy: its XML, nodes and stable digest."""

    xml: str
    nodes: list[Node]
    digest: str

    @property
    def packages(self) -> list[str]:
        return ui_hierarchy.app_packages(self.nodes)

    def to_json(self) -> dict[str, Any]:
        return {"packages": self.packages, "digest": self.digest, "nodes": len(self.nodes)}


def screen_on(ctx: ActionContext, phase: str) -> bool | None:
    return read(ctx, "screen_on", commands.DUMPSYS_POWER, parsers.parse_screen_on, phase)


def keyguard_showing(ctx: ActionContext, phase: str) -> bool | None:
    return read(
        ctx,
        "keyguard_showing",
        commands.DUMPSYS_WINDOW_POLICY,
        parsers.parse_keyguard_showing,
        phase,
    )


def foreground(ctx: ActionContext, phase: str) -> parsers.Foreground | None:
    """The app in front (None: the dump showed no focus line, so it cannot be told)."""
    argv = commands.dumpsys_window_focus(ctx.device.sdk)
    result = ctx.recorder.read(argv)
    found = parsers.parse_foreground(result.stdout)
    observed = found.to_json() if found is not None else None
    ctx.recorder.observe("foreground", observed, phase, argv)
    if found is None:
        ctx.recorder.note(f"no focus line in {' '.join(argv)}: {result.stdout[:300]!r}")
    return found


def wake(ctx: ActionContext) -> None:
    """``input keyevent KEYCODE_WAKEUP``: turns the screen on, a no-op when already on."""
    ctx.effect("screen.wake", "screen", commands.WAKEUP, {"key": "KEYCODE_WAKEUP"})


def dump(ctx: ActionContext, phase: str, artifact: str | None = None) -> Screen:
    """Dump the active window, parse it, observe its packages and digest.

    With ``artifact`` and ``ctx.artifacts_dir``, the XML is also saved as that artifact.
    """
    ctx.recorder.read(commands.UI_DUMP, timeout=30.0)
    xml = ctx.recorder.read(commands.UI_DUMP_READ).stdout
    nodes = ui_hierarchy.parse_nodes(xml)
    screen = Screen(xml, nodes, ui_hierarchy.digest(nodes))
    ctx.recorder.observe("hierarchy", screen.to_json(), phase, commands.UI_DUMP)
    if artifact and ctx.artifacts_dir is not None:
        path = Path(ctx.artifacts_dir) / f"{artifact}.xml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(xml, encoding="utf-8")
        ctx.recorder.artifacts[artifact] = str(path)
    return screen


def screenshot(ctx: ActionContext, name: str) -> str | None:
    """``screencap -p`` on the phone, pulled into ``ctx.artifacts_dir``; the local path."""
    if ctx.artifacts_dir is None:
        return None
    ctx.recorder.read(commands.SCREENCAP, timeout=30.0)
    path = Path(ctx.artifacts_dir) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    ctx.device.adb.sync.pull(commands.SCREENSHOT_PATH, str(path))
    ctx.recorder.artifacts[name] = str(path)
    return str(path)
