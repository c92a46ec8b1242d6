"""Ingress: the seed-004 cloud shape mapped losslessly onto the canonical contract.

Seed 004 (Cloud·On-device·TaskManager closed loop, §3) sends a single task as
``{taskMethod, executionMode, contract_version, cloud_workflow_id, cloud_step_id,
cloud_plan_id, cloud_output_key, wait_policy, params}`` and a workflow as
``{method: submitWorkflow, source: CLOUD, queue, taskQueue, forceTaskManager,
workflowName, executionMode, subTasks: [{taskMethod, ..., completionTarget}]}``, with
step parameters flattened beside ``taskMethod`` and ``payload.subTasks`` as a mirror.
``parse_ingress`` accepts both that shape and the canonical one.

Its errors say what would work where a near name exists: an unknown method or field names
the closest known one (``did you mean dnd.set?``, ``did you mean conversation_id?``), a
boolean names its two words.
"""

from __future__ import annotations

import difflib
from typing import Any

from phoned.daemon.lifecycle.contract import (
    StepSpec,
    TaskSpec,
    Timeouts,
    WorkflowSpec,
    validate_task,
    validate_workflow,
)
from phoned.daemon.lifecycle.errors import FieldError, InvalidTask
from phoned.device.actions.registry import METHOD_PARAMS

# seed-004 name -> canonical name, for the task/workflow envelope
_ENVELOPE = {
    "taskMethod": "method",
    "cloud_workflow_id": "workflow_id",
    "cloud_step_id": "step_id",
    "cloud_plan_id": "plan_id",
    "cloud_output_key": "output_key",
    "completionTarget": "completion_target",
    "executionMode": "execution_mode",
    "forceTaskManager": "force_task_manager",
    "workflowName": "workflow_name",
    "queue": "queue",
    "requireApproval": "require_approval",
    "rationale": "rationale",
}
# seed-004 name -> canonical name, inside one subTask; other keys are flattened params
_STEP = {
    "taskMethod": "method",
    "cloud_step_id": "step_id",
    "cloud_output_key": "output_key",
    "completionTarget": "completion_target",
    "params": "params",
    "max_attempts": "max_attempts",
    "timeouts": "timeouts",
}
_VERBS = {"submitTask", "submitWorkflow"}


def is_seed004(raw: dict[str, Any]) -> bool:
    """True when ``raw`` uses the seed-004 shape rather than the canonical one."""
    method = raw.get("method")
    return (
        "taskMethod" in raw or "subTasks" in raw or (isinstance(method, str) and method in _VERBS)
    )


def parse_ingress(raw: dict[str, Any]) -> TaskSpec | WorkflowSpec:
    """Validate a task or workflow in either shape; raise ``InvalidTask`` naming fields."""
    if not isinstance(raw, dict):
        raise InvalidTask([FieldError(field="(root)", message="expected a JSON object")])
    _refuse_nul(raw)
    try:
        return _parse(raw)
    except InvalidTask as exc:
        raise InvalidTask([_hinted(e, raw) for e in exc.errors]) from None


def _parse(raw: dict[str, Any]) -> TaskSpec | WorkflowSpec:
    if not is_seed004(raw):
        return validate_workflow(raw) if "steps" in raw else validate_task(raw)
    canonical = _from_seed004(raw)
    try:
        return validate_workflow(canonical) if "steps" in canonical else validate_task(canonical)
    except InvalidTask as exc:  # name the fields as the caller submitted them
        raise InvalidTask([_as_submitted(e, raw) for e in exc.errors]) from None


_NOT_PERMITTED = "Extra inputs are not permitted"
_NOT_BOOLEAN = "Input should be a valid boolean"


def _hinted(error: FieldError, raw: dict[str, Any]) -> FieldError:
    """``error`` with what would work added to its message, when something near is known."""
    parts = error["field"].split(".")
    message = error["message"]
    if parts[-1] in ("method", "taskMethod") and message.startswith("unknown method"):
        given = _at(raw, parts)
        near = _nearest(given, METHOD_PARAMS) if isinstance(given, str) else None
        if near:
            message = message.replace("unknown method", f"unknown method (did you mean {near}?)", 1)
    elif message == _NOT_PERMITTED:
        near = _nearest(parts[-1], _names_at(raw, parts[:-1]))
        if near:
            message = f"{message} (did you mean {near}?)"
    elif message == _NOT_BOOLEAN:
        message = f"{message}: true or false"
    return FieldError(field=error["field"], message=message)


def _nearest(given: str, known: Any) -> str | None:
    """The known name closest to ``given`` (difflib's ratio at least 0.6), if any."""
    close = difflib.get_close_matches(given[:200], sorted(known), n=1, cutoff=0.6)
    return close[0] if close else None


def _at(raw: Any, parts: list[str]) -> Any:
    """The value at a dotted path of ``raw``, or None."""
    for part in parts:
        if isinstance(raw, dict):
            raw = raw.get(part)
        elif isinstance(raw, list) and part.isdigit() and int(part) < len(raw):
            raw = raw[int(part)]
        else:
            return None
    return raw


