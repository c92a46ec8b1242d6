"""What every device action shares: its outcome, its context, effects and polling.

An action reads the current state, applies the change, and verifies it by an independent
read-back; only verification can say ``met``. Every external effect goes through
``ActionContext.effect()`` (a shell command) or ``ActionContext.effect_call()`` (a
uiautomator2 call such as a click), which call the admission gate and write the action
journal before the effect runs and after it returns, so a crash between the two leaves an
``unknown`` entry that is reconciled by reading the device before anything is retried.
"""

from __future__ import annotations

import enum
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from phoned.device import private
from phoned.device.adb import ShellResult
from phoned.foundation.digest import digest
from phoned.device.errors import TransportLost, UiAutomatorError
from phoned.device.evidence import Evidence, Recorder

T = TypeVar("T")


class Status(str, enum.Enum):
    """How an action ended; the task executor maps each to a task state."""

    MET = "met"  # the target was observed by an independent read-back
    NOT_MET = "not_met"  # applied (or tried) but the read-back disagrees: verification_failed
    UNSUPPORTED = "unsupported"  # the device cannot do this (detail says why)
    INVALID_PARAMS = "invalid_params"  # a parameter is out of the device's range (detail names it)
    NEEDS_APPROVAL = "needs_approval"  # an effect is prepared; detail has the preview and digest
    NEEDS_PERMISSION = "needs_permission"  # a permission/access is missing; detail says which
    WAITING = "waiting"  # a condition must change first (detail: unlock, app, network, input)
    UNKNOWN = "unknown"  # an effect may have happened; detail says how to reconcile
    CANNOT_TELL = "cannot_tell"  # the effect ran; the phone shows nothing that decides it


