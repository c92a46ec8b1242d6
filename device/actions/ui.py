"""What the screen shows and the one tap phoned makes: power, keyguard, foreground,
hierarchy, waits and taps.

Power, keyguard and foreground are ``dumpsys`` reads. Hierarchies, waits and taps go through
the phone's UI session (``device/ui_session.py``, ``docs/ui-path.md``): the warm uiautomator2
session (``dump_hierarchy``, ``waitForExists``, ``click``) when it runs, else the shell path:
``rm -f`` the dump file, ``uiautomator dump``, its output checked
(``ui_hierarchy.dump_failure``), ``cat``; ``input tap``. A dump that failed or cannot be
parsed raises ``UiDumpFailed`` with the raw output, observed in the evidence first: a stale
file is never read and a failed read is never a screen. Every observation names the path
(``"path": "uiautomator2"`` or ``"uiautomator dump"``) and every call is in the evidence.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from phoned.device import commands, parsers, private, ui_hierarchy, uiautomation_holders
from phoned.device.actions.base import ActionContext
from phoned.device.actions.reads import read
from phoned.device.errors import (
    DeviceError,
    DeviceOffline,
    InputRefused,
    UiAutomatorError,
    UiDumpFailed,
)
from phoned.device.translate import translate
from phoned.device.ui_hierarchy import HierarchyError, Node
from phoned.device.ui_session import Lease, UiPath
from phoned.foundation.private_files import private_writer, write_private
from phoned.foundation.threads import spawn

T = TypeVar("T")
# Evidence argv of the uiautomator2 calls (JSON-RPC over tcp:9008, not shell commands).
U2_DUMP: tuple[str, ...] = ("uiautomator2", "dump_hierarchy", "root_in_active")
U2_SESSION = "uiautomator2"


@dataclass(frozen=True)
class Screen:
    """One reading of the hierarchy: its XML, nodes and stable digest."""

    xml: str
    nodes: list[Node]
    digest: str
    path: UiPath = UiPath.SHELL  # which reader produced it
    read_by: tuple[str, ...] = ()  # the command (or session call) that read it

    @property
    def packages(self) -> list[str]:
        return ui_hierarchy.app_packages(self.nodes)

    def to_json(self) -> dict[str, Any]:
        return {
            "packages": self.packages,
            "digest": self.digest,
            "nodes": len(self.nodes),
            "path": self.path.value,
        }


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


INPUT_REFUSED_HINT = (
    "the phone refuses injected input; on Xiaomi turn on Developer options > "
    '"USB debugging (Security settings)"'
)


def wake(ctx: ActionContext) -> None:
    """``input keyevent KEYCODE_WAKEUP``: turns the screen on, a no-op when already on.
    Raises ``InputRefused`` when the phone refused the key (it then stays dark)."""
    result = ctx.effect("screen.wake", "screen", commands.WAKEUP, {"key": "KEYCODE_WAKEUP"})
    _check_input(ctx, result.stdout + result.stderr)


def _check_input(ctx: ActionContext, output: str) -> None:
    refusal = parsers.input_refused(output)
    if refusal is not None:
        ctx.recorder.note(f"input refused: {refusal}")
        raise InputRefused(f"{INPUT_REFUSED_HINT} ({refusal})", serial=ctx.device.serial)


def dump(ctx: ActionContext, phase: str, artifact: str | None = None) -> Screen:
    """Read the hierarchy (see the module docstring), parse it, observe packages, digest and
    path; raise ``UiDumpFailed`` (observed with the raw output) when no screen was read.

    Both paths dump the active window only (uiautomator2 ``rootInActive``, as ``uiautomator
    dump`` does): a dialog over the app is that window, and the window order of a full u2
    dump is not defined (UiDevice.getWindowRoots collects a set), so "the app in front"
    means the same on both. With ``artifact`` and ``ctx.artifacts_dir``, the XML is saved.
    """
    xml, reader, argv = _read(ctx, phase)
    screen = _parse(ctx, phase, xml, reader, argv)
    ctx.recorder.observe("hierarchy", screen.to_json(), phase, argv)
    if artifact and ctx.artifacts_dir is not None:
        path = write_private(Path(ctx.artifacts_dir) / f"{artifact}.xml", xml)  # 0600, no link
        ctx.recorder.artifacts[artifact] = str(path)
    return screen


SCREENSHOT_TIMEOUT_S = 30.0  # each of a screenshot's two steps: screencap, then its pull


def screenshot(ctx: ActionContext, name: str) -> str | None:
    """``screencap -p`` on the phone, pulled into ``ctx.artifacts_dir``; the local path."""
    if ctx.artifacts_dir is None:
        return None
    ctx.recorder.read(commands.SCREENCAP, timeout=SCREENSHOT_TIMEOUT_S)
    path = Path(ctx.artifacts_dir) / f"{name}.png"
    # Pulled into a file phoned created 0600 (O_NOFOLLOW, in the task folder's descriptor)
    # and renamed over ``path``: ``sync.pull`` would open the path itself, through any link.
    with private_writer(path) as out:
        pulled = ctx.device.server.pull(
            ctx.device.serial, commands.SCREENSHOT_PATH, SCREENSHOT_TIMEOUT_S
        )
        for chunk in pulled:
            out.write(chunk)
    ctx.recorder.artifacts[name] = str(path)
    return str(path)


class ScreenshotMeanwhile:
    """``screenshot(ctx, name)`` on a thread of its own while the caller dumps the same
    screen (``with ScreenshotMeanwhile(ctx, name) as shot: screen = dump(...)``): the two
    reads of the screen a step leaves overlap on the phone (SurfaceFlinger's ``screencap``
    and the accessibility dump) instead of adding up. Nothing when the task keeps no files.
    Leaving the block waits for it; ``result()`` then raises what it raised."""

    def __init__(self, ctx: ActionContext, name: str) -> None:
        self.ctx, self.name = ctx, name
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def __enter__(self) -> ScreenshotMeanwhile:
        if self.ctx.artifacts_dir is not None:
            self.thread = spawn("screenshot", self._take)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.thread is not None:
            self.thread.join()

    def _take(self) -> None:
        try:
            screenshot(self.ctx, self.name)
        except BaseException as exc:  # raised again by result(), on the caller's thread
            self.error = exc

    def result(self) -> None:
        """Raise what taking the screenshot raised, if anything."""
        if self.error is not None:
            raise self.error


def wait_for_package(ctx: ActionContext, package: str, timeout: float, phase: str) -> bool | None:
    """Wait until a window of ``package`` shows (uiautomator2 ``waitForExists``, bounded by
    ``timeout``); None on the shell path, where the next dump's own idle wait is the wait."""
    argv = (U2_SESSION, "wait", f"packageName={package}", f"timeout={timeout:g}s")
    with ctx.device.ui_session.use() as lease:
        _record_session(ctx, lease)
        if lease.client is None:
            return None
        client = lease.client
        try:
            found = ctx.recorder.call(
                argv,
                _translated(ctx, lambda: bool(client(packageName=package).wait(timeout=timeout))),
            )
        except DeviceOffline:
            raise
        except DeviceError as exc:  # the dump that follows decides; the session is rechecked
            ctx.device.ui_session.invalidate(str(exc))
            return None
    ctx.recorder.observe("screen_wait", {"package": package, "found": found}, phase, argv)
    return found


