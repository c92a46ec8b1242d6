"""Schedules (seed 002's autopilot): a cron expression in a time zone, the task it creates,
and what happened at each due time.

``validate_schedule(raw)`` is the only way in: it returns a frozen ``ScheduleSpec`` whose
task passed the same ingress as ``phoned submit`` (``parse_ingress``), or raises
``InvalidTask`` naming every refused field (``cron``, ``tz``, ``task.params.mode``). A cron
expression has five fields (minute hour day-of-month month day-of-week, as crontab(5)), is
read by ``croniter`` in the schedule's IANA zone (``zoneinfo``), so a daily ``30 8 * * *``
stays at 08:30 local time across daylight-saving changes; a local time that does not
exist that day (a spring-forward gap) fires at the first instant after it, and one that
happens twice (the autumn night) fires once when the expression names its hours. An expression
that never fires within ``NEVER_WITHIN_YEARS`` (``0 0 30 2 *``) is refused.

``plan_tick`` is the pure rule of a tick: of the due times since the schedule was armed
(created or resumed) or last handled, the latest fires when it is at most ``grace_s``
old; every other one is missed (recorded, never fired late in a burst): the newest
``MISSED_RECORDED`` one by one, all of them counted.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from phoned.daemon.lifecycle.contract import TaskSpec
from phoned.daemon.lifecycle.errors import FieldError, InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from pydantic import BaseModel, ConfigDict, Field, ValidationError

NEVER_WITHIN_YEARS = 5  # a cron expression with no due time this soon is refused
MISSED_RECORDED = 10  # missed due times recorded one by one per tick (the rest counted)
MISSED_COUNTED = 10_000  # due times counted per tick at most (a queue idle for years)
DEFAULT_GRACE_S = 60.0  # ``schedules.grace`` when the config does not say
NAME_MAX = 200

RunResult = Literal["fired", "missed", "refused"]


class ScheduleSpec(BaseModel):
    """A schedule as added: when (``cron`` in ``tz``), what (``task``) and whose."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cron: str = Field(min_length=1, max_length=200)
    tz: str = Field(min_length=1, max_length=100)
    conversation_id: str = Field(min_length=1, max_length=200)
    task: TaskSpec
    name: str | None = Field(default=None, min_length=1, max_length=NAME_MAX)
    paused: bool = False


def _cron_iter(cron: str, zone: ZoneInfo, start: float) -> Any:
    # lazy: croniter is loaded only by the verbs that use it (start-up)
    from croniter import croniter

    return croniter(
        cron,
        datetime.fromtimestamp(start, zone),
        max_years_between_matches=NEVER_WITHIN_YEARS,
    )


def host_zone() -> str:
    """The IANA name of this host's time zone: ``$TZ``, the ``/etc/localtime`` link, or
    ``/etc/timezone``; ``UTC`` when none names a zone."""

    candidates = [os.environ.get("TZ", "").lstrip(":")]
    link = os.path.realpath("/etc/localtime")
    if "zoneinfo/" in link:
        candidates.append(link.split("zoneinfo/", 1)[1])
    try:
        with open("/etc/timezone", encoding="utf-8") as handle:
            candidates.append(handle.read().strip())
    except OSError:
        pass
    for name in candidates:
        if name and not name.startswith("/"):
            try:
                ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
            return name
    return "UTC"


def zone_of(tz: str) -> ZoneInfo:
    """The IANA zone ``tz``, or ``InvalidTask`` naming ``tz``."""
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        message = f"unknown time zone {tz!r}: an IANA name such as Europe/Berlin or UTC"
        raise InvalidTask([FieldError(field="tz", message=message)]) from None


def check_cron(cron: str, tz: str, now: float) -> list[FieldError]:
    """The errors of ``cron`` in ``tz`` (empty: it parses and fires within a few years)."""
    # lazy: croniter is loaded only by the verbs that use it (start-up)
    from croniter import CroniterBadCronError, CroniterBadDateError, CroniterError

    errors: list[FieldError] = []
    try:
        zone = zone_of(tz)
    except InvalidTask as exc:
        errors.extend(exc.errors)
        zone = ZoneInfo("UTC")  # the expression is still checked
    fields = cron.split()
    if len(fields) != 5:
        message = (
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(fields)}"
        )
        return [*errors, FieldError(field="cron", message=message)]
    try:
        _cron_iter(cron, zone, now).get_next(float)
    except CroniterBadDateError:
        message = f"{cron!r} never fires within {NEVER_WITHIN_YEARS} years"
        errors.append(FieldError(field="cron", message=message))
    except (CroniterBadCronError, CroniterError, ValueError, KeyError) as exc:
        errors.append(FieldError(field="cron", message=f"cannot read {cron!r}: {exc}"))
    return errors


