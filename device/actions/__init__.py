"""Device actions: one module per task method, each reads, applies, and verifies by read-back.

``execute(method, params, ctx)`` runs one method and returns an ``Outcome``
(``device/actions/base.py``). Device errors before any effect propagate (the executor maps
``DeviceOffline`` to the retryable ``device_offline``); a transport lost after an effect
started becomes ``Status.UNKNOWN`` with what would reconcile it, because the effect may or
may not have happened.

``reconcile(method, params, ctx)`` answers, for an effect whose outcome is unknown, whether
its target is now observed on the device (``happened``), observably absent
(``did_not_happen``) or undecidable (``cannot_tell``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from device.actions.base import ActionContext, Outcome, Status, outcome
from device.errors import TransportLost

Action = Callable[[ActionContext, dict[str, Any]], Outcome]
Reconcile = Callable[[ActionContext, dict[str, Any]], str]

# method -> (module, function name); modules are imported on first use
METHODS: dict[str, tuple[str, str]] = {
    "dnd.set": ("dnd", "set_mode"),
    "dnd.get": ("dnd", "get"),
    "bluetooth.set": ("bluetooth", "set_enabled"),
    "bluetooth.get": ("bluetooth", "get"),
    "volume.set": ("volume", "set_level"),
    "volume.get": ("volume", "get"),
    "sms.draft": ("sms", "draft"),
    "sms.send": ("sms_send", "send"),
    "permission.check": ("permission", "check"),
    "permission.request": ("permission", "request"),
    "screen.snapshot": ("screen", "snapshot"),
}
# Methods with an effect whose outcome can be unknown; reads need no reconciling.
RECONCILERS: dict[str, tuple[str, str]] = {
    "dnd.set": ("dnd", "reconcile"),
    "bluetooth.set": ("bluetooth", "reconcile"),
    "volume.set": ("volume", "reconcile"),
    "sms.draft": ("sms", "reconcile"),
    "sms.send": ("sms_send", "reconcile"),
    "permission.request": ("permission", "reconcile"),
}
RECONCILE_ANSWERS = ("happened", "did_not_happen", "cannot_tell")
# Methods whose effect must never be repeated once it happened: a retry only verifies it.
NON_IDEMPOTENT = frozenset({"sms.send"})


def _resolve(table: dict[str, tuple[str, str]], method: str) -> Callable[..., Any]:
    module_name, function = table[method]
    module = importlib.import_module(f"device.actions.{module_name}")
    fn: Callable[..., Any] = getattr(module, function)
    return fn


def supported_methods() -> list[str]:
    return sorted(METHODS)


def execute(method: str, params: dict[str, Any], ctx: ActionContext) -> Outcome:
    """Run ``method`` with ``params`` on ``ctx.device`` and return its outcome.

    Raises ``ValueError`` for an unknown method. A device error raised before any effect
    started propagates unchanged (nothing happened, a retry is safe). ``TransportLost`` once
    an effect has started (``ctx.started_effects``) becomes ``Status.UNKNOWN`` with a
    ``reconcile`` hint: the effect may or may not have happened.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; supported: {', '.join(supported_methods())}")
    action: Action = _resolve(METHODS, method)
    try:
        return action(ctx, params)
    except TransportLost as exc:
        if not ctx.started_effects:
            raise
        hint = {"method": method, "params": params, "effects": list(ctx.started_effects)}
        return outcome(
            ctx,
            Status.UNKNOWN,
            {"expected": None, "observed": None, "met": False},
            f"connection lost after {ctx.started_effects[-1]} started: {exc}",
            reconcile=hint,
        )


def reconcile(method: str, params: dict[str, Any], ctx: ActionContext) -> str:
    """For an effect whose outcome is unknown: ``happened``, ``did_not_happen`` or
    ``cannot_tell``, decided only by reading the device (never by repeating the effect).

    Methods without an effect have nothing to reconcile: ``did_not_happen``.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")
    if method not in RECONCILERS:
        return "did_not_happen"
    answer: str = _resolve(RECONCILERS, method)(ctx, params)
    if answer not in RECONCILE_ANSWERS:  # pragma: no cover - a reconciler bug
        raise AssertionError(f"reconciler for {method} answered {answer!r}")
    return answer