@dataclass(frozen=True)
class Outcome:
    """The result of one action with its evidence."""

    status: Status
    method: str
    evidence: Evidence
    message: str = ""
    value: Any = None  # what a *.get method read
    detail: dict[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = field(default=(), repr=False)  # the recorder's sensitive values

    def to_json(self) -> dict[str, Any]:
        """The stored form: ``detail`` and ``value`` redacted as the evidence is (the preview
        keeps its shape with the number and text redacted; ``detail`` in memory stays clear,
        for the preview digest an approval is bound to)."""
        return {
            "status": self.status.value,
            "method": self.method,
            "message": private.replace_secrets(self.message, self.secrets),
            "value": private.scrub(self.value, self.secrets),
            "detail": private.scrub(self.detail, self.secrets),
            "evidence": self.evidence.to_json(),
        }


class Superseded(Exception):
    """The admission gate refused an effect: a newer revision exists or a stop was requested."""


class Journal(Protocol):
    """Where effects are written before and after they run (the task store implements it)."""

    def before(self, op_id: str, action: str, target: str, input_digest: str) -> None: ...

    def after(self, op_id: str, outcome: str, detail: str = "") -> None: ...


class NullJournal:
    """A journal that keeps entries in memory: for ``phoned`` runs without a task store."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, str]] = {}

    def before(self, op_id: str, action: str, target: str, input_digest: str) -> None:
        self.entries[op_id] = {"action": action, "target": target, "digest": input_digest}

    def after(self, op_id: str, outcome: str, detail: str = "") -> None:
        self.entries[op_id].update(outcome=outcome, detail=detail)


@dataclass
class ActionContext:
    """What an action may use besides its parameters."""

    recorder: Recorder
    gate: Callable[[str], None] = lambda action: None  # raises Superseded to refuse an effect
    journal: Journal = field(default_factory=NullJournal)
    approval_digest: str | None = None  # the preview digest an approver accepted, if any
    # the preview digest the approval was found to cover right before the effect
    # (``approval_holds``); None: no approved preview was matched in this step
    approved_preview: str | None = None
    # the owner's policy asks for an approval of this task's effect (``approval_policy``)
    approval_required: bool = False
    poll_interval: float = 0.1
    settle_timeout: float = 5.0  # bound on waiting for an async transition
    ci_grant: bool = False  # CI-only: grant permissions with pm/cmd instead of waiting
    artifacts_dir: Path | None = None  # where screenshots and hierarchy dumps are written
    started_effects: list[str] = field(default_factory=list)  # actions begun, in order

    @property
    def device(self) -> Any:
        return self.recorder.device

    def effect(
        self, action: str, target: str, argv: Sequence[str], inputs: Any, timeout: float = 10.0
    ) -> ShellResult:
        """Run one shell command with an effect: gate, journal before, run, journal after.

        A lost transport leaves the journal entry ``unknown`` and re-raises ``TransportLost``.
        """
        result: ShellResult = self._journaled(
            action, target, inputs, lambda: self.recorder.run(argv, timeout), (TransportLost,)
        )
        return result

    def effect_call(
        self, action: str, target: str, describe: Sequence[str], call: Callable[[], T], inputs: Any
    ) -> T:
        """Run one effect that is not a shell command (a uiautomator2 click) through the same
        gate, journal and evidence as ``effect``; ``describe`` is its evidence argv.

        A lost transport or a failed uiautomator2 call may or may not have reached the
        screen: the journal entry stays ``unknown`` and the error is re-raised.
        """
        value: T = self._journaled(
            action,
            target,
            inputs,
            lambda: self.recorder.call(describe, call),
            (TransportLost, UiAutomatorError),
        )
        return value

    def _journaled(
        self,
        action: str,
        target: str,
        inputs: Any,
        run: Callable[[], Any],
        unknown_on: tuple[type[Exception], ...],
    ) -> Any:
        self.gate(action)
        op_id = uuid.uuid4().hex
        self.journal.before(op_id, action, target, digest(inputs))  # may refuse: Superseded
        self.started_effects.append(action)
        try:
            result = run()
        except unknown_on as exc:
            self.journal.after(op_id, "unknown", str(exc))
            raise
        except Exception as exc:
            self.journal.after(op_id, "confirmed_failure", f"{type(exc).__name__}: {exc}")
            raise
        if isinstance(result, ShellResult):
            ok, detail = result.ok, f"exit {result.exit_code}"
        else:
            ok, detail = result is not False, f"returned {result!r}"
        self.journal.after(op_id, "confirmed_success" if ok else "confirmed_failure", detail)
        return result

    def poll(
        self,
        name: str,
        read: Callable[[], Any],
        done: Callable[[Any], bool],
        timeout: float | None = None,
    ) -> tuple[Any, bool]:
        """Read ``name`` until ``done(value)`` or the bound passes; every read is evidence.

        Returns the last value and whether it satisfied ``done``.
        """
        deadline = time.monotonic() + (self.settle_timeout if timeout is None else timeout)
        while True:
            value = read()
            if done(value) or time.monotonic() >= deadline:
                return value, done(value)
            time.sleep(self.poll_interval)


def approval_holds(ctx: ActionContext, shown_digest: str) -> bool:
    """Whether the approval given is of this very preview (``shown_digest``), computed from
    the phone right before the effect; a match is noted on ``ctx`` (``approved_preview``) so
    the attempt can say that a fresh preview was identical to the approved one."""
    if ctx.approval_digest is None or ctx.approval_digest != shown_digest:
        return False
    ctx.approved_preview = shown_digest
    return True


def outcome(
    ctx: ActionContext,
    status: Status,
    target: dict[str, Any],
    message: str = "",
    value: Any = None,
    **detail: Any,
) -> Outcome:
    """Build an ``Outcome`` with the evidence collected so far."""
    return Outcome(
        status=status,
        method=ctx.recorder.method,
        evidence=ctx.recorder.evidence(target),
        message=message,
        value=value,
        detail=detail,
        secrets=tuple(ctx.recorder.sensitive),
    )
