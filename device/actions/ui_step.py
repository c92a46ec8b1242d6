"""What every step of the UI tier shares (``docs/ui-tier.md``): selectors, expectations, the
screens it refuses, the approval preview, and the verification after a step.

Not a method module (no ``DECLARED``): ``ui_find``, ``ui_tap``, ``ui_type``, ``ui_swipe``
and ``ui_key`` build on it. The screen is read through the warm uiautomator2 session
(``ui.dump``: the active window's hierarchy); a selector is matched here, over that dump's
nodes, so what ``ui.find`` lists, what a step acts on and what an expectation checks are
one reading of one screen.

Refused screens (nothing is tapped, typed or swiped; the task fails naming the reason):

* the lock screen: ``dumpsys window policy`` says the keyguard shows (``ui.keyguard_showing``);
* a runtime-permission dialog (``ui_hierarchy.find_permission_dialog``) and anything of the
  permission controller or package installer packages in front
  (``ui_hierarchy.PERMISSION_DIALOG_PACKAGES``);
* the Play Store purchase flow: ``com.android.vending`` in front with an activity of its
  ``com.google.android.finsky.billing.`` package (Play Store 44.1's billing activities,
  ``LightPurchaseFlowActivity``, ``SheetUiBuilderHostActivity``, ``PurchaseAuthActivity``...,
  listed in LibChecker/LibChecker-Rules#912; ``billing.lightpurchase.IabV3Activity`` in the
  ``am_create_activity`` log of onepf/OpenIAB#329; microg/GmsCore#2219: in-app purchases
  open ``LightPurchaseFlowActivity`` through ``com.android.vending.billing.PURCHASE``), or an
  app's own Play Billing proxy (``com.android.billingclient.api.ProxyBillingActivity``, the
  window in front while the purchase sheet shows: j3k0/cordova-plugin-purchase#969's
  WindowManager log; ``ProxyBillingActivityV2`` in RevenueCat/purchases-android#1680).

Staleness: a changing step names the app it acts in (``package``); when another app is in
front it does nothing and fails with what is in front (``detail.stale``: the task ends
``stale_state``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from phoned.device import parsers, ui_hierarchy
from phoned.device.actions import ui
from phoned.device.actions.base import ActionContext, Outcome, Status, approval_holds, outcome
from phoned.device.actions.method import ActionsRow
from phoned.device.actions.params import PACKAGE, Params
from phoned.device.errors import DeviceError, DeviceOffline, TransportLost, UiAutomatorError
from phoned.device.parsers import Foreground
from phoned.device.ui_hierarchy import Node
from phoned.foundation.digest import digest
from phoned.foundation.private_files import write_private
from pydantic import Field, StrictInt, field_validator, model_validator

# ---- params ------------------------------------------------------------------------------

MAX_ID, MAX_TEXT, MAX_INDEX = 255, 500, 99
MAX_ELEMENTS = 60  # elements listed in evidence and answers (a screen rarely has more)

_PACKAGE_FIELD = Field(
    pattern=rf"^{PACKAGE.pattern}$",
    max_length=255,
    description="the app the step acts in; it must be in front, else nothing is done",
    examples=["com.example.notes"],
)


# The emulator cases of scripts/ci-emulator.sh (``Method.emulator_params``): an emulator has
# no third-party app, so the changing steps act in Settings, which the script brings to the
# front first; its rows are Preferences, whose title is the framework's ``android:id/title``
# (``frameworks/base/core/res/res/layout/preference.xml``). Each asks for approval before it
# acts and nothing approves it there: the case checks the path up to the preview (exit 4).
EMULATOR_APP = "com.android.settings"
EMULATOR_ROW = {"resource_id": "android:id/title", "index": 0}

# What ``prepare`` reads before every step on the app in front (a method's ``reads``).
STEP_READS = "the app in front, the keyguard, the hierarchy (uiautomator2)"


def step_row(effect: str, verified: str) -> ActionsRow:
    """The ``docs/actions.md`` row of a step on the app in front: it reads what ``prepare``
    reads, then its own effect and how that is verified."""
    return ActionsRow(
        reads="`dumpsys window` (the app in front, keyguard), the hierarchy through uiautomator2",
        effect=effect,
        verified=verified,
    )


def _no_nul(value: str | None) -> str | None:
    if value is not None and "\x00" in value:
        raise ValueError("must not contain NUL")
    return value


class Selector(Params):
    """Which element: any of resource id, text, content description and class (all that are
    given must hold, exactly), and ``index`` (0-based, screen order) when several match."""

    resource_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_ID,
        description="the element's resource id", examples=["com.example.notes:id/save_button"],
    )  # fmt: skip
    text: str | None = Field(
        default=None, min_length=1, max_length=MAX_TEXT, description="the element's exact text"
    )
    content_desc: str | None = Field(
        default=None, min_length=1, max_length=MAX_TEXT,
        description="the element's exact content description",
    )  # fmt: skip
    class_name: str | None = Field(
        default=None, min_length=1, max_length=MAX_ID,
        description="the element's class", examples=["android.widget.Button"],
    )  # fmt: skip
    index: StrictInt | None = Field(
        default=None, ge=0, le=MAX_INDEX,
        description="which of several matching elements (0-based, in screen order)",
    )  # fmt: skip

    @field_validator("resource_id", "text", "content_desc", "class_name")
    @classmethod
    def _text_ok(cls, value: str | None) -> str | None:
        return _no_nul(value)

    @model_validator(mode="after")
    def _one_field(self) -> Selector:
        if not any((self.resource_id, self.text, self.content_desc, self.class_name)):
            raise ValueError("a selector needs one of resource_id, text, content_desc, class_name")
        return self

    def matches(self, node: Node) -> bool:
        return (
            (self.resource_id is None or node.resource_id == self.resource_id)
            and (self.text is None or node.text == self.text)
            and (self.content_desc is None or node.content_desc == self.content_desc)
            and (self.class_name is None or node.cls == self.class_name)
        )

    def u2(self, package: str, instance: int) -> dict[str, Any]:
        """The uiautomator2 selector of the ``instance``-th match in ``package``."""
        found: dict[str, Any] = {"packageName": package, "instance": instance}
        pairs = (
            ("resourceId", self.resource_id), ("text", self.text),
            ("description", self.content_desc), ("className", self.class_name),
        )  # fmt: skip
        found.update({k: v for k, v in pairs if v is not None})
        return found


class Expect(Params):
    """What must be observed after the step (every given part must hold)."""

    appears: Selector | None = Field(default=None, description="an element that must show")
    disappears: Selector | None = Field(default=None, description="an element that must go")
    field: Selector | None = Field(default=None, description="a field whose text must be `text`")
    text: str | None = Field(default=None, max_length=5000, description="the exact text of `field`")
    package: str | None = Field(
        default=None, pattern=rf"^{PACKAGE.pattern}$", max_length=255,
        description="the app that must be in front",
    )  # fmt: skip

    @field_validator("text")
    @classmethod
    def _text_ok(cls, value: str | None) -> str | None:
        return _no_nul(value)

    @model_validator(mode="after")
    def _something(self) -> Expect:
        if (self.field is None) != (self.text is None):
            raise ValueError("field and text go together: the field whose text must be text")
        if not any((self.appears, self.disappears, self.field, self.package)):
            raise ValueError("an expectation needs one of appears, disappears, field+text, package")
        return self


EXPECT = "what must be observed after the step; the step completes only then"


class StepParams(Params):
    """What every changing step takes: the app it acts in and its expectation."""

    package: str = _PACKAGE_FIELD
    expect: Expect = Field(description=EXPECT)


# ---- commands ----------------------------------------------------------------------------
# None of its own: the screen is read with ui.dump (uiautomator2 dump_hierarchy), the keyguard
# and the app in front with the shared dumpsys reads (ui.keyguard_showing, ui.foreground).

U2 = ui.U2_SESSION
PROTECTED_PACKAGES = ui_hierarchy.PERMISSION_DIALOG_PACKAGES
PLAY_STORE = "com.android.vending"
PLAY_BILLING_PREFIX = "com.google.android.finsky.billing."
APP_BILLING_PREFIX = "com.android.billingclient.api.ProxyBillingActivity"

# ---- parsers -----------------------------------------------------------------------------
# None: the hierarchy is parsed by ui_hierarchy.parse_nodes, dumpsys by the shared parsers.

# ---- actions -----------------------------------------------------------------------------


def element(node: Node) -> dict[str, Any]:
    """An element as ``ui.find`` answers it, a choice lists it and evidence shows it: its
    ``text`` is redacted wherever it is stored (``phoned.device.private`` takes every ``text`` for a
    message body), so the words a person or planner needs to tell one element from another
    are also its ``label``, which the task's owner reads in clear and a viewer redacted
    (``daemon/server/deps.py``). The task's own secrets (a typed text) are replaced in it
    like anywhere else."""
    return {
        **node.to_json(),
        "label": node.text or None,
        "clickable": node.clickable,
        "enabled": node.enabled,
        "checkable": node.checkable,
        "checked": node.checked,
        "scrollable": node.scrollable,
    }


def visible(screen: ui.Screen) -> list[dict[str, Any]]:
    """The elements a person would look for: those with text, description or an id."""
    shown = [n for n in screen.nodes if n.text or n.content_desc or n.resource_id]
    return [element(n) for n in shown[:MAX_ELEMENTS]]


def matching(screen: ui.Screen, selector: Selector) -> list[Node]:
    """The nodes of the screen's app windows the selector matches, in screen order."""
    return [n for n in screen.nodes if n.package not in ui_hierarchy.VOLATILE_PACKAGES
            and selector.matches(n)]  # fmt: skip