def _selector(node: Node) -> dict[str, Any] | None:
    """A uiautomator2 selector for ``node``: its resource id, else (a Jetpack Compose field
    has none, docs/android-variants.md V157) its class and package with the focus it has."""
    if node.resource_id:
        return {"resourceId": node.resource_id}
    if node.focused and node.cls and node.package:
        return {"className": node.cls, "packageName": node.package, "focused": True}
    return None


def exact_text(ctx: ActionContext, node: Node, phase: str) -> str:
    """The exact text of ``node``. A uiautomator2 dump writes every UTF-16 surrogate as ``.``
    (its ``stripInvalidXMLChars``; an emoji reads ``..``) while ``getText`` keeps it, so on
    that path a text with a ``.`` is read again by its resource id (a field without one: by
    its class, package and focus); otherwise the dump's."""
    selector = _selector(node)
    if "." not in node.text or selector is None:
        return node.text
    argv = (U2_SESSION, "get_text", *(f"{k}={v}" for k, v in selector.items()))
    with ctx.device.ui_session.use() as lease:
        _record_session(ctx, lease)
        if lease.client is None:
            return node.text
        client = lease.client
        try:
            text = ctx.recorder.call(
                argv, _translated(ctx, lambda: str(client(**selector).get_text()))
            )
        except DeviceOffline:
            raise
        except DeviceError as exc:  # keep the dump's text; the check then fails, never passes
            ctx.device.ui_session.invalidate(str(exc))
            return node.text
    ctx.recorder.observe("field_text", text, phase, argv)
    return text


