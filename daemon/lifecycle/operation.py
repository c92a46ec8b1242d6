"""What every operation of ``phoned.daemon.lifecycle.ops`` is: ``Op`` (a route, a JSON body and
an answer) and ``TaskOp`` (a transition of one task row, ``Change``), and the ``Facts``
a transition may ask of its store.

An operation is declared once, as a frozen dataclass (docs/operations.md): its fields,
typed with the constraints the wire checks (``Annotated[float, Field(ge=5)]``), are its
request body. From that one declaration come the body's Pydantic model (``body_model``:
the plane's validation and its OpenAPI schema), the body a client sends (``to_wire``), the
operation a route rebuilds from a validated body (``from_wire``) and, by ``offline``, how a
daemon's ``HttpStore`` delivers it. Fields named in the route template travel in the
path; ``ticket`` travels without its task id (the path has it) and ``now`` as ``at``, both
in the ``ReportBody`` every report extends; an operation without a ticket is timed by the
plane's clock.
"""

from __future__ import annotations

import dataclasses
import string
import typing
from collections.abc import Mapping
from enum import Enum
from typing import Any, ClassVar, Generic, Literal, NamedTuple, Protocol, TypeVar, cast

from phoned.daemon.lifecycle import rules
from phoned.daemon.lifecycle.records import StopSummary, TaskRecord, Ticket
from phoned.daemon.lifecycle.rules import Row
from phoned.daemon.lifecycle.wire import (
    ReportBody,
    WireBody,
    journal_from,
    plain,
    task_from,
    ticket_json,
)
from pydantic import BaseModel, Field, create_model

R = TypeVar("R")
S = TypeVar("S", bound="Op[Any]")


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
    ``after is before`` means nothing to write: the record as it is answers. ``revision``:
    the params of a new revision the store records with the change (``Amend``)."""

    after: Row
    decision: bool | None = None
    revision: dict[str, Any] | None = None


# How a daemon on a control plane (``phoned.daemon.store.http_store``) delivers an operation:
# ``spool``: through its durable outbox, the answer predicted by the transition while the
# plane is down; ``retry``: at once, retried while the plane is down (it needs the plane's
# answer); ``direct``: at once, ``StoreUnavailable`` while the plane is down; ``local``:
# nothing to send (the plane learns it otherwise); ``planner``: not a daemon's operation.
Delivery = Literal["spool", "retry", "direct", "local", "planner"]


class Op(Generic[R]):
    """One operation; ``R`` is what applying it answers."""

    route: ClassVar[str]  # path template under the plane's base URL ("": not on the wire)
    method: ClassVar[str] = "POST"  # the HTTP method of the route
    answer_key: ClassVar[str] = "task"  # the key of the answer in the plane's JSON
    headline: ClassVar[str] = ""  # the route's summary in OpenAPI ("": the docstring's first line)
    offline: ClassVar[Delivery] = "planner"  # how a daemon's HttpStore delivers it
    plane_clock: ClassVar[bool] = False  # the plane times it (else a report's ``at``)
    wakes: ClassVar[bool] = True  # applying it wakes the daemons waiting for work
    own_route: ClassVar[bool] = False  # served by a route written for it, not its family's

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        DECLARED.append(cls)

    @classmethod
    def title(cls) -> str:
        """``headline``, else the first line of the docstring."""
        return cls.headline or (cls.__doc__ or cls.__name__).strip().splitlines()[0]

    def path(self) -> str:
        """The route filled from the operation's fields (a ticket gives its task id)."""
        values = {f.name: getattr(self, f.name) for f in _fields(self)}
        ticket = values.get("ticket")
        if isinstance(ticket, Ticket):
            values.setdefault("task_id", ticket.task_id)
        return self.route.format(**values)

    @classmethod
    def path_names(cls) -> frozenset[str]:
        """The names the route template takes from the path."""
        return frozenset(n for _, n, _, _ in string.Formatter().parse(cls.route) if n)

    @classmethod
    def body_fields(cls) -> dict[str, tuple[Any, Any]]:
        """The fields the request body carries: ``{name: (type, default)}`` (``...``: required)."""
        cached = _BODY_FIELDS.get(cls)
        if cached is None:
            hints = typing.get_type_hints(cls, include_extras=True)
            cached = _BODY_FIELDS[cls] = {
                f.name: (_wire_form(hints[f.name]) or hints[f.name], _default(f))
                for f in _fields(cls)
                if f.init and f.name not in cls.path_names() | {"now", "ticket"}
            }
        return cached

    @classmethod
    def body_model(cls) -> type[WireBody]:
        """The Pydantic model of the request body (validation, OpenAPI), built once."""
        model = _MODELS.get(cls)
        if model is None:
            base = ReportBody if "ticket" in {f.name for f in _fields(cls)} else WireBody
            model = _MODELS[cls] = create_model(  # type: ignore[call-overload]
                f"{cls.__name__}Body", __base__=base, __doc__=cls.__doc__, **cls.body_fields()
            )
        return model

    def to_wire(self) -> dict[str, Any] | None:
        """The JSON body of the request (None: the route takes none)."""
        return self.body_json()

    def body_json(self) -> dict[str, Any]:
        """The body its declaration makes: its body fields, and a ticket's claim and ``at``."""
        doc = {
            name: _wire(getattr(self, name), type_)
            for name, (type_, _) in self.body_fields().items()
        }
        ticket = getattr(self, "ticket", None)
        if isinstance(ticket, Ticket):
            return {"ticket": ticket_json(ticket), "at": getattr(self, "now", None), **doc}
        return doc

    @classmethod
    def from_wire(cls: type[S], body: BaseModel, task: TaskRecord | None = None, **given: Any) -> S:
        """The operation a validated ``body_model`` body describes, with the values the
        route ``given`` (path fields, the checked ``ticket``, ``now``); a field sent in a
        ``WireForm`` is completed from ``task``, the task the route checked."""
        hints = typing.get_type_hints(cls, include_extras=True)
        values = {}
        for name in cls.body_fields():
            value, form = getattr(body, name), _wire_form(hints[name], meta=True)
            values[name] = value if form is None else form.complete(value, task)
        return cls(**given, **values)

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


