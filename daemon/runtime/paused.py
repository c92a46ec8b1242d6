"""The pause watcher: a device's worker, while idle, checks whether a paused task may resume.

A task in ``waiting`` or ``permission`` names what it waits for (``waiting_for``, written by
the executor): ``unlock``, ``permission-dialog`` (a runtime-permission dialog over the
app: the person answers it, the daemon never taps Allow) or ``permission:PACKAGE:WHAT``
(a grant to observe). When a read shows the condition met, the task is requeued; its next
claim compares a fresh snapshot with the one kept at the pause before anything continues.
Nothing here changes the phone. The permission TTL is the sweeper's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from daemon.lifecycle.errors import LifecycleError
from daemon.lifecycle.records import TaskRecord
from daemon.lifecycle.states import TaskState
from daemon.store.protocol import WorkerStore
from device.actions import ui
from device.actions.base import ActionContext
from device.connection import Device
from device.errors import DeviceError
from device.evidence import Recorder

log = logging.getLogger("phoned.paused")


def _unlocked(ctx: ActionContext, _: str) -> bool:
    return ui.keyguard_showing(ctx, "read") is False and ui.screen_on(ctx, "read") is True


def _dialog_gone(ctx: ActionContext, _: str) -> bool:
    from device import ui_hierarchy

    screen = ui.dump(ctx, "read")
    return ui_hierarchy.find_permission_dialog(screen.xml) is None


def _granted(ctx: ActionContext, waiting_for: str) -> bool:
    from device.actions import execute

    _, package, what = waiting_for.split(":", 2)
    params: dict[str, Any] = {"package": package}
    if what.startswith("access:"):
        params["special"] = what.split(":", 1)[1]
    else:
        params["permission"] = what
    value = execute("permission.check", params, ctx).value
    return isinstance(value, dict) and value.get("granted") is True


def _check_for(waiting_for: str) -> Callable[[ActionContext, str], bool] | None:
    if waiting_for == "unlock":
        return _unlocked
    if waiting_for == "permission-dialog":
        return _dialog_gone
    if waiting_for.startswith("permission:") and waiting_for.count(":") >= 2:
        return _granted
    return None


def condition_met(device: Device, task: TaskRecord) -> bool:
    """Whether what ``task`` waits for is observed on the phone now (reads only)."""
    check = _check_for(task.waiting_for or "")
    if check is None:
        return False
    ctx = ActionContext(recorder=Recorder(device, "pause-watch"))
    return check(ctx, task.waiting_for or "")


def check_paused(store: WorkerStore, device: Device, clock: Callable[[], float]) -> list[str]:
    """Requeue every paused task of this device whose condition is met; their ids."""
    resumed = []
    paused = store.list_tasks(
        states=(TaskState.WAITING, TaskState.PERMISSION), device=device.serial
    )
    for task in paused:
        try:
            if not condition_met(device, task):
                continue
            store.resume(task.id, task.conversation_id, clock())
        except (DeviceError, LifecycleError) as exc:
            log.info("paused task %s: not resumed now (%s)", task.id, type(exc).__name__)
            continue
        log.info("paused task %s: %s observed, resuming", task.id, task.waiting_for)
        resumed.append(task.id)
    return resumed