def repeated(cron: str, zone: ZoneInfo, due: float) -> bool:
    """True for the second pass of a local time the clocks went back over (02:30 twice on
    the autumn night) when the expression names its hours: a daily ``30 2 * * *`` fires
    once that night, as cron does; ``*/20 * * * *`` fires in both hours."""
    return cron.split()[1] != "*" and datetime.fromtimestamp(due, zone).fold == 1


def next_due(cron: str, tz: str, after: float) -> float | None:
    """The first due time strictly after ``after`` (POSIX s), or None if none comes."""
    # lazy: croniter is loaded only by the verbs that use it (start-up)
    from croniter import CroniterError

    try:
        zone = ZoneInfo(tz)
        forward = _cron_iter(cron, zone, after)
        due = float(forward.get_next(float))
        while repeated(cron, zone, due):
            due = float(forward.get_next(float))
        return due
    except (CroniterError, ValueError, KeyError, ZoneInfoNotFoundError):
        return None


def validate_schedule(raw: Any, now: float | None = None) -> ScheduleSpec:
    """The checked spec of a schedule, or ``InvalidTask`` naming every refused field.

    ``task`` goes through the task ingress (either shape; a workflow is refused); its
    ``conversation_id`` is the schedule's when it gives none, and must be the same when it
    does. The task's ``source`` becomes ``schedule`` whatever it said.
    """
    if not isinstance(raw, dict):
        raise InvalidTask([FieldError(field="(root)", message="expected a JSON object")])
    errors: list[FieldError] = []
    task_raw = raw.get("task")
    spec: TaskSpec | None = None
    if not isinstance(task_raw, dict):
        errors.append(FieldError(field="task", message="expected the task to create (an object)"))
    else:
        task_raw = dict(task_raw)
        conversation = raw.get("conversation_id")
        if "conversation_id" not in task_raw and isinstance(conversation, str):
            task_raw["conversation_id"] = conversation
        try:
            parsed = parse_ingress(task_raw)
        except InvalidTask as exc:
            errors.extend(FieldError(field=f"task.{e['field']}", message=e["message"])
                          for e in exc.errors)  # fmt: skip
        else:
            if isinstance(parsed, TaskSpec):
                spec = parsed.model_copy(update={"source": "schedule"})
                errors.extend(_own_correlation(parsed))
            else:
                message = "a schedule creates one task, not a workflow"
                errors.append(FieldError(field="task.steps", message=message))
    rest = {k: v for k, v in raw.items() if k != "task"}
    try:
        checked = ScheduleSpec.model_validate({**rest, "task": spec or _PLACEHOLDER})
    except ValidationError as exc:
        errors.extend(
            FieldError(field=".".join(str(p) for p in e["loc"]) or "(root)", message=e["msg"])
            for e in exc.errors()
        )
        checked = None
    if checked is not None:
        errors.extend(check_cron(checked.cron, checked.tz, time.time() if now is None else now))
        if spec is not None and spec.conversation_id != checked.conversation_id:
            message = f"the task's conversation must be the schedule's ({checked.conversation_id})"
            errors.append(FieldError(field="task.conversation_id", message=message))
    if errors:
        raise InvalidTask(errors)
    assert checked is not None
    return checked


# a scheduled task is correlated by its schedule and due time (idempotency key
# ``schedule:<id>:<due>``): one workflow step or key for every due time would collide
_PER_RUN = ("workflow_id", "step_id", "idempotency_key")


def _own_correlation(spec: TaskSpec) -> list[FieldError]:
    """Refuse the correlation fields each task of a schedule gets from it."""
    return [
        FieldError(field=f"task.{name}", message="set per due time by the schedule; leave it out")
        for name in _PER_RUN
        if getattr(spec, name) is not None
    ]


_PLACEHOLDER = TaskSpec(method="placeholder", conversation_id="placeholder")


