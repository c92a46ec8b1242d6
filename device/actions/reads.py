"""Reading a value from the device as evidence: run a read-only command, parse, observe.

Action modules call ``read()`` for every before/after/poll read so each value lands in the
evidence with the command that read it and when; parsing stays in ``phoned.device.parsers``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.adb import ShellResult

T = TypeVar("T")


def read(
    ctx: ActionContext,
    name: str,
    argv: Sequence[str],
    parse: Callable[[str], T],
    phase: str,
    *,
    with_stderr: bool = False,
) -> T:
    """Run ``argv`` (read-only), parse its stdout (plus stderr if asked), observe and return."""
    result = ctx.recorder.read(argv)
    text = result.stdout + (result.stderr if with_stderr else "")
    value = parse(text)
    ctx.recorder.observe(name, value, phase, argv)
    return value


def raw(ctx: ActionContext, argv: Sequence[str]) -> ShellResult:
    """Run a read-only command and return its result (recorded, not observed)."""
    return ctx.recorder.read(argv)


def invalid(ctx: ActionContext, field: str, message: str) -> Outcome:
    """``invalid_params`` naming ``field``; nothing was sent to the device."""
    return outcome(
        ctx,
        Status.INVALID_PARAMS,
        {"expected": None, "observed": None, "met": False},
        message,
        field=field,
    )


def target(expected: Any, observed: Any) -> dict[str, Any]:
    """The evidence target block: expected vs observed and whether they agree."""
    return {"expected": expected, "observed": observed, "met": expected == observed}


def listed(ctx: ActionContext, counts: Any, message: str, value: Any) -> Outcome:
    """The outcome of a read that lists (contacts, notifications, apps): met, the target's
    ``observed`` holding only the counts, so the evidence keeps no content; the items
    listed are the value."""
    return outcome(
        ctx, Status.MET, {"expected": None, "observed": counts, "met": True}, message, value=value
    )


def got(ctx: ActionContext, value: Any, message: str = "") -> Outcome:
    """The outcome of a ``*.get``: met, with the value read."""
    return outcome(
        ctx, Status.MET, {"expected": None, "observed": value, "met": True}, message, value=value
    )
