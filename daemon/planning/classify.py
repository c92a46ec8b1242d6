"""Ingress classification (seed 004 ``classifyTaskIngress``): whether a task or workflow
would be accepted, which methods it uses, whether it needs approval and whether a device
supports it, without executing or queueing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from phoned.daemon.lifecycle.contract import WorkflowSpec
from phoned.daemon.lifecycle.errors import FieldError, InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.device.actions.registry import APPROVAL_METHODS


@dataclass(frozen=True)
class Classification:
    """Whether a task (or workflow) would be accepted, and what it would need."""

    accepted: bool
    kind: str  # "task", "workflow" or "invalid"
    methods: tuple[str, ...] = ()
    needs_approval: bool = False
    supported: bool | None = None  # None: no capability set was given
    unsupported: tuple[str, ...] = ()
    errors: tuple[FieldError, ...] = field(default_factory=tuple)


def classify_ingress(
    raw: dict[str, Any], capabilities: frozenset[str] | None = None
) -> Classification:
    """Validate ``raw`` as ingress would, and report method, approval and support; no side effect."""
    try:
        spec = parse_ingress(raw)
    except InvalidTask as exc:
        return Classification(accepted=False, kind="invalid", errors=tuple(exc.errors))
    if isinstance(spec, WorkflowSpec):
        methods = tuple(step.method for step in spec.steps)
        asked = any(step.require_approval for step in spec.steps)
        kind = "workflow"
    else:
        methods = (spec.method,)
        asked = spec.require_approval
        kind = "task"
    unsupported = tuple(m for m in methods if capabilities is not None and m not in capabilities)
    return Classification(
        accepted=not unsupported,
        kind=kind,
        methods=methods,
        # the method's own, or the task's ``require_approval`` (accepted only where a
        # preview can be shown); a daemon's ``approval.*`` policy is its own, not known here
        needs_approval=asked or any(m in APPROVAL_METHODS for m in methods),
        supported=None if capabilities is None else not unsupported,
        unsupported=unsupported,
    )