def tap(
    ctx: ActionContext, action: str, target: str, point: tuple[int, int], inputs: Any
) -> UiPath:
    """One tap at ``point`` as a journaled effect: uiautomator2 ``click`` through the warm
    session, else ``input tap``. A failed uiautomator2 click leaves the journal ``unknown``
    and raises ``UiAutomatorError`` (the tap may have landed): never tapped twice here. A
    refused ``input tap`` raises ``InputRefused`` (it did nothing)."""
    x, y = point
    with ctx.device.ui_session.use() as lease:
        _record_session(ctx, lease)
        if lease.client is None:
            argv: Sequence[str] = commands.tap(x, y)
            result = ctx.effect(action, target, argv, inputs)
            _check_input(ctx, result.stdout + result.stderr)
        else:
            client = lease.client
            argv = (U2_SESSION, "click", str(x), str(y))
            try:
                ctx.effect_call(
                    action, target, argv, _translated(ctx, lambda: client.click(x, y)), inputs
                )
            except UiAutomatorError as exc:
                _check_input(ctx, str(exc))  # refused: it did nothing, say so
                raise
    ctx.recorder.observe("tap", {"path": lease.path.value, "x": x, "y": y}, "apply", argv)
    return lease.path


def _record_session(ctx: ActionContext, lease: Lease) -> None:
    """What the session did before this use (start, ping, restart) goes into the evidence."""
    for event in lease.events:
        ctx.recorder.event(
            (U2_SESSION, event.action),
            0 if event.ok else None,
            event.duration_ms,
            error=event.error,
        )
    if lease.client is None and lease.reason:
        ctx.recorder.note(f"UI path: uiautomator dump ({lease.reason})")


def _translated(ctx: ActionContext, fn: Callable[[], T]) -> Callable[[], T]:
    """``fn`` with uiautomator2/adbutils exceptions mapped to the device error tree."""

    def run() -> T:

        try:
            return fn()
        except DeviceError:
            raise
        except Exception as exc:
            raise translate(exc, ctx.device.serial) from exc

    return run


def _read(ctx: ActionContext, phase: str) -> tuple[str, UiPath, Sequence[str]]:
    """The hierarchy text, who read it and the evidence argv; a failed uiautomator2 call is
    retried once through a fresh lease (which checks, restarts or falls back)."""
    session = ctx.device.ui_session
    for attempt in (1, 2):
        with session.use() as lease:
            _record_session(ctx, lease)
            if lease.client is None:
                return _shell_dump(ctx, phase), UiPath.SHELL, commands.UI_DUMP
            try:
                xml: str = ctx.recorder.call(U2_DUMP, _translated(ctx, _active_dump(lease.client)))
            except DeviceOffline:
                raise  # the phone is gone: not a UI failure
            except DeviceError as exc:
                session.invalidate(str(exc))
                if attempt == 2:
                    _failed(
                        ctx, phase, U2_DUMP, UiPath.U2, "uiautomator2 call failed", stderr=str(exc)
                    )
                continue
            return xml, UiPath.U2, U2_DUMP
    raise AssertionError("unreachable")  # pragma: no cover - the second attempt returns or raises


def _active_dump(client: Any) -> Callable[[], str]:
    """The uiautomator2 dump of the active window (``rootInActive``, as ``uiautomator dump``)."""
    return lambda: str(client.dump_hierarchy(root_in_active=True))


