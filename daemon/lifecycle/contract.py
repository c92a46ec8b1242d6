"""The canonical task contract ``a2a-task-orchestration-v1`` and its validation.

``validate_task(raw)`` and ``validate_workflow(raw)`` are the only ways in: they
return frozen specs with method-checked params, or raise ``InvalidTask`` listing every
refused field by dotted path (``params.mode``, ``steps.1.params.to``).
"""

from __future__ import annotations

from typing import Any, Literal

from phoned.daemon.lifecycle.approval_policy import policy_method_error
from phoned.daemon.lifecycle.errors import FieldError, InvalidTask
from phoned.device.actions.method import params_errors
from phoned.device.actions.registry import METHOD_PARAMS
from phoned.device.actions.registry import method as declared
from pydantic import BaseModel, ConfigDict, Field, ValidationError

ContractVersion = Literal["a2a-task-orchestration-v1"]
CONTRACT_VERSION: ContractVersion = "a2a-task-orchestration-v1"

Source = Literal["cloud", "voice", "cli", "schedule"]

# The planner's own words on why it asks (shown verbatim, escaped, on the approval card).
RATIONALE_MAX = 2000


class Timeouts(BaseModel):
    """Per-task timeouts in seconds (SPEC §3 defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dispatch_s: float = Field(default=300.0, gt=0)
    run_s: float = Field(default=600.0, gt=0)
    approval_ttl_s: float = Field(default=900.0, gt=0)
    permission_ttl_s: float = Field(default=600.0, gt=0)
    # How long a task may wait queued (no worker claimed it, e.g. its phone is not attached)
    # before the sweeper fails it; None: no limit. Hosts fill it from ``timeouts.queued``.
    queued_s: float | None = Field(default=None, gt=0)


class TaskSpec(BaseModel):
    """A task as submitted. ``params`` is already checked against ``method``'s schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    contract_version: ContractVersion = CONTRACT_VERSION
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    conversation_id: str = Field(min_length=1, max_length=200)
    device: str | None = None
    source: Source = "cli"
    workflow_id: str | None = None
    step_id: str | None = None
    plan_id: str | None = None
    output_key: str | None = None
    wait_policy: Literal["completed", "accepted"] = "completed"
    completion_target: str | None = None
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200)
    max_attempts: int = Field(default=2, ge=1, le=10)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    # the planner asks for a person's approval of a preview before the effect (a changing
    # method that can show one: ``daemon/lifecycle/approval_policy.py``)
    require_approval: bool = False
    rationale: str | None = Field(default=None, min_length=1, max_length=RATIONALE_MAX)
    # seed-004 envelope hints, kept so the ingress mapping loses nothing
    execution_mode: str | None = None
    queue: str | None = None
    force_task_manager: bool | None = None


class StepSpec(BaseModel):
    """One workflow step: the per-step part of a task spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    step_id: str | None = None
    output_key: str | None = None
    completion_target: str | None = None
    max_attempts: int = Field(default=2, ge=1, le=10)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    require_approval: bool = False
    rationale: str | None = Field(default=None, min_length=1, max_length=RATIONALE_MAX)


class WorkflowSpec(BaseModel):
    """An ordered list of steps that run strictly in order on one device."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    contract_version: ContractVersion = CONTRACT_VERSION
    conversation_id: str = Field(min_length=1, max_length=200)
    workflow_id: str | None = None
    workflow_name: str | None = None
    plan_id: str | None = None
    device: str | None = None
    source: Source = "cli"
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200)
    execution_mode: str | None = None
    queue: str | None = None
    force_task_manager: bool | None = None
    steps: list[StepSpec] = Field(min_length=1, max_length=100)


def _dotted(prefix: str, loc: tuple[int | str, ...]) -> str:
    parts = [prefix, *(str(p) for p in loc)] if prefix else [str(p) for p in loc]
    return ".".join(parts) or "(root)"


def _errors(exc: ValidationError, prefix: str = "") -> list[FieldError]:
    return [
        FieldError(field=_dotted(prefix, tuple(e["loc"])), message=e["msg"]) for e in exc.errors()
    ]


def _params_loc(field: str) -> tuple[str, ...]:
    """Where a params error sits in the task: ``params.<field>``, or ``params`` itself."""
    return ("params",) if field == "params" else ("params", *field.split("."))


