"""Control queries, answered directly and never queued as tasks (SPEC §5, seed 004 §5).

Device planning context comes from a ``DeviceContextProvider`` (the device layer
implements it); every value carries the time it was observed, and the planner is told
which values are too old rather than left to guess. ``classify_ingress`` says whether
a task would be accepted without executing or queueing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Generic, Protocol, TypeVar

from daemon.lifecycle.contract import WorkflowSpec
from daemon.lifecycle.errors import FieldError, InvalidTask
from daemon.lifecycle.ingress import parse_ingress
from daemon.store.protocol import PlannerStore
from device.actions.registry import APPROVAL_METHODS

T = TypeVar("T")


@dataclass(frozen=True)
class Observed(Generic[T]):
    """A device value and when (POSIX seconds) it was read, by which command."""

    value: T
    observed_at: float
    source: str = ""


@dataclass(frozen=True)
class DeviceContext:
    """What the planner may know about one device; a field is None when never read."""

    serial: str
    model: Observed[str] | None = None
    sdk: Observed[int] | None = None
    battery_percent: Observed[int] | None = None
    screen_on: Observed[bool] | None = None
    locked: Observed[bool] | None = None
    foreground_app: Observed[str] | None = None
    dnd_mode: Observed[str] | None = None
    bluetooth_on: Observed[bool] | None = None
    volumes: Observed[dict[str, int]] | None = None
    default_sms_app: Observed[str] | None = None
    supported_methods: Observed[frozenset[str]] | None = None


class DeviceContextProvider(Protocol):
    """Implemented by the device layer: the latest known context of a device."""

    def device_context(self, serial: str) -> DeviceContext:
        """Read (or return cached) values, each stamped with ``observed_at``."""
        ...


@dataclass(frozen=True)
class PlanningContext:
    """Device context plus the queue, with the values too old to trust named."""

    device: DeviceContext
    queue: dict[str, int]
    stale: tuple[str, ...]
    missing: tuple[str, ...]
    at: float


def planning_context(
    provider: DeviceContextProvider,
    store: PlannerStore,
    serial: str,
    now: float,
    max_age_s: float = 60.0,
) -> PlanningContext:
    """Assemble the planning context of ``serial`` and flag stale or missing values."""
    ctx = provider.device_context(serial)
    stale: list[str] = []
    missing: list[str] = []
    for f in fields(ctx):
        value = getattr(ctx, f.name)
        if f.name == "serial":
            continue
        if value is None:
            missing.append(f.name)
        elif now - value.observed_at > max_age_s:
            stale.append(f.name)
    return PlanningContext(ctx, store.queue_status(serial), tuple(stale), tuple(missing), now)


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
        kind = "workflow"
    else:
        methods = (spec.method,)
        kind = "task"
    unsupported = tuple(m for m in methods if capabilities is not None and m not in capabilities)
    return Classification(
        accepted=not unsupported,
        kind=kind,
        methods=methods,
        needs_approval=any(m in APPROVAL_METHODS for m in methods),
        supported=None if capabilities is None else not unsupported,
        unsupported=unsupported,
    )
