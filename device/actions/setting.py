"""One shape for the methods that drive one setting to a value (dnd, wifi, volume,
brightness): read, reached, already, apply, unsupported-when; the run and the reconciler
of their ``Method`` come from it (each module keeps a named ``run`` and ``reconcile`` that
call it, so a declaration still names its module's own functions, and its target namer,
whose shape differs per setting).

``run`` reads the state ``before``; when it has ``reached`` the target it notes that no
command was sent and returns the module's ``already`` outcome; else the module's
``unsupported`` outcome, if any; else ``apply`` (send, then verify by read-back).
``reconcile`` reads once: ``reached`` None means the reading cannot tell, else the effect
happened or did not. ``sms``, ``bluetooth`` and ``permission`` stay hand-written: their
reads and effects do not fit this shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from device.actions.base import ActionContext, Outcome

P = TypeVar("P", bound=BaseModel)
S = TypeVar("S")  # one reading of the setting (a value, a word, a small record)

ALREADY_NOTE = "already in the target state: no command sent"


@dataclass(frozen=True)
class Setting(Generic[P, S]):
    """A setting method's parts; ``run`` and ``reconcile`` are built from them."""

    read: Callable[[ActionContext, P, str], S]  # (ctx, params, phase) -> the state observed
    reached: Callable[[P, S], bool | None]  # the target holds; None: the reading cannot tell
    already: Callable[[ActionContext, P, S], Outcome]  # the met outcome when nothing is sent
    apply: Callable[[ActionContext, P, S], Outcome]  # send the command(s), verify by read-back
    # the unsupported outcome (this phone cannot do it), or None: go on and apply
    unsupported: Callable[[ActionContext, P, S], Outcome | None] = lambda ctx, params, s: None

    def run(self, ctx: ActionContext, params: P) -> Outcome:
        """Read, then already there, unsupported, or apply (which verifies by read-back)."""
        before = self.read(ctx, params, "before")
        if self.reached(params, before):
            ctx.recorder.note(ALREADY_NOTE)
            return self.already(ctx, params, before)
        refused = self.unsupported(ctx, params, before)
        if refused is not None:
            return refused
        return self.apply(ctx, params, before)

    def reconcile(self, ctx: ActionContext, params: P, hint: dict[str, Any]) -> str:
        """Did an interrupted run take effect? One read decides, or cannot tell."""
        reached = self.reached(params, self.read(ctx, params, "read"))
        if reached is None:
            return "cannot_tell"
        return "happened" if reached else "did_not_happen"
