"""What every operation of ``phoned.daemon.lifecycle.ops`` is: ``Op`` (a route, a JSON body and
an answer) and ``TaskOp`` (a transition of one task row, ``Change``), and the ``Facts``
a transition may ask of its store."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar, cast

from phoned.daemon.lifecycle import rules
from phoned.daemon.lifecycle.records import StopSummary, TaskRecord
from phoned.daemon.lifecycle.rules import Row
from phoned.daemon.lifecycle.wire import (
    journal_from,
    plain,
    task_from,
)

R = TypeVar("R")


class Facts(Protocol):
    """What a transition may need beyond the row: the store reads it only when asked."""

    def open_entries(self, task_id: str) -> int:
        """Journal entries of the task without a confirmed outcome."""
        ...

    def summary(self, row: Row) -> str:
        """The stored stop summary of the task as it is (``rules.summary_json``)."""
        ...


class Offline:
    """The facts of a daemon that cannot ask its plane: no open entry, nothing done (the
    plane checks both again when the report arrives)."""

    def open_entries(self, task_id: str) -> int:
        return 0

    def summary(self, row: Row) -> str:
        return rules.summary_json(StopSummary(not_done=(row["method"],)))


class Change(NamedTuple):
    """The row to write, and whether its event asks for a decision (None: by its state).
    ``after is before`` means nothing to write: the record as it is answers."""

    after: Row
    decision: bool | None = None


class Op(Generic[R]):
    """One operation; ``R`` is what applying it answers."""

    route: ClassVar[str]  # path template under the plane's base URL ("": not on the wire)
    method: ClassVar[str] = "POST"  # the HTTP method of the route
    answer_key: ClassVar[str] = "task"  # the key of the answer in the plane's JSON

    def path(self) -> str:
        """The route filled from the operation's fields."""
        return self.route.format(**{f.name: getattr(self, f.name) for f in _fields(self)})

    def to_wire(self) -> dict[str, Any] | None:
        """The JSON body of the request (None: the route takes none)."""
        raise NotImplementedError

    def query(self) -> dict[str, Any] | None:
        """The query parameters of the request (None: none)."""
        return None

    def answer_json(self, result: R) -> dict[str, Any]:
        """The plane's answer carrying ``result``."""
        return {self.answer_key: plain(result)}

    def answer_from(self, body: Mapping[str, Any]) -> R:
        """The result an ``answer_json`` body carries."""
        value = body[self.answer_key]
        if self.answer_key == "task":
            return cast(R, task_from(value))
        if self.answer_key == "entry":
            return cast(R, journal_from(value))
        return cast(R, str(value))


def _fields(op: object) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(op)  # type: ignore[arg-type]


class TaskOp(Op[TaskRecord]):
    """An operation that moves one task row through ``transition``."""

    now: float  # when it happens (POSIX s), as every verb takes it

    def row_id(self) -> str:
        """The id of the task it moves."""
        raise NotImplementedError

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        """The change to write, or the named error (see the module docstring)."""
        raise NotImplementedError