def refusal(front: Foreground | None, screen: ui.Screen | None, locked: bool | None) -> str | None:
    """Why the UI tier must not act on this screen (module docstring), or None."""
    if locked:
        return "the lock screen is showing: the UI tier never acts on it"
    if screen is not None:
        dialog = ui_hierarchy.find_permission_dialog(screen.xml)
        if dialog is not None:
            return (
                f"a runtime-permission dialog ({dialog['package']}) is showing: the UI tier never "
                "answers one; a person must"
            )
    package = front.package if front is not None else None
    activity = (front.activity or "") if front is not None else ""
    if package in PROTECTED_PACKAGES:
        return f"{package} (permission controller / package installer) is in front: never acted on"
    full = package + activity if package and activity.startswith(".") else activity
    if package == PLAY_STORE and full.startswith(PLAY_BILLING_PREFIX):
        return "the Play Store purchase flow is in front: the UI tier never acts in it"
    if full.startswith(APP_BILLING_PREFIX):
        return "a Play Billing purchase is in progress: the UI tier never acts in it"
    return None


@dataclass(frozen=True)
class Ready:
    """The screen a step acts on, read just before it, and the element it acts on."""

    screen: ui.Screen
    node: Node | None
    index: int = 0  # the node's index among the selector's matches

    @property
    def element(self) -> Node:
        """The element a selector named: ``prepare`` given a selector returns a ``Ready``
        only when it found one."""
        assert self.node is not None
        return self.node


