"""What a paused task waits for, as a typed value (``TaskRecord.waiting``).

The executor builds it from the action's outcome, the pause watcher checks it, the store
keeps its text form in ``tasks.waiting_for`` (and the wire carries that text):

==========================================  ==================================================
text                                        value
==========================================  ==================================================
``unlock`` (or another condition word)      ``WaitingFor(CONDITION, condition="unlock")``
``permission-dialog[:APP[:P1,P2]]``         ``WaitingFor(PERMISSION_DIALOG, package=APP,
                                            missing=(P1, P2))``: a runtime-permission dialog
                                            over APP, whose runtime permissions P1, P2 were
                                            not granted when it showed
``permission:PACKAGE:WHAT``                 ``WaitingFor(PERMISSION, package, permission=WHAT)``
                                            (``WHAT`` is ``android.permission.X`` or
                                            ``access:notification_listener|dnd_access``)
``user``                                    ``WaitingFor(USER)``: a person paused it
``choice:FIELD``                            ``WaitingFor(CHOICE, choice_of=FIELD)``: several
                                            candidates fit the param ``FIELD`` (a contact
                                            name as ``to``, a selector matching several
                                            elements); the candidates are in the outcome's
                                            evidence, and only an amendment that picks one
                                            (a new revision) requeues the task
``person:PACKAGE:UNTIL``                    ``WaitingFor(PERSON, package, until=UNTIL)``: a
                                            step handed to the person in PACKAGE
                                            (``ui.handoff``); UNTIL is the epoch second its
                                            TTL ends (the sweeper fails it ``timeout`` then)
==========================================  ==================================================

Package and permission names never contain ``:`` or ``,`` (Android's own rules; the params
are pattern-checked at ingress), so the text form is unambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class WaitKind(str, Enum):
    """The kind of thing a paused task waits for."""

    CONDITION = "condition"  # a phone condition such as unlock
    PERMISSION_DIALOG = "permission-dialog"  # a person answers a runtime-permission dialog
    PERMISSION = "permission"  # a grant to observe (recovery screen opened)
    USER = "user"  # a person paused the task; only they resume it
    CHOICE = "choice"  # several candidates fit a param; an amendment picks one
    PERSON = "person"  # a step handed to the person (ui.handoff); phoned observes it done


@dataclass(frozen=True)
class WaitingFor:
    """What a paused task waits for; ``text`` is its stored form, ``parse`` reads it back."""

    kind: WaitKind
    condition: str | None = None
    package: str | None = None
    permission: str | None = None
    missing: tuple[str, ...] = ()
    choice_of: str | None = None  # CHOICE: the param the candidates are for
    until: int | None = None  # PERSON: the epoch second the step's TTL ends

    @property
    def text(self) -> str:
        """The stored form (``tasks.waiting_for``)."""
        if self.kind is WaitKind.CONDITION:
            return self.condition or "condition"
        if self.kind is WaitKind.USER:
            return "user"
        if self.kind is WaitKind.CHOICE:
            return f"choice:{self.choice_of or 'params'}"
        if self.kind is WaitKind.PERMISSION:
            return f"permission:{self.package}:{self.permission}"
        if self.kind is WaitKind.PERSON:
            return f"person:{self.package}:{self.until or 0}"
        parts = ["permission-dialog"]
        if self.package:
            parts.append(self.package)
            if self.missing:
                parts.append(",".join(self.missing))
        return ":".join(parts)

    @classmethod
    def parse(cls, text: str) -> WaitingFor:
        """The value of a stored ``waiting_for`` text (any word is a condition)."""
        if text == "user":
            return cls(WaitKind.USER)
        head, _, rest = text.partition(":")
        if head == "choice":
            return cls(WaitKind.CHOICE, choice_of=rest or "params")
        if head == "permission-dialog":
            package, _, missing = rest.partition(":")
            names = tuple(m for m in missing.split(",") if m)
            return cls(WaitKind.PERMISSION_DIALOG, package=package or None, missing=names)
        if head == "person":
            package, _, until = rest.partition(":")
            return cls(
                WaitKind.PERSON, package=package, until=int(until) if until.isdigit() else None
            )
        if head == "permission" and rest.count(":") >= 1:
            package, _, what = rest.partition(":")
            return cls(WaitKind.PERMISSION, package=package, permission=what)
        return cls(WaitKind.CONDITION, condition=text)


USER_HOLD = WaitingFor(WaitKind.USER)