def check_params(method: str, params: Any, prefix: str) -> tuple[dict[str, Any], list[FieldError]]:
    """Validate ``params`` for ``method``; return (normalised params, errors under ``prefix``)."""
    model = METHOD_PARAMS.get(method)
    if model is None:
        known = ", ".join(sorted(METHOD_PARAMS))
        return {}, [
            FieldError(
                field=_dotted(prefix, ("method",)), message=f"unknown method; one of {known}"
            )
        ]
    try:
        checked = model.model_validate(params)
    except ValidationError as exc:
        return {}, [
            FieldError(field=_dotted(prefix, _params_loc(field)), message=message)
            for field, message in params_errors(model, exc)
        ]
    return checked.model_dump(exclude_none=True), []


# observed values a method's target namer is probed with: a namer whose names follow
# the free-form ones names an open family (``dnd.<mode>``), else a closed set
_PROBES: tuple[Any, ...] = (True, False, None, {"granted": True}, {"granted": False})
_FREE = ("probe-a", "probe-b")


def reportable_targets(method: str, params: dict[str, Any]) -> tuple[str, frozenset[str]]:
    """What ``method`` can report as observed: (its domain, the closed set of names, or an
    empty set when any ``<domain>.<value>`` name may be observed)."""

    namer = declared(method).target
    domain = method.split(".", 1)[0]
    free = {namer(params, value) for value in _FREE}
    if len(free) > 1:
        return domain, frozenset()
    return domain, frozenset({namer(params, value) for value in _PROBES} | free)


def check_completion_target(
    method: str, params: dict[str, Any], target: str | None, field: str
) -> list[FieldError]:
    """Refuse a completion target ``method`` can never report (``movement.arrived`` on
    ``dnd.set``): the task could only fail after its effect ran."""
    if target is None or method not in METHOD_PARAMS:
        return []
    domain, names = reportable_targets(method, params)
    if names and target not in names:
        one_of = ", ".join(sorted(names))
        return [
            FieldError(field=field, message=f"{method} never reports {target!r}; one of {one_of}")
        ]
    if not target.startswith(f"{domain}.") or target == f"{domain}.":
        return [
            FieldError(
                field=field,
                message=f"{method} never reports {target!r}; its targets are {domain}.<value>",
            )
        ]
    return []


def check_require_approval(method: str, asked: bool, field: str) -> list[FieldError]:
    """Refuse ``require_approval: true`` on a method that would never ask: a read (it
    changes nothing) or a change that cannot show a preview yet."""
    if not asked or method not in METHOD_PARAMS:
        return []

    error = policy_method_error(method)
    return [] if error is None else [FieldError(field=field, message=error)]


def validate_task(raw: dict[str, Any]) -> TaskSpec:
    """Return the checked spec of a canonical task, or raise ``InvalidTask``."""
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        raise InvalidTask(_errors(exc)) from None
    params, errors = check_params(spec.method, spec.params, "")
    if errors:
        raise InvalidTask(errors)
    errors = check_completion_target(
        spec.method, params, spec.completion_target, "completion_target"
    ) + check_require_approval(spec.method, spec.require_approval, "require_approval")
    if errors:
        raise InvalidTask(errors)
    return spec.model_copy(update={"params": params})


def validate_workflow(raw: dict[str, Any]) -> WorkflowSpec:
    """Return the checked spec of a workflow (every step's params), or raise ``InvalidTask``."""
    try:
        spec = WorkflowSpec.model_validate(raw)
    except ValidationError as exc:
        raise InvalidTask(_errors(exc)) from None
    steps: list[StepSpec] = []
    errors: list[FieldError] = []
    for index, step in enumerate(spec.steps):
        params, step_errors = check_params(step.method, step.params, f"steps.{index}")
        errors.extend(step_errors)
        if not step_errors:
            field = f"steps.{index}.completion_target"
            errors.extend(
                check_completion_target(step.method, params, step.completion_target, field)
            )
            asked = f"steps.{index}.require_approval"
            errors.extend(check_require_approval(step.method, step.require_approval, asked))
        steps.append(step.model_copy(update={"params": params}))
    if errors:
        raise InvalidTask(errors)
    return spec.model_copy(update={"steps": steps})


def step_task(workflow: WorkflowSpec, step: StepSpec) -> TaskSpec:
    """The task spec of one step: the step's fields plus the workflow's envelope."""
    return TaskSpec(
        method=step.method,
        params=step.params,
        conversation_id=workflow.conversation_id,
        device=workflow.device,
        source=workflow.source,
        workflow_id=workflow.workflow_id,
        step_id=step.step_id,
        plan_id=workflow.plan_id,
        output_key=step.output_key,
        completion_target=step.completion_target,
        max_attempts=step.max_attempts,
        timeouts=step.timeouts,
        require_approval=step.require_approval,
        rationale=step.rationale,
        execution_mode=workflow.execution_mode,
        queue=workflow.queue,
        force_task_manager=workflow.force_task_manager,
    )