def prepare(ctx: ActionContext, package: str, selector: Selector | None) -> Ready | Outcome:
    """Read the screen and check it before a changing step: refused screens, the app in
    front, and the element (nothing matches: not met with the screen; several without an
    index: waiting for a choice among the candidates)."""
    locked = ui.keyguard_showing(ctx, "before")
    front = ui.foreground(ctx, "before")
    screen = None if locked else ui.dump(ctx, "before", artifact="ui_before_hierarchy")
    why = refusal(front, screen, locked)
    stale = why is None and (front is None or front.package != package)
    if stale:  # the task's failure is stale_state (daemon/runtime/attempt/report.py)
        shown_front = front.package if front is not None else "no app"
        why = f"stale: {shown_front} is in front, not {package}; nothing was done"
    if why is not None or screen is None:
        shown = {"front": front.to_json() if front else None, "locked": locked}
        return outcome(ctx, Status.UNSUPPORTED, {"expected": package, "observed": shown,
                       "met": False}, why or "refused", refused=why, stale=stale)  # fmt: skip
    if selector is None:
        return Ready(screen, None)
    return resolve(ctx, screen, selector)


def resolve(ctx: ActionContext, screen: ui.Screen, selector: Selector) -> Ready | Outcome:
    """The one element ``selector`` names on ``screen``, or the outcome saying why not."""
    found = matching(screen, selector)
    ctx.recorder.observe("ui_matches", [element(n) for n in found[:MAX_ELEMENTS]], "before",
                         screen.read_by)  # fmt: skip
    wanted = selector.model_dump(exclude_none=True)
    target = {"expected": wanted, "observed": len(found), "met": False}
    if not found or (selector.index is not None and selector.index >= len(found)):
        if ctx.artifacts_dir is not None:  # what the screen showed (its XML: ui_before_...)
            ui.screenshot(ctx, "ui_before_screenshot")
        why = (f"no element matches {wanted}" if not found
               else f"index {selector.index} but only {len(found)} match {wanted}")  # fmt: skip
        return outcome(ctx, Status.NOT_MET, target, f"{why}: nothing was done",
                       screen=visible(screen), screen_digest=screen.digest)  # fmt: skip
    if selector.index is not None:
        return Ready(screen, found[selector.index], selector.index)
    if len(found) > 1:
        candidates = [{"index": i, **element(n)} for i, n in enumerate(found[:MAX_ELEMENTS])]
        return outcome(ctx, Status.WAITING, target,
                       f"{len(found)} elements match {wanted}: amend the selector with an index",
                       choice="selector", candidates=candidates)  # fmt: skip
    return Ready(screen, found[0], 0)