def _names_at(raw: dict[str, Any], parent: list[str]) -> set[str]:
    """The field names the object at ``parent`` may hold (a task, a step, params, timeouts)."""
    if not parent:
        workflow = "steps" in raw or "subTasks" in raw
        names = set(WorkflowSpec.model_fields if workflow else TaskSpec.model_fields)
        return names | (set(_ENVELOPE) if is_seed004(raw) else set())
    if parent[-1] == "timeouts":
        return set(Timeouts.model_fields)
    if parent[-1] == "params":
        owner = _at(raw, parent[:-1])
        method = owner.get("taskMethod", owner.get("method")) if isinstance(owner, dict) else None
        model = METHOD_PARAMS.get(method) if isinstance(method, str) else None
        return set(model.model_fields) if model is not None else set()
    if len(parent) == 2 and parent[0] == "steps":
        return set(StepSpec.model_fields)
    if len(parent) == 2 and parent[0] == "subTasks":  # its params are flattened beside it
        return set(_STEP) | _names_at(raw, [*parent, "params"])
    return set()


_ENVELOPE_BACK = {canonical: seed for seed, canonical in _ENVELOPE.items()}
_STEP_BACK = {canonical: seed for seed, canonical in _STEP.items()}


def _as_submitted(error: FieldError, raw: dict[str, Any]) -> FieldError:
    """``error`` with its canonical field path renamed to the seed-004 name ``raw`` used."""
    parts = error["field"].split(".")
    if parts[0] == "steps" and "subTasks" in raw:
        parts[0] = "subTasks"
        subtasks = raw["subTasks"]
        if len(parts) > 2 and parts[1].isdigit() and int(parts[1]) < len(subtasks):
            sub = subtasks[int(parts[1])]
            sub = sub if isinstance(sub, dict) else {}
            if parts[2] == "params" and "params" not in sub:
                del parts[2]  # the step's params were flattened beside taskMethod
            else:
                seed = _STEP_BACK.get(parts[2], parts[2])
                parts[2] = seed if seed in sub else parts[2]
    else:
        seed = _ENVELOPE_BACK.get(parts[0], parts[0])
        parts[0] = seed if seed in raw else parts[0]
    return FieldError(field=".".join(parts), message=error["message"])


def _holds_nul(value: Any) -> bool:
    """Whether any string or key in ``value`` (dicts, lists and tuples) holds a NUL."""
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return True
        elif isinstance(value, dict):
            if any(isinstance(key, str) and "\x00" in key for key in value):
                return True
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
    return False


def _refuse_nul(raw: dict[str, Any]) -> None:
    """InvalidTask naming every field (or key) holding a NUL character.

    No store keeps NUL in text (PostgreSQL refuses it outright), so it is refused here,
    before any store sees it, on every queue alike.
    """
    if not _holds_nul(raw):  # every request's case, told without naming any field (#35)
        return
    errors: list[FieldError] = []
    stack: list[tuple[str, Any]] = [("", raw)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str) and "\x00" in value:
            errors.append(FieldError(field=path, message="NUL character (\\u0000) not allowed"))
        elif isinstance(value, dict | list | tuple):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                label = str(key) or '""'  # an empty key is named, not left blank
                name = f"{path}.{label}" if path else label
                if isinstance(key, str) and "\x00" in key:
                    errors.append(FieldError(field=name.replace("\x00", "\\u0000"),
                                             message="NUL character (\\u0000) in a key"))  # fmt: skip
                else:
                    stack.append((name, item))
    if errors:
        raise InvalidTask(sorted(errors, key=lambda e: e["field"]))


def _from_seed004(raw: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    errors: list[FieldError] = []
    for key, value in raw.items():
        if key in ("method", "taskQueue", "payload", "subTasks"):
            continue
        out[_ENVELOPE.get(key, key)] = value
    if isinstance(out.get("source"), str):
        out["source"] = out["source"].lower()
    _check_mirror(raw, "queue", "taskQueue", errors)
    if "queue" not in raw and "taskQueue" in raw:
        out["queue"] = raw["taskQueue"]
    if raw.get("method") == "submitWorkflow" or "subTasks" in raw:
        out["steps"] = _steps(raw, errors)
    if errors:
        raise InvalidTask(errors)
    return out


def _check_mirror(raw: dict[str, Any], key: str, mirror: str, errors: list[FieldError]) -> None:
    if key in raw and mirror in raw and raw[key] != raw[mirror]:
        errors.append(FieldError(field=mirror, message=f"must mirror {key}"))


def _steps(raw: dict[str, Any], errors: list[FieldError]) -> list[dict[str, Any]]:
    subtasks = raw.get("subTasks")
    if not isinstance(subtasks, list) or not subtasks:
        errors.append(
            FieldError(field="subTasks", message="a non-empty root-level list is required")
        )
        return []
    payload = raw.get("payload")
    if isinstance(payload, dict) and "subTasks" in payload and payload["subTasks"] != subtasks:
        errors.append(FieldError(field="payload.subTasks", message="must mirror subTasks"))
    return [_step(i, s, errors) for i, s in enumerate(subtasks)]


def _step(index: int, sub: Any, errors: list[FieldError]) -> dict[str, Any]:
    if not isinstance(sub, dict):
        errors.append(FieldError(field=f"subTasks.{index}", message="expected an object"))
        return {}
    step = {_STEP[k]: v for k, v in sub.items() if k in _STEP}
    flat = {k: v for k, v in sub.items() if k not in _STEP}
    if flat and "params" in sub:
        names = ", ".join(sorted(flat))
        errors.append(FieldError(field=f"subTasks.{index}", message=f"unknown fields: {names}"))
    elif flat:
        step["params"] = flat
    return step
