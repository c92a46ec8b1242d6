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

from typing import Any

from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import Method
from phoned.device.errors import TransportLost

RECONCILE_ANSWERS = ("happened", "did_not_happen", "cannot_tell")


def supported_methods() -> list[str]:
    """Every declared method (``device/actions/registry.py``)."""
    # lazy: the registry imports this package first (its method modules load after it)
    from phoned.device.actions.registry import REGISTRY

    return sorted(REGISTRY)


def execute(
    method: str,
    params: dict[str, Any],
    ctx: ActionContext,
    declaration: Method[Any] | None = None,
) -> Outcome:
    """Run ``method`` with ``params`` on ``ctx.device`` and return its outcome.

    ``params`` are validated with the method's model first: an error is ``invalid_params``
    naming the field, with nothing sent; the action receives the typed model. Raises ``ValueError`` for an unknown method. A device error raised before any effect
    started propagates unchanged (nothing happened, a retry is safe). ``TransportLost`` once
    an effect has started (``ctx.started_effects``) becomes ``Status.UNKNOWN`` with a
    ``reconcile`` hint: the effect may or may not have happened.
    """
    # lazy: the registry imports this package first (its method modules load after it)
    from phoned.device.actions.reads import invalid
    from phoned.device.actions.registry import method as declared

    if declaration is None:  # the caller's own lookup (an attempt's) is used as it is
        declaration = declared(method)  # ValueError for an unknown method
    checked = declaration.validate(params)
    if isinstance(checked, tuple):  # nothing reached the phone
        return invalid(ctx, *checked)
    ctx.recorder.add_sensitive(*declaration.secrets(checked))
    try:
        return declaration.run(ctx, checked)
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

    ``params`` are the hint: the task's params (checked with the method's model; invalid
    ones: ``cannot_tell``) plus what the journal kept (``journal``, ``baseline_id``).
    Methods without an effect have nothing to reconcile: ``did_not_happen``.
    """
    # lazy: the registry imports this package first (its method modules load after it)
    from phoned.device.actions.registry import method as declared

    declaration = declared(method)  # ValueError for an unknown method
    if declaration.reconcile is None:
        return "did_not_happen"
    model_fields = declaration.params.model_fields
    checked = declaration.validate({k: v for k, v in params.items() if k in model_fields})
    if isinstance(checked, tuple):  # without the task's own params nothing can be judged
        return "cannot_tell"
    ctx.recorder.add_sensitive(*declaration.secrets(checked))
    answer = declaration.reconcile(ctx, checked, params)
    if answer not in RECONCILE_ANSWERS:  # pragma: no cover - a reconciler bug
        raise AssertionError(f"reconciler for {method} answered {answer!r}")
    return answer
