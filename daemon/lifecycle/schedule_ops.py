"""The operations on schedules (``phoned.daemon.lifecycle.schedules``), as the task operations of
``phoned.daemon.lifecycle.ops`` are: frozen data with a wire form (route, body, answer) that a
store applies in one transaction.

=====================  ==================================================
operation              route
=====================  ==================================================
``AddSchedule``        ``POST /v1/schedules``
``RemoveSchedule``     ``DELETE /v1/schedules/{schedule_id}``
``PauseSchedule``      ``POST /v1/schedules/{schedule_id}/pause`` (``/resume``)
``FireSchedule``       not on the wire: a tick of the queue's own host
=====================  ==================================================

Removing, pausing and resuming quote the schedule's conversation (as steering a task
does): another conversation's schedule is ``ConversationMismatch``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from phoned.daemon.lifecycle.operation import Op
from phoned.daemon.lifecycle.schedules import ScheduleRecord, ScheduleSpec, TickPlan, schedule_from
from phoned.daemon.lifecycle.wire import plain


class _Answers(Op[ScheduleRecord]):
    """An operation answering one schedule (``{"schedule": {...}}``)."""

    answer_key: ClassVar[str] = "schedule"

    def answer_json(self, result: ScheduleRecord) -> dict[str, Any]:
        return {"schedule": plain(result)}

    def answer_from(self, body: Mapping[str, Any]) -> ScheduleRecord:
        return schedule_from(body["schedule"])


@dataclass(frozen=True)
class AddSchedule(_Answers):
    """Store ``spec`` as a new schedule, armed at ``now`` (no due time before fires)."""

    route: ClassVar[str] = "/v1/schedules"
    spec: ScheduleSpec
    now: float

    def path(self) -> str:
        return self.route

    def to_wire(self) -> dict[str, Any]:
        return self.spec.model_dump(mode="json", exclude_none=True)


@dataclass(frozen=True)
class RemoveSchedule(_Answers):
    """Remove the schedule and its runs (the tasks it created stay); the removed record."""

    route: ClassVar[str] = "/v1/schedules/{schedule_id}"
    method: ClassVar[str] = "DELETE"
    schedule_id: str
    conversation_id: str
    now: float

    def to_wire(self) -> None:
        return None

    def query(self) -> dict[str, Any]:
        return {"conversation_id": self.conversation_id}


@dataclass(frozen=True)
class PauseSchedule(_Answers):
    """Pause (``paused``) or resume the schedule. Resuming arms it at ``now``: the due
    times while it was paused are neither fired nor counted missed."""

    route: ClassVar[str] = "/v1/schedules/{schedule_id}/{verb}"
    schedule_id: str
    conversation_id: str
    paused: bool
    now: float

    def path(self) -> str:
        verb = "pause" if self.paused else "resume"
        return self.route.format(schedule_id=self.schedule_id, verb=verb)

    def to_wire(self) -> dict[str, Any]:
        return {"conversation_id": self.conversation_id}


@dataclass(frozen=True)
class FireResult:
    """What a ``FireSchedule`` did: ``won`` (False: another tick handled these due
    times first), the task it created (None: nothing fired, or refused) and why refused."""

    won: bool
    task_id: str | None = None
    refused: str | None = None


@dataclass(frozen=True)
class FireSchedule(Op[FireResult]):
    """Handle the due times ``plan`` names for the schedule whose last handled due time
    is ``expect_last_due``: record the missed ones, create the task of ``plan.fire``.

    Exactly once per due time across processes: the schedule row is updated guarded by
    ``expect_last_due`` and each run row has the unique key (schedule, due time), in the
    transaction that creates the task; a tick that lost the race changes nothing."""

    route: ClassVar[str] = ""
    schedule_id: str
    expect_last_due: float | None
    plan: TickPlan
    now: float

    def to_wire(self) -> None:
        return None
