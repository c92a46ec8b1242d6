"""The shape of an MCP tool that is not a task method (``task_status``, the schedule
tools, ...): one builder, so every such tool says the same things the same way."""

from __future__ import annotations

from typing import Any

import mcp.types as types


def plain_tool(
    name: str, description: str, properties: dict[str, Any], required: list[str], *,
    read_only: bool, output: dict[str, Any] | None = None, idempotent: bool = True,
) -> types.Tool:  # fmt: skip
    """A tool that is not a task method: its JSON Schema of ``properties`` (no others taken)
    and its annotations (never destructive; an open world is a method's, not its)."""
    return types.Tool(
        name=name,
        title=name.replace("_", " "),
        description=description,
        input_schema={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        output_schema=output,
        annotations=types.ToolAnnotations(
            read_only_hint=read_only,
            destructive_hint=None if read_only else False,
            idempotent_hint=idempotent,
            open_world_hint=False,
        ),
    )
