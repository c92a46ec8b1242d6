"""One shape for the methods that drive one setting to a value (dnd, wifi, volume,
brightness): read, reached, already, apply, unsupported-when; the run and the reconciler
of their ``Method`` come from it (each module keeps a named ``run`` and ``reconcile`` that
call it, so a declaration still names its module's own functions, and its target namer,
whose shape differs per setting).

``run`` reads the state ``before``; when it has ``reached`` the target it notes that no
command was sent and returns the module's ``already`` outcome; else the module's
``unsupported`` outcome, if any; else ``apply`` (send, then verify by read-back).
``reconcile`` reads once: ``reached`` None means the reading cannot tell, else the effect
happened or did not.

When the owner's policy asks for an approval (``ctx.approval_required``), ``run`` stops
before ``apply`` and returns ``needs_approval`` with a preview of the change read from the
phone at that moment (``change``: the setting, its value now, the value asked for; shown as
``zen_mode 0 (off) -> 1 (priority)``), bound like ``sms.send``'s: ``{effect, target, data,
snapshot_digest}``, the snapshot digest that of the reading the preview rests on. It goes
on to ``apply`` only when ``ctx.approval_digest`` is that very preview's digest; a phone
that changed meanwhile shows another preview, so the approval given is void and it asks
again. Nothing to change (already there) asks nothing. ``sms``, ``bluetooth``, ``app`` and
``permission`` stay hand-written (their reads and effects do not fit this shape) but ask
through the same ``ask`` with a ``Change`` of their own (``bluetooth adapter OFF -> ON``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from phoned.device.actions.base import ActionContext, Outcome, Status, approval_holds, outcome
from phoned.foundation.digest import digest

P = TypeVar("P", bound=BaseModel)
S = TypeVar("S")  # one reading of the setting (a value, a word, a small record)

ALREADY_NOTE = "already in the target state: no command sent"


@dataclass(frozen=True)
class Change:
    """What a setting method would change: the setting, its value now, the value asked for
    (words as a person reads them: ``0 (off)``, ``on``, ``5``)."""

    setting: str  # "zen_mode", "wifi", "volume music", "brightness"
    before: str
    after: str

    def line(self) -> str:
        """``zen_mode 0 (off) -> 1 (priority)``."""
        return f"{self.setting} {self.before} -> {self.after}"


def change_preview(
    method: str, change: Change, reading: Any, target: str | None = None, **data: Any
) -> dict[str, Any]:
    """The preview of a change an approval is bound to (the task store's ``Preview``
    fields); ``reading`` is the state read from the phone when asking, ``target`` what the
    change is to (the setting when not given), ``data`` what else the card shows (the
    package, the activity, the permission). (Its data says ``before``/``after``: ``to`` is a
    recipient's key, redacted in evidence.)"""
    shown = {k: v for k, v in data.items() if v is not None}
    return {
        "effect": method,
        "target": change.setting if target is None else target,
        "data": {**shown, "before": change.before, "after": change.after, "change": change.line()},
        "snapshot_digest": digest({"setting": change.setting, "reading": reading}),
    }


def ask(
    ctx: ActionContext, change: Change, reading: Any, target: str | None = None, **data: Any
) -> Outcome | None:
    """``needs_approval`` with ``change``'s preview (``change_preview``), unless no approval
    is asked for (``ctx.approval_required``) or the one given is of this very preview (then
    None: go on and make the change). A phone read differently since shows another preview:
    the approval given is void and it asks again (``approval_void``). Any changing method
    calls it right before its effect, with what it read from the phone."""
    if not ctx.approval_required:
        return None
    shown = change_preview(ctx.recorder.method, change, reading, target, **data)
    shown_digest = digest(shown)
    if approval_holds(ctx, shown_digest):
        return None
    void = ctx.approval_digest is not None
    message = (
        "the approval does not match the current preview: approve again"
        if void
        else f"changing {change.line()} needs approval"
    )
    return outcome(
        ctx, Status.NEEDS_APPROVAL, {"expected": change.after, "observed": change.before},
        message, preview=shown, preview_digest=shown_digest, approval_void=void,
    )  # fmt: skip


@dataclass(frozen=True)
class Setting(Generic[P, S]):
    """A setting method's parts; ``run`` and ``reconcile`` are built from them."""

    read: Callable[[ActionContext, P, str], S]  # (ctx, params, phase) -> the state observed
    reached: Callable[[P, S], bool | None]  # the target holds; None: the reading cannot tell
    already: Callable[[ActionContext, P, S], Outcome]  # the met outcome when nothing is sent
    apply: Callable[[ActionContext, P, S], Outcome]  # send the command(s), verify by read-back
    # the unsupported outcome (this phone cannot do it), or None: go on and apply
    unsupported: Callable[[ActionContext, P, S], Outcome | None] = lambda ctx, params, s: None
    # (params, the reading now) -> the change a preview shows, when a policy asks for one
    change: Callable[[P, S], Change] | None = None

    def run(self, ctx: ActionContext, params: P) -> Outcome:
        """Read, then already there, unsupported, or apply (which verifies by read-back)."""
        before = self.read(ctx, params, "before")
        if self.reached(params, before):
            ctx.recorder.note(ALREADY_NOTE)
            return self.already(ctx, params, before)
        refused = self.unsupported(ctx, params, before)
        if refused is not None:
            return refused
        asked = self.ask(ctx, params, before)
        if asked is not None:
            return asked
        return self.apply(ctx, params, before)

    def ask(self, ctx: ActionContext, params: P, before: S) -> Outcome | None:
        """``needs_approval`` with the change's preview (module ``ask``), unless no approval
        is asked for or the one given is of this very preview (then None: go on and apply)."""
        if not ctx.approval_required or self.change is None:
            return None
        reading = (
            asdict(before) if is_dataclass(before) and not isinstance(before, type) else before
        )
        return ask(ctx, self.change(params, before), reading)

    def reconcile(self, ctx: ActionContext, params: P, hint: dict[str, Any]) -> str:
        """Did an interrupted run take effect? One read decides, or cannot tell."""
        reached = self.reached(params, self.read(ctx, params, "read"))
        if reached is None:
            return "cannot_tell"
        return "happened" if reached else "did_not_happen"
