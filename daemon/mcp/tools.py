"""The MCP tools phoned offers, as ``tools/list`` shows them: one per task method (its
params model's JSON Schema plus ``device``; annotations from the registry) and
``task_status``, ``task_amend`` (``task_amend.py``), ``task_cancel``, ``device_context``,
``queue_status``, and the schedule tools (``phoned.daemon.mcp.schedule_tools``)."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from phoned.daemon.lifecycle.contract import RATIONALE_MAX
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.mcp import task_amend
from phoned.daemon.mcp.images import IMAGE_ARGS, shows_screen
from phoned.daemon.mcp.schedule_tools import schedule_tools
from phoned.daemon.mcp.tool_shape import plain_tool
from phoned.daemon.planning import catalogue
from phoned.device.actions import registry as methods_registry  # REGISTRY read at call time
from phoned.device.actions.registry import method as declared

_DEVICE = {"type": "string", "description": "device serial (default: the server's --device, "
           "else any device the daemon serves)"}  # fmt: skip
_RATIONALE = {"type": "string", "maxLength": RATIONALE_MAX,
              "description": "why you ask for this, in your own words: shown verbatim to the "
              "person on the approval card"}  # fmt: skip
_REQUIRE_APPROVAL = {"type": "boolean", "description": "true: a person approves a preview "
                     "of the change (from what to what) before it is made"}  # fmt: skip


def _task_fields(method: str) -> dict[str, Any]:
    """The task fields a method's tool takes beside its params: a ``rationale`` for a
    change, ``require_approval`` for one that can show a preview (a read takes neither)."""

    found = declared(method)
    fields: dict[str, Any] = {}
    if found.changes:
        fields["rationale"] = _RATIONALE
    if found.previews:
        fields["require_approval"] = _REQUIRE_APPROVAL
    return fields


_TASK_ID = {"type": "string", "description": "the task id a method tool returned"}
_APPS = {"type": "boolean", "description": "true: also list the launchable apps (package, "
         "activity, and the label of the app in front)"}  # fmt: skip

TASK_OUTPUT = {
    "type": "object",
    "properties": {
        "task_id": {"type": "string"},
        "method": {"type": "string"},
        "state": {"type": "string", "enum": [state.value for state in TaskState]},
        "terminal": {"type": "boolean"},
        "revision": {"type": "integer"},
        "observed_target": {"type": ["string", "null"]},
        "value": {},
        "failure": {"type": ["object", "null"]},
        "approval": {"type": ["object", "null"]},
        # waiting_for choice:FIELD: the candidates, each with the params task_amend takes
        "choice": {"type": ["object", "null"]},
        "evidence": {"type": "array"},
        "message": {"type": "string"},
    },
    "required": ["task_id", "method", "state", "terminal", "message"],
}  # fmt: skip


def method_tool(method: str) -> types.Tool:
    entry = catalogue.entry(method)
    schema = dict(entry["params"])
    schema["properties"] = {**schema["properties"], "device": _DEVICE, **_task_fields(method)}
    if shows_screen(method):  # the screenshot comes back as an image (daemon/mcp/images.py)
        schema["properties"].update(IMAGE_ARGS)
    lines = [entry["summary"], f"Reads: {entry['reads']}."]
    if entry["changes"]:
        lines.append(f"Changes: {entry['changes']}.")
    if entry["needs_approval"]:
        lines.append(
            "Needs a person's approval: the call returns 'approval pending' with the preview; "
            "you cannot approve it yourself. The person is asked in the client, or approves "
            "with `phoned approve`; call task_status for the outcome."
        )
    read_only = entry["read_only"]
    # destructive: an effect that cannot be repeated or taken back (sms.send); a read: n/a
    destructive = None if read_only else (entry["needs_approval"] or not entry["idempotent"])
    return types.Tool(
        name=entry["tool"],
        title=method,
        description=" ".join(lines),
        input_schema=schema,
        output_schema=TASK_OUTPUT,
        annotations=types.ToolAnnotations(
            title=method,
            read_only_hint=read_only,
            destructive_hint=destructive,
            idempotent_hint=entry["idempotent"],
            open_world_hint=entry["needs_approval"],
        ),
    )


def tools() -> list[types.Tool]:
    """Every tool, methods first (registry order), the schedule tools last."""

    return [
        *(method_tool(m) for m in methods_registry.REGISTRY),
        plain_tool(
            "task_status",
            "A task of this conversation now: state, observed target, evidence summary, and a "
            "pending approval's preview. Shows the outcome after a person decided; once a "
            "screen_snapshot or UI step has ended, also the screen it left (image and "
            "elements, fitted to image_max_bytes / image_max_side).",
            {"task_id": _TASK_ID, **IMAGE_ARGS}, ["task_id"], read_only=True,
            output=TASK_OUTPUT,
        ),
        task_amend.TOOL.model_copy(update={"output_schema": TASK_OUTPUT}),
        plain_tool(
            "task_cancel",
            "Stop a task of this conversation: at once when nothing runs, else at the next safe "
            "point (a stop is not proof that an effect was undone).",
            {"task_id": _TASK_ID}, ["task_id"], read_only=False, output=TASK_OUTPUT,
        ),
        plain_tool(
            "device_context",
            "The device planning context read now: model, SDK, battery, screen, lock, "
            "foreground app and its label, DND, Bluetooth, volumes, default SMS app, supported "
            "methods, queue (apps: true adds the launchable apps); each value with the command "
            "that read it and when.",
            {"device": _DEVICE, "apps": _APPS}, [], read_only=True,
        ),
        plain_tool(
            "queue_status",
            "Tasks per state in the queue and this conversation's latest tasks (newest first).",
            {"device": _DEVICE}, [], read_only=True,
        ),
        *schedule_tools(),
    ]  # fmt: skip