def ask(
    ctx: ActionContext, package: str, ready: Ready, action: str, data: dict[str, Any]
) -> Outcome | None:
    """``needs_approval`` with the step's preview (the app, the element's text and id, the
    action and its data; a cropped screenshot of the element as an artifact), unless no
    approval is asked for or the one given is of this very preview (then None: go on)."""
    if not ctx.approval_required:
        return None
    node = ready.node
    # the element's text as ``label``: evidence redacts every ``text`` key (``private``), and
    # the approver must read what the step acts on (the card rebuilds the preview in clear)
    what = {"label": node.text, "resource_id": node.resource_id, "content_desc": node.content_desc,
            "bounds": list(node.bounds)} if node is not None else None  # fmt: skip
    shown = {
        "effect": ctx.recorder.method,
        "target": package,
        "data": {"app": package, "action": action, "element": what, **data},
        "snapshot_digest": ready.screen.digest,
    }
    shown_digest = digest(shown)
    if approval_holds(ctx, shown_digest):
        return None
    element_shot(ctx, node)
    void = ctx.approval_digest is not None
    message = ("the approval does not match the current preview: approve again" if void
               else f"{ctx.recorder.method} in {package} needs approval")  # fmt: skip
    return outcome(
        ctx, Status.NEEDS_APPROVAL, {"expected": action, "observed": what}, message,
        preview=shown, preview_digest=shown_digest, approval_void=void,
    )  # fmt: skip


def element_shot(ctx: ActionContext, node: Node | None) -> str | None:
    """A screenshot, cropped to ``node`` (with a margin) when there is one, as the artifact
    ``ui_element_screenshot`` (the approval card shows it); None without a task folder."""
    if ctx.artifacts_dir is None:
        return None
    full = ui.screenshot(ctx, "ui_screenshot")
    if full is None or node is None:
        return full
    from PIL import Image  # lazy: PIL is loaded only by the verbs that use it (start-up)

    with Image.open(full) as image:
        left, top, right, bottom = node.bounds
        margin = 24
        box = (max(0, left - margin), max(0, top - margin),
               min(image.width, right + margin), min(image.height, bottom + margin))  # fmt: skip
        if box[2] <= box[0] or box[3] <= box[1]:
            return full
        out = io.BytesIO()
        image.crop(box).save(out, format="PNG")
    path = write_private(Path(ctx.artifacts_dir) / "ui_element_screenshot.png", out.getvalue())
    ctx.recorder.artifacts["ui_element_screenshot"] = str(path)
    return str(path)


def read_text(ctx: ActionContext, package: str, selector: Selector, index: int, node: Node,
              phase: str) -> str:  # fmt: skip
    """The exact text of a field: the dump's, unless it has a ``.`` (a uiautomator2 dump
    writes every UTF-16 surrogate as ``.``): then ``getText`` on the same element."""
    if "." not in node.text:
        return node.text
    text = field_text(ctx, package, selector, index, phase)
    return node.text if text is None else text


def get_text_argv(package: str, selector: Selector, index: int) -> tuple[str, ...]:
    """How evidence names the ``getText`` of a field."""
    kwargs = selector.u2(package, index)
    return (U2, "get_text", *(f"{k}={v}" for k, v in kwargs.items() if k != "text"))


