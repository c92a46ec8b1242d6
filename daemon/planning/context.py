"""The device planning context (seed 004 ``getDevicePlanningContext``), answered directly
and never queued as a task.

It comes from a ``DeviceContextProvider`` (``daemon/planning/device_context.py`` reads it from the
phone); every value carries the time it was observed, and the planner is told which values
are too old rather than left to guess.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Generic, Protocol, TypeVar

from phoned.daemon.store.protocol import PlannerStore

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
    # the app in front's label in the phone's language (``device.app_labels``)
    foreground_label: Observed[str] | None = None
    dnd_mode: Observed[str] | None = None
    bluetooth_on: Observed[bool] | None = None
    volumes: Observed[dict[str, int]] | None = None
    default_sms_app: Observed[str] | None = None
    supported_methods: Observed[frozenset[str]] | None = None
    # on request only (``apps: true``): {"apps": [{package, activity, label}], "labels": why}
    launchable_apps: Observed[dict[str, Any]] | None = None


class DeviceContextProvider(Protocol):
    """Implemented by the device layer: the latest known context of a device."""

    def device_context(self, serial: str) -> DeviceContext:
        """Read (or return cached) values, each stamped with ``observed_at``."""
        ...


# Values read only when asked for: never "missing" when not asked.
ON_REQUEST = frozenset({"launchable_apps"})


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
        if f.name == "serial" or (f.name in ON_REQUEST and value is None):
            continue
        if value is None:
            missing.append(f.name)
        elif now - value.observed_at > max_age_s:
            stale.append(f.name)
    return PlanningContext(ctx, store.queue_status(serial), tuple(stale), tuple(missing), now)
