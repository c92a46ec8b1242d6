"""The schedule tools of ``phoned mcp`` (seed 002's autopilot), for this conversation only:
``schedule_add``, ``schedule_list``, ``schedule_remove``, ``schedule_pause``.

A schedule added here belongs to the server's conversation; the others see and change
only that conversation's schedules (another's is "no schedule X in this conversation",
as for an unknown id). The task to create goes through the same ingress as a method
tool's call; refusals name the field (``cron``, ``tz``, ``task.params.mode``).
"""

from __future__ import annotations

import time
from typing import Any

import mcp.types as types

from phoned.daemon.config import with_default_timeouts
from phoned.daemon.lifecycle.errors import TaskNotFound
from phoned.daemon.lifecycle.schedule_ops import AddSchedule, PauseSchedule, RemoveSchedule
from phoned.daemon.lifecycle.schedules import ScheduleRecord, host_zone, utc_text, validate_schedule
from phoned.daemon.lifecycle.wire import plain
from phoned.daemon.mcp.bridge import Bridge, ToolError
from phoned.daemon.mcp.tool_shape import plain_tool

_SCHEDULE_ID = {"type": "string", "description": "the schedule id schedule_add or _list gave"}
_ADD = {
    "cron": {"type": "string", "description": "five fields: minute hour day-of-month month "
             "day-of-week, e.g. '30 7 * * 1-5' (07:30 on weekdays)"},
    "tz": {"type": "string", "description": "IANA time zone, e.g. Europe/Berlin "
           "(default: the server host's)"},
    "name": {"type": "string", "maxLength": 200, "description": "a name to recognise it by"},
    "method": {"type": "string", "description": "the method of the task to create, e.g. dnd.set"},
    "params": {"type": "object", "description": "the method's params (as its tool takes them)"},
    "device": {"type": "string", "description": "device serial (default: any the daemon serves)"},
}  # fmt: skip
SCHEDULE_OUTPUT = {
    "type": "object",
    "properties": {
        "schedules": {"type": "array"},
        "schedule": {"type": ["object", "null"]},
        "message": {"type": "string"},
    },
    "required": ["message"],
}

NAMES = ("schedule_add", "schedule_list", "schedule_remove", "schedule_pause")


def schedule_tools() -> list[types.Tool]:
    """The four schedule tools, as ``tools/list`` shows them."""
    return [
        plain_tool(
            "schedule_add",
            "Create a task at each due time of a cron expression (this conversation's). Each "
            "due time creates one task (source schedule, never retried automatically); one "
            "missed while nothing ran is reported as missed, not run late.",
            _ADD, ["cron", "method"], read_only=False, output=SCHEDULE_OUTPUT, idempotent=False,
        ),
        plain_tool(
            "schedule_list",
            "This conversation's schedules: next due time, last run (its task and that "
            "task's state), missed runs.",
            {}, [], read_only=True, output=SCHEDULE_OUTPUT,
        ),
        plain_tool(
            "schedule_remove",
            "Remove a schedule of this conversation (the tasks it created stay).",
            {"schedule_id": _SCHEDULE_ID}, ["schedule_id"], read_only=False, output=SCHEDULE_OUTPUT,
        ),
        plain_tool(
            "schedule_pause",
            "Pause a schedule of this conversation (resume: true resumes it; the due times "
            "while paused are not run and not counted missed).",
            {"schedule_id": _SCHEDULE_ID,
             "resume": {"type": "boolean", "description": "true: resume instead"}},
            ["schedule_id"], read_only=False, output=SCHEDULE_OUTPUT,
        ),
    ]  # fmt: skip


def _doc(record: ScheduleRecord) -> dict[str, Any]:
    """The record as JSON."""
    doc: dict[str, Any] = plain(record)
    return doc


def _line(record: ScheduleRecord) -> str:
    """One line for the model: when, what, the last run and its result, missed runs."""
    run = record.last_run
    last = "never ran"
    if run is not None:
        result = (run.task_state or "removed") if run.result == "fired" else run.result
        last = f"last run {utc_text(run.due_at)} {result}"
        if run.task_id:
            last += f" (task {run.task_id})"
    due = "paused" if record.paused else f"next due {utc_text(record.next_due_at)}"
    return (
        f"schedule {record.id} '{record.cron}' {record.tz} {record.method}: {due}; {last}; "
        f"missed {record.missed_count}"
    )


def _own(bridge: Bridge, schedule_id: Any) -> ScheduleRecord:
    """The schedule, when it is this conversation's; else as missing (no way to tell)."""
    store: Any = bridge.store
    if not isinstance(schedule_id, str) or not schedule_id:
        raise ToolError("schedule_id: give the id schedule_add or schedule_list returned")
    found = [s for s in store.schedules(time.time(), bridge.conversation) if s.id == schedule_id]
    if not found:
        raise TaskNotFound(f"no schedule {schedule_id} in this conversation")
    record: ScheduleRecord = found[0]
    return record


def call(bridge: Bridge, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Carry out schedule tool ``name``; its structured content (``message`` first)."""

    store: Any = bridge.store
    if name == "schedule_add":
        return _add(bridge, args)
    if name == "schedule_list":
        found = store.schedules(time.time(), bridge.conversation)
        lines = [_line(s) for s in found] or ["no schedules in this conversation"]
        return {"message": "\n".join(lines), "schedules": [_doc(s) for s in found]}
    own = _own(bridge, args.get("schedule_id"))
    if name == "schedule_remove":
        removed = store.apply(RemoveSchedule(own.id, bridge.conversation, time.time()))
        return {"message": f"removed {_line(removed)}", "schedule": _doc(removed)}
    paused = not bool(args.get("resume"))
    changed = store.apply(PauseSchedule(own.id, bridge.conversation, paused, time.time()))
    return {"message": _line(changed), "schedule": _doc(changed)}


def _add(bridge: Bridge, args: dict[str, Any]) -> dict[str, Any]:
    task: dict[str, Any] = {"method": args.get("method"), "params": args.get("params") or {}}
    device = args.get("device") or bridge.device
    if device is not None:
        task["device"] = device
    raw: dict[str, Any] = {
        "cron": args.get("cron"),
        "tz": args.get("tz") or host_zone(),
        "conversation_id": bridge.conversation,
        "task": task,
    }
    if args.get("name"):
        raw["name"] = args["name"]
    spec = validate_schedule(raw)
    spec = spec.model_copy(update={"task": with_default_timeouts(spec.task, bridge.cfg)})
    store: Any = bridge.store
    added: ScheduleRecord = store.apply(AddSchedule(spec, time.time()))
    return {"message": f"added {_line(added)}", "schedule": _doc(added)}