def field_text(
    ctx: ActionContext, package: str, selector: Selector, index: int, phase: str
) -> str | None:
    """The exact text of the ``index``-th field ``selector`` names, by one JSON-RPC
    ``getText`` (the server finds the element itself: uiautomator2's ``UiObject.get_text``
    would first ask ``waitForExists``, a round trip for an element just seen); None when
    the session is not running or the call failed (then it is started afresh next time)."""
    kwargs = selector.u2(package, index)
    argv = get_text_argv(package, selector, index)
    with ctx.device.ui_session.use() as lease:
        client = lease.client
        if client is None:
            return None
        found = client(**kwargs).selector
        try:
            text = str(
                ctx.recorder.call(argv, translated(ctx, lambda: client.jsonrpc.getText(found)))
            )
        except DeviceOffline:
            raise
        except DeviceError as exc:
            ctx.device.ui_session.invalidate(str(exc))
            return None
    ctx.recorder.observe("field_text", text, phase, argv)
    return text


def translated(ctx: ActionContext, fn: Callable[[], Any]) -> Callable[[], Any]:
    return ui._translated(ctx, fn)


@dataclass(frozen=True)
class Seen:
    """One check of an expectation: what each part observed, and whether all hold."""

    observed: dict[str, Any]
    met: bool
    screen: ui.Screen


def check(ctx: ActionContext, expect: Expect, phase: str) -> Seen:
    """Read the screen once and check every part of ``expect`` on it."""
    screen = ui.dump(ctx, phase)
    observed: dict[str, Any] = {}
    met = True
    if expect.appears is not None:
        count = len(matching(screen, expect.appears))
        observed["appears"] = count
        met = met and count > 0
    if expect.disappears is not None:
        count = len(matching(screen, expect.disappears))
        observed["disappears"] = count
        met = met and count == 0
    if expect.field is not None:
        found = matching(screen, expect.field)
        index = expect.field.index or 0
        if index < len(found):
            package = found[index].package
            text = read_text(ctx, package, expect.field, index, found[index], phase)
            observed["text"] = text
            met = met and text == expect.text
        else:
            observed["text"] = None
            met = False
    if expect.package is not None:
        front = screen.packages[0] if screen.packages else None
        observed["package"] = front
        met = met and front == expect.package
    return Seen(observed, met, screen)


def wanted(expect: Expect) -> dict[str, Any]:
    return expect.model_dump(exclude_none=True)


def keep_screen(
    ctx: ActionContext, screen: ui.Screen, when: str, shot: ui.ScreenshotMeanwhile | None = None
) -> None:
    """Keep ``screen`` (its hierarchy) and a screenshot of it as the task's artifacts
    ``ui_<when>_hierarchy`` / ``ui_<when>_screenshot``: the screen a step left, which a
    person reads in the report and an agent gets back as an image over MCP
    (``daemon/mcp/images.py`` takes a task's last ``*_screenshot`` / ``*_hierarchy``).
    ``shot``: the screenshot was taken while ``screen`` was dumped; else it is taken now."""
    if ctx.artifacts_dir is None:
        return
    path = write_private(Path(ctx.artifacts_dir) / f"ui_{when}_hierarchy.xml", screen.xml)
    ctx.recorder.artifacts[f"ui_{when}_hierarchy"] = str(path)
    if shot is None:
        ui.screenshot(ctx, f"ui_{when}_screenshot")
    else:
        shot.result()


def verify(ctx: ActionContext, expect: Expect, done: str, value: Any = None) -> Outcome:
    """Poll the expectation after a step (within the settle bound): met, or not met with the
    visible elements in evidence; either way the screen it left is kept (``keep_screen``;
    its screenshot taken while the first check dumps it, and again when a later check
    decided)."""
    checks: list[Seen] = []

    def read() -> Seen:
        checks.append(check(ctx, expect, "after"))
        return checks[-1]

    with ui.ScreenshotMeanwhile(ctx, "ui_after_screenshot") as shot:
        seen, ok = ctx.poll("expectation", read, lambda s: s.met,
                            timeout=min(ctx.settle_timeout, 5.0))  # fmt: skip
    target = {"expected": wanted(expect), "observed": seen.observed, "met": ok}
    ctx.recorder.observe("expectation", {"observed": seen.observed, "met": ok}, "after",
                         seen.screen.read_by)  # fmt: skip
    keep_screen(ctx, seen.screen, "after", shot if len(checks) == 1 else None)
    if ok:
        return outcome(ctx, Status.MET, target, f"{done}; expectation observed", value=value)
    return outcome(
        ctx, Status.NOT_MET, target,
        f"{done}, but the expectation was not observed: {seen.observed}",
        value=value, screen=visible(seen.screen), screen_digest=seen.screen.digest,
    )  # fmt: skip


