"""One task method's declaration: every fact the daemon keeps about it, in one record.

Each action module ends with ``DECLARED``, a tuple of ``Method`` naming its own functions;
``device/actions/registry.py`` collects them and builds every table the rest of phoned
reads (``docs/methods-registry.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from device.actions.base import ActionContext, Outcome
    from device.connection import Capabilities

P = TypeVar("P", bound=BaseModel)

TargetNamer = Callable[[dict[str, Any], Any], str]  # (task params, observed) -> target name


@dataclass(frozen=True)
class Method(Generic[P]):
    """A task method: its params model, its action, and what the daemon must know of it."""

    name: str  # "dnd.set"
    params: type[P]  # validated at ingress; the action receives an instance
    run: Callable[[ActionContext, Any], Outcome]  # read (and apply), verify by read-back
    target: TargetNamer  # names what a met run observed, for the completion target
    reconcile: Callable[[ActionContext, dict[str, Any]], str] | None = None  # None: no effect
    needs: Callable[[Capabilities], bool] | None = None  # None: nothing probed is required
    approval: bool = False  # the effect waits for an explicit approval
    idempotent: bool = True  # False: once it happened, only verified, never repeated
    screen: bool = False  # depends on the screen: full snapshots, draft-edit staleness
    sensitive: tuple[str, ...] = ()  # params whose values never reach evidence or logs

    def __post_init__(self) -> None:
        unknown = set(self.sensitive) - set(self.params.model_fields)
        if unknown:
            raise ValueError(f"{self.name}: sensitive params {sorted(unknown)} are not params")
        if self.approval and self.reconcile is None:
            raise ValueError(f"{self.name}: an approved effect needs a reconciler")


def fixed(name: str) -> TargetNamer:
    """A target name that does not depend on what was observed (``sms.sent``)."""
    return lambda params, observed: name


def on_off(domain: str) -> TargetNamer:
    """``DOMAIN.on`` / ``DOMAIN.off`` for a boolean observation, ``DOMAIN.<value>`` else."""

    def name(params: dict[str, Any], observed: Any) -> str:
        if isinstance(observed, bool):
            return f"{domain}.{'on' if observed else 'off'}"
        return f"{domain}.{observed}"

    return name
