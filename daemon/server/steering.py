"""What the planner and lifecycle routes share: applying a steering operation, and
waiting for a task's end (``wait_policy: completed``)."""

from __future__ import annotations

import time
from typing import Any

import anyio

from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.server.auth import Principal
from phoned.daemon.server.plane import Plane


def steered(plane: Plane, op: ops.Op[TaskRecord]) -> dict[str, Any]:
    """Apply a steering operation on the plane's store (which checks the quoted
    conversation and the lifecycle), then wake waiting daemons; ``{"task": record}``."""
    record = plane.store().apply(op)
    plane.wakeup.poke()
    return op.answer_json(record)


async def wait_for_end(
    plane: Plane, principal: Principal, task_id: str, wait: float
) -> tuple[TaskRecord, bool]:
    """The task once terminal, or as it is after ``wait`` s (bounded by the plane's
    ``max_wait``): (record, whether it ended). Waits on the event loop, holding no worker
    thread, and counts as one of the token's open long-polls (429 past its share)."""
    deadline = time.monotonic() + max(0.0, min(wait, plane.settings.max_wait))
    seen = plane.wakeup.cursor
    task = await anyio.to_thread.run_sync(plane.store().get, task_id)
    if task.terminal or deadline <= time.monotonic():
        return task, task.terminal
    with plane.wakeup.polling(principal):
        while not task.terminal and (left := deadline - time.monotonic()) > 0:
            if plane.wakeup.released:
                break
            seen = await plane.wakeup.wait_past_async(seen, left)
            task = await anyio.to_thread.run_sync(plane.store().get, task_id)
    return task, task.terminal