Direction = Literal["up", "down", "left", "right"]


def screen_size(screen: ui.Screen) -> tuple[int, int]:
    """The display's width and height: the largest bounds in the dump (the root's)."""
    width = max((n.bounds[2] for n in screen.nodes), default=1080)
    height = max((n.bounds[3] for n in screen.nodes), default=2400)
    return width, height


def swipe_points(
    screen: ui.Screen, direction: Direction, node: Node | None = None
) -> tuple[int, int, int, int]:
    """From and to of a swipe whose finger moves ``direction`` across ``node`` (or the middle
    of the screen): 60% of its extent, centred."""
    if node is not None:
        left, top, right, bottom = node.bounds
    else:
        width, height = screen_size(screen)
        left, top, right, bottom = 0, height // 5, width, height * 4 // 5
    cx, cy = (left + right) // 2, (top + bottom) // 2
    dx, dy = (right - left) * 3 // 10, (bottom - top) * 3 // 10
    return {
        "up": (cx, cy + dy, cx, cy - dy),
        "down": (cx, cy - dy, cx, cy + dy),
        "left": (cx + dx, cy, cx - dx, cy),
        "right": (cx - dx, cy, cx + dx, cy),
    }[direction]


def unknown(ctx: ActionContext, method: str, params: Any, why: str) -> Outcome:
    """A step whose effect may have landed (the call failed or the phone went): unknown,
    with what would reconcile it; a UI step is never repeated."""
    hint = {"method": method, "params": params.model_dump(exclude_none=True),
            "effects": list(ctx.started_effects)}  # fmt: skip
    return outcome(ctx, Status.UNKNOWN, {"expected": None, "observed": None, "met": False},
                   f"the step may or may not have landed: {why}", reconcile=hint)  # fmt: skip


def u2_effect(
    ctx: ActionContext,
    params: Any,
    target: str,
    argv: tuple[str, ...],
    call: Callable[[Any], Any],
    inputs: Any,
) -> Outcome | None:
    """One uiautomator2 call with an effect (set_text, swipe, press) through
    ``ActionContext.effect_call`` (gate, journal, evidence); None when it ran, else the
    outcome: the session is not running (nothing done: the UI tier's text, swipes and keys
    go only through uiautomator2, never a shell), the phone refused injected input, or the
    call failed after it started (unknown)."""
    method = ctx.recorder.method
    with ctx.device.ui_session.use() as lease:
        ui._record_session(ctx, lease)
        client = lease.client
        if client is None:
            return outcome(
                ctx, Status.UNSUPPORTED, {"expected": None, "observed": None, "met": False},
                f"{method} goes only through the uiautomator2 session, which is not running "
                f"({lease.reason or 'shell path'}): nothing was done",
            )  # fmt: skip
        try:
            ctx.effect_call(method, target, argv, translated(ctx, lambda: call(client)), inputs)
        except UiAutomatorError as exc:
            if parsers.input_refused(str(exc)) is not None:
                return outcome(ctx, Status.UNSUPPORTED, {"expected": None, "observed": None,
                               "met": False}, f"{ui.INPUT_REFUSED_HINT} ({exc})")  # fmt: skip
            return unknown(ctx, method, params, str(exc))
        except TransportLost as exc:
            return unknown(ctx, method, params, str(exc))
    return None


def reconcile(ctx: ActionContext, params: Any, hint: dict[str, Any]) -> str:
    """Did an interrupted step land? Its expectation seen now says it did; not seen cannot
    tell (the screen may have moved on), so the step is never repeated."""
    expect = getattr(params, "expect", None)
    if expect is None:
        return "cannot_tell"
    return "happened" if check(ctx, expect, "read").met else "cannot_tell"