# every operation class, in the order declared: the plane serves the routes of the families
# it knows from here (``phoned.daemon.server.routes_daemon``, ``routes_planner``)
DECLARED: list[type[Op[Any]]] = []
_BODY_FIELDS: dict[type, dict[str, tuple[Any, Any]]] = {}
_MODELS: dict[type, type[WireBody]] = {}


@dataclasses.dataclass(frozen=True)
class WireForm:
    """``Annotated[T, WireForm(Model, complete)]``: a field the body carries as ``Model``
    (the parts of ``T`` the plane does not know already) and ``complete(model, task)``
    makes whole again from the task the route checked."""

    model: type[BaseModel]
    complete: Any  # (Model instance, TaskRecord | None) -> T


def _wire_form(hint: Any, *, meta: bool = False) -> Any:
    """The wire model of an ``Annotated[..., WireForm]`` hint (``meta``: the ``WireForm``);
    None for any other hint."""
    for extra in getattr(hint, "__metadata__", ()):
        if isinstance(extra, WireForm):
            return extra if meta else extra.model
    return None


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return Field(default_factory=f.default_factory)
    return ...


def _wire(value: Any, form: Any = None) -> Any:
    """A field's value as the body carries it: by its ``WireForm`` model's fields, a
    dataclass by its constructor's fields (a derived field such as ``Failure.retryable`` is
    the plane's to derive)."""
    if isinstance(form, type) and issubclass(form, BaseModel):
        return {name: _wire(getattr(value, name)) for name in form.model_fields}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {f.name: _wire(getattr(value, f.name)) for f in fields if f.init}
    if isinstance(value, Enum):
        return value.value
    return plain(value)


class TaskOp(Op[TaskRecord]):
    """An operation that moves one task row through ``transition``."""

    now: float  # when it happens (POSIX s), as every verb takes it

    def row_id(self) -> str:
        """The id of the task it moves."""
        raise NotImplementedError

    def transition(self, row: Row, now: float, facts: Facts) -> Change:
        """The change to write, or the named error (see the module docstring)."""
        raise NotImplementedError