# --- records -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScheduleRun:
    """What happened at one due time: ``fired`` (``task_id`` names the task, ``task_state``
    its state now, None once retention removed it), ``missed`` (nothing ran then) or
    ``refused`` (the stored task no longer passes ingress; ``message`` says why)."""

    due_at: float
    result: RunResult
    recorded_at: float
    task_id: str | None = None
    task_state: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class ScheduleRecord:
    """A stored schedule; ``next_due_at`` is computed when it is read."""

    id: str
    cron: str
    tz: str
    conversation_id: str
    task: dict[str, Any]
    name: str | None
    paused: bool
    created_at: float
    updated_at: float
    armed_at: float  # due times before this never fire (created, or resumed, then)
    last_due_at: float | None  # the latest due time handled (fired, missed or refused)
    missed_count: int
    last_run: ScheduleRun | None = None
    next_due_at: float | None = None

    @property
    def method(self) -> str:
        """The method of the task it creates."""
        return str(self.task.get("method", ""))


def schedule_from(data: dict[str, Any]) -> ScheduleRecord:
    """The ``ScheduleRecord`` a ``plain(record)`` document describes."""
    names = {f.name for f in dataclasses.fields(ScheduleRecord)}
    kwargs = {k: v for k, v in data.items() if k in names}
    run = data.get("last_run")
    if run:
        run_names = {f.name for f in dataclasses.fields(ScheduleRun)}
        kwargs["last_run"] = ScheduleRun(**{k: v for k, v in run.items() if k in run_names})
    return ScheduleRecord(**kwargs)


def with_next_due(record: ScheduleRecord, now: float) -> ScheduleRecord:
    """``record`` with ``next_due_at`` filled (None while paused)."""
    if record.paused:
        return dataclasses.replace(record, next_due_at=None)
    after = max(now, record.armed_at, record.last_due_at or 0.0)
    return dataclasses.replace(record, next_due_at=next_due(record.cron, record.tz, after))


# --- the tick ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TickPlan:
    """What one tick does for one schedule: fire ``fire`` (None: nothing to fire), record
    ``missed`` (newest last), and count ``missed_total`` missed due times in all."""

    fire: float | None
    missed: tuple[float, ...]
    missed_total: int
    counted_all: bool = True  # False: more were missed than ``MISSED_COUNTED`` (a lower bound)

    @property
    def latest(self) -> float | None:
        """The latest due time this tick handles (the schedule's new ``last_due_at``)."""
        handled = [t for t in (self.fire, *self.missed) if t is not None]
        return max(handled) if handled else None


def plan_tick(record: ScheduleRecord, now: float, grace_s: float) -> TickPlan:
    """The due times of ``record`` in (since, now], since its arming or its last handled due
    time, and what to do with each (the module docstring's rule)."""
    # lazy: croniter is loaded only by the verbs that use it (start-up)
    from croniter import CroniterError

    empty = TickPlan(None, (), 0)
    since = max(record.armed_at, record.last_due_at or 0.0)
    if record.paused or now <= since:
        return empty
    try:
        zone = ZoneInfo(record.tz)
        back = _cron_iter(record.cron, zone, now + 1e-6)
        latest: list[float] = []  # newest first
        while len(latest) < MISSED_RECORDED + 1:
            due = float(back.get_prev(float))
            if due <= since:
                break
            if not repeated(record.cron, zone, due):
                latest.append(due)
        if not latest:
            return empty
        more = 0  # due times between since and the oldest of these
        if len(latest) == MISSED_RECORDED + 1:
            more = _count_between(record, since, latest[-1])
    except (CroniterError, ValueError, KeyError, ZoneInfoNotFoundError):
        return empty
    newest = latest[0]
    fire = newest if now - newest <= grace_s else None
    missed = latest[1:] if fire is not None else latest
    recorded = tuple(sorted(missed[:MISSED_RECORDED]))
    total = len(latest) + more - (1 if fire is not None else 0)
    return TickPlan(fire, recorded, total, counted_all=more < MISSED_COUNTED)


def _count_between(record: ScheduleRecord, since: float, before: float) -> int:
    """Due times in (since, before), counted up to ``MISSED_COUNTED``."""
    zone = ZoneInfo(record.tz)
    forward = _cron_iter(record.cron, zone, since)
    count = 0
    while count < MISSED_COUNTED:
        due = float(forward.get_next(float))
        if due >= before:
            break
        count += 0 if repeated(record.cron, zone, due) else 1
    return count


def utc_text(ts: float | None) -> str:
    """``ts`` as an ISO-8601 UTC time (``-`` for None)."""
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
