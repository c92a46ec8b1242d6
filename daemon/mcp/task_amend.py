"""The MCP tool ``task_amend``: a new revision of a task of this conversation with some params
changed, merged as ``phoned amend`` merges them (the others keep their value).

It answers a task waiting for a choice (``waiting_for`` = ``choice:to``: its ``task_status``
lists the candidates, each with the params that choose it), and changes a queued, paused or
approval-pending task (a pending approval is void: its preview showed the old params). The
store checks the conversation and the params (``InvalidTask`` names each refused field); the
call then waits as a method call does, so a chosen recipient of ``sms.send`` comes back
``approval`` pending with the name and number in the preview.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import mcp.types as types

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord
    from phoned.daemon.mcp.bridge import Bridge

NAME = "task_amend"

TOOL = types.Tool(
    name=NAME,
    title="task amend",
    description=(
        "Change params of a task of this conversation (a new revision; the params not given "
        "keep their value). Answers a task waiting for a choice (waiting_for choice:FIELD): "
        "task_status lists the candidates, each with the params that choose it (its 'amend'). "
        "A pending approval of the old params is void. Waits for the task like a method call."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": "the task id a method tool returned"},
            "params": {
                "type": "object",
                "description": 'the params to change, e.g. {"to": "+79160000002", '
                '"contact": "Ivan Petrov"}',
                "minProperties": 1,
            },
        },
        "required": ["task_id", "params"],
        "additionalProperties": False,
    },
    annotations=types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
)


class AmendRefused(Exception):
    """The call's arguments are not an amendment (the message names what is wrong)."""


def amend(bridge: Bridge, args: dict[str, Any]) -> TaskRecord:
    """The task of ``bridge``'s conversation with ``args["params"]`` merged into its params
    as a new revision; ``AmendRefused`` for arguments that are not one, the store's errors
    (another conversation's task, a terminal task, invalid params) as they are."""
    task_id, changes = args.get("task_id"), args.get("params")
    if not isinstance(task_id, str) or not task_id:
        raise AmendRefused("task_id: a task id (text) is required")
    if not isinstance(changes, dict) or not changes:
        raise AmendRefused("params: an object with at least one param to change is required")
    task = bridge.own(task_id)
    merged = {**task.params, **changes}
    return bridge.store.amend(task.id, bridge.conversation, merged, time.time())
