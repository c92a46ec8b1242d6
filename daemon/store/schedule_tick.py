"""The schedule tick: fire what is due on a queue held directly (SQLite or PostgreSQL).

Run by a daemon's main loop on an embedded queue and by ``phoned serve`` for its fleet
(a daemon of an ``http(s)://`` plane does not: the plane ticks). ``tick(store, now,
grace_s)`` reads every active schedule, plans each (``phoned.daemon.lifecycle.schedules
.plan_tick``: the latest due time fires if it is at most ``grace_s`` old, the others are
missed) and applies one ``FireSchedule`` per schedule with something due; any number of
processes may tick one queue at once, each due time creates one task
(``phoned.daemon.store.sql_schedules.fire``). It answers what it did and when the next due time
comes, so the caller sleeps until then instead of polling.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from phoned.daemon.lifecycle.errors import LifecycleError, StoreUnavailable
from phoned.daemon.lifecycle.schedule_ops import FireSchedule
from phoned.daemon.lifecycle.schedules import plan_tick, utc_text
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.sql_store import SqlStore

log = logging.getLogger("phoned.schedules")

MIN_SLEEP_S = 0.05  # a due time this close is ticked on the next turn, not in a spin


@dataclass
class Tick:
    """What one tick did: the tasks it created, the due times it found missed, the
    schedules whose stored task ingress refused, and the next due time of any active
    schedule (POSIX s; None: none is active)."""

    fired: list[str] = field(default_factory=list)
    missed: int = 0
    refused: list[str] = field(default_factory=list)
    next_due: float | None = None


def tick(store: SqlStore, now: float, grace_s: float) -> Tick:
    """Fire and record what is due at ``now`` (see the module docstring)."""
    done = Tick()
    for schedule in store.schedules(now):
        plan = plan_tick(schedule, now, grace_s)
        if plan.latest is not None:
            op = FireSchedule(schedule.id, schedule.last_due_at, plan, now)
            try:
                result = store.apply(op)
            except StoreUnavailable:
                raise  # the queue's weather: the caller says it and ticks again later
            except LifecycleError as exc:  # this schedule only; the others still fire
                log.warning("schedule %s: could not fire: %s", schedule.id, exc)
                continue
            if result.won:
                done.missed += plan.missed_total
                if plan.missed_total:
                    log.warning(
                        "schedule %s: %s%d due time(s) missed (latest %s): nothing ran then",
                        schedule.id, "" if plan.counted_all else "at least ",
                        plan.missed_total, utc_text(max(plan.missed or (0.0,))),
                    )  # fmt: skip
                if result.task_id is not None:
                    done.fired.append(result.task_id)
                    log.info("schedule %s fired task %s", schedule.id, result.task_id)
                if result.refused is not None:
                    done.refused.append(schedule.id)
                    log.warning(
                        "schedule %s: its task was refused: %s", schedule.id, result.refused
                    )
        upcoming = schedule.next_due_at
        if not schedule.paused and upcoming is not None:
            done.next_due = upcoming if done.next_due is None else min(done.next_due, upcoming)
    return done


def seconds_until(
    store: Store,
    now: float,
    grace_s: float,
    at_most: float,
    observe: Callable[[Tick], None] | None = None,
) -> float:
    """Tick ``store`` (a queue held directly; any other has no schedules to fire) and
    answer how long the caller may sleep: until the next due time, at most ``at_most``
    (a schedule added meanwhile is seen then), at least ``MIN_SLEEP_S``. ``observe`` hears
    what the tick did (the metrics' runs fired and missed)."""
    if not isinstance(store, SqlStore):
        return at_most
    done = tick(store, now, grace_s)
    if observe is not None:
        observe(done)
    if done.next_due is None:
        return at_most
    return max(MIN_SLEEP_S, min(at_most, done.next_due - time.time()))