def _shell_dump(ctx: ActionContext, phase: str) -> str:
    """UiAutomation freed, ``rm -f`` the file, ``uiautomator dump``, its output checked,
    then ``cat``."""
    _free_uiautomation(ctx, phase)
    removed = ctx.recorder.read(commands.UI_DUMP_REMOVE)
    if not removed.ok:
        _failed(ctx, phase, commands.UI_DUMP_REMOVE, UiPath.SHELL, "the previous dump could not be removed",
                removed.stdout, removed.stderr, removed.exit_code)  # fmt: skip
    result = ctx.recorder.read(commands.UI_DUMP, timeout=30.0)
    failure = ui_hierarchy.dump_failure(result.stdout, result.stderr, result.exit_code)
    if failure is not None:
        _failed(ctx, phase, commands.UI_DUMP, UiPath.SHELL, failure, result.stdout, result.stderr,
                result.exit_code)  # fmt: skip
    read_back = ctx.recorder.read(commands.UI_DUMP_READ)
    if not read_back.ok:
        _failed(ctx, phase, commands.UI_DUMP_READ, UiPath.SHELL, "the dump file could not be read",
                read_back.stdout, read_back.stderr, read_back.exit_code)  # fmt: skip
    return read_back.stdout


# How long a stopped server may take to leave the process table (uiautomator2's own
# ``stop_uiautomator`` waits up to 10 s for ``/ping`` to stop answering, polling every 0.5 s).
FREE_POLLS = 10
FREE_POLL_S = 0.3


def _free_uiautomation(ctx: ActionContext, phase: str) -> None:
    """Stop every uiautomator2 server still holding UiAutomation (``uiautomation_holders``),
    so that the dump can register; say so in the evidence as ``freed_uiautomation``. The
    session's lock is held, so phoned's own server is not running on this path."""
    listed = ctx.recorder.read(commands.PROCESSES_WITH_ARGS)
    if not listed.ok:
        ctx.recorder.note("UI path: the process list could not be read; dumping as is")
        return
    holders = uiautomation_holders.uiautomator2_servers(listed.stdout)
    if not holders:
        return
    stopped: list[str] = []
    for holder in holders:
        argv = commands.U2_APK_FORCE_STOP if holder.is_app else commands.kill_process(holder.pid)
        result = ctx.recorder.run(argv)
        if result.ok and _gone(ctx, holder.pid):
            stopped.append(f"stopped uiautomator2 server (pid {holder.pid})")
        else:
            stopped.append(f"could not stop uiautomator2 server (pid {holder.pid})")
    ctx.recorder.observe("freed_uiautomation", "; ".join(stopped), phase,
                         commands.PROCESSES_WITH_ARGS)  # fmt: skip


def _gone(ctx: ActionContext, pid: int) -> bool:
    """True once ``pid`` is no longer listed (polled a few times)."""
    for attempt in range(FREE_POLLS):
        listed = ctx.recorder.read(commands.process_alive(pid))
        if listed.exit_code is not None and not uiautomation_holders.parse_ps(listed.stdout):
            return True
        if attempt < FREE_POLLS - 1:
            time.sleep(FREE_POLL_S)
    return False


def _parse(ctx: ActionContext, phase: str, xml: str, path: UiPath, argv: Sequence[str]) -> Screen:
    try:
        nodes = ui_hierarchy.parse_nodes(xml)
    except HierarchyError as exc:
        _failed(ctx, phase, argv, path, f"not a hierarchy: {exc}", stdout=xml)
    if not nodes:  # the uiautomator2 client returns an empty placeholder when dumps stay empty
        _failed(ctx, phase, argv, path, "empty hierarchy", stdout=xml)
    return Screen(xml, nodes, ui_hierarchy.digest(nodes), path, tuple(argv))


def _failed(
    ctx: ActionContext,
    phase: str,
    argv: Sequence[str],
    path: UiPath,
    reason: str,
    stdout: str = "",
    stderr: str = "",
    exit_code: int | None = None,
) -> NoReturn:
    """Observe a failed hierarchy read with its raw output (the texts of any hierarchy in it
    redacted: ``private.scrub_markup``), then raise ``UiDumpFailed``."""
    stdout = private.scrub_markup(stdout)
    error = UiDumpFailed(
        f"the screen could not be read ({path.value}): {reason}",
        serial=ctx.device.serial,
        path=path.value,
        reason=reason,
        stdout=stdout,
        stderr=stderr,
        exit_code=exit_code,
    )
    ctx.recorder.observe("hierarchy", {"error": str(error), **error.to_json()}, phase, argv)
    raise error
