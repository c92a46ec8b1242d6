"""One task method's declaration: every fact the daemon keeps about it, in one record.

Each action module ends with ``DECLARED``, a tuple of ``Method`` naming its own functions;
``device/actions/registry.py`` collects them and builds every table the rest of phoned
reads (``docs/methods-registry.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from phoned.device.probes import Capabilities, Probe
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from phoned.device.actions.base import ActionContext, Outcome

P = TypeVar("P", bound=BaseModel)

TargetNamer = Callable[[dict[str, Any], Any], str]  # (task params, observed) -> target name


@dataclass(frozen=True)
class Method(Generic[P]):
    """A task method: its params model, its action, and what the daemon must know of it."""

    name: str  # "dnd.set"
    params: type[P]  # validated at ingress; the action receives an instance
    run: Callable[[ActionContext, P], Outcome]  # read (and apply), verify by read-back
    target: TargetNamer  # names what a met run observed, for the completion target
    # (ctx, params, the whole hint with its journal entry) -> happened / did_not_happen /
    # cannot_tell; None: the method has no effect to reconcile
    reconcile: Callable[[ActionContext, P, dict[str, Any]], str] | None = None
    # the probes its run and its ``needs`` read (``device/probes.py``); collected like methods
    probes: tuple[Probe, ...] = ()
    # judged from the results of ``probes``; None: nothing probed is required
    needs: Callable[[Capabilities], bool] | None = None
    approval: bool = False  # the effect waits for an explicit approval
    # when the owner's policy asks (``daemon/lifecycle/approval_policy.py``), its run pauses
    # for an approval of a preview of the change (the setting methods: ``setting.Change``)
    previews: bool = False
    idempotent: bool = True  # False: once it happened, only verified, never repeated
    screen: bool = False  # depends on the screen: full snapshots, draft-edit staleness
    sensitive: tuple[str, ...] = ()  # params whose values never reach evidence or logs
    # the catalogue (`phoned methods`, MCP tools, docs/methods.md): one line each
    summary: str = ""  # what the method does
    reads: str = ""  # what it reads on the phone (its read-back)
    changes: str = ""  # what it changes on the phone; "" for a read
    # the generated side files (`phoned methods --write`, docs/structure.md):
    # the task scripts/ci-emulator.sh runs on an emulator; None: the catalogue example
    emulator_params: dict[str, Any] | None = field(default=None, compare=False)
    actions_row: ActionsRow | None = None  # its module's docs/actions.md row (one method has it)

    def __post_init__(self) -> None:
        unknown = set(self.sensitive) - set(self.params.model_fields)
        if unknown:
            raise ValueError(f"{self.name}: sensitive params {sorted(unknown)} are not params")
        if self.needs is not None and not self.probes:
            raise ValueError(f"{self.name}: needs reads probes; declare them (probes=...)")
        if self.approval and self.reconcile is None:
            raise ValueError(f"{self.name}: an approved effect needs a reconciler")
        if self.previews and not self.changes:
            raise ValueError(f"{self.name}: a preview is of a change; a read has none")

    def supported_on(self, capabilities: Capabilities) -> bool:
        """Whether a phone with ``capabilities`` can carry it out: every declared probe ran
        there, and ``needs`` (if any) holds of the results."""
        if any(p.name not in capabilities for p in self.probes):
            return False
        return self.needs is None or self.needs(capabilities)

    def validate(self, params: dict[str, Any]) -> P | tuple[str, str]:
        """The typed params, or ``(field, message)`` for the first thing wrong with them.

        An error of the whole model (``give exactly one of level or percent``) names the
        first of the model's fields its message mentions.
        """
        try:
            return self.params.model_validate(params)
        except ValidationError as exc:
            return params_errors(self.params, exc)[0]

    def secrets(self, params: P) -> list[str]:
        """The values of the sensitive params (never in evidence or logs)."""
        return [str(v) for name in self.sensitive if (v := getattr(params, name, None))]


def params_errors(model: type[BaseModel], exc: ValidationError) -> list[tuple[str, str]]:
    """``(field, message)`` for each thing wrong with a method's params: the field's dotted
    path, and pydantic's message without its ``Value error,`` prefix. An error of the
    whole model (``give exactly one of level or percent``) names the first of the model's
    fields its message mentions (``params`` when it mentions none)."""
    found = []
    for error in exc.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        loc = [str(part) for part in error["loc"]]
        if not loc:
            named = (f for f in model.model_fields if re.search(rf"\b{f}\b", message))
            loc = [next(named, "params")]
        found.append((".".join(loc), message))
    return found


def fixed(name: str) -> TargetNamer:
    """A target name that does not depend on what was observed (``sms.sent``)."""
    return lambda params, observed: name


@dataclass(frozen=True)
class ActionsRow:
    """The row of ``docs/actions.md`` for one action module (Markdown; ``|`` is escaped
    when the table is written)."""

    reads: str  # the commands it reads the state with
    effect: str  # the commands of its effect; "none" for a module that only reads
    verified: str  # how the effect is verified by read-back; "-" for a read

    @classmethod
    def read_only(cls, reads: str) -> ActionsRow:
        """The row of a module that only reads: no effect, so nothing to verify."""
        return cls(reads, effect="none", verified="-")
