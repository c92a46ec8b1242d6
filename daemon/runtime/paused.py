"""The pause watcher: a device's worker, while idle, checks whether a paused task may resume.

A task in ``waiting`` or ``permission`` names what it waits for (``TaskRecord.waiting``, a
``WaitingFor`` the executor built): ``unlock``, a runtime-permission dialog over the app
(the person answers it, the daemon never taps Allow), a grant to observe, a step handed to
the person (``ui.handoff``: its expectation, or another app in front), or a person's pause
(never resumed from here). The worker looks between its tasks, every
``pause_check_interval`` (1 s), so a step a person takes minutes over holds no worker. When a read shows the condition met, the task is
requeued; its next claim compares a fresh snapshot with the one kept at the pause before
anything continues, and a task that waited on a dialog first checks that the grants it
lacked are now observed (``grant_recheck``): a dialog answered with Deny ends the task
``permission_denied``. Nothing here changes the phone. The permission TTL is the sweeper's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.lifecycle.waiting import WaitingFor, WaitKind
from phoned.daemon.store.protocol import WorkerStore
from phoned.device import commands, parsers, ui_hierarchy
from phoned.device.actions import execute, ui
from phoned.device.actions.base import ActionContext
from phoned.device.connection import Device
from phoned.device.errors import DeviceError
from phoned.device.evidence import Recorder
from phoned.device.methods.ui_handoff import UiHandoff, observed

log = logging.getLogger("phoned.paused")


def _unlocked(ctx: ActionContext, _: WaitingFor) -> bool:
    return ui.keyguard_showing(ctx, "read") is False and ui.screen_on(ctx, "read") is True


def _dialog_gone(ctx: ActionContext, _: WaitingFor) -> bool:

    screen = ui.dump(ctx, "read")
    return ui_hierarchy.find_permission_dialog(screen.xml) is None


def _granted(ctx: ActionContext, waiting: WaitingFor) -> bool:

    what = waiting.permission or ""
    params: dict[str, Any] = {"package": waiting.package}
    if what.startswith("access:"):
        params["special"] = what.split(":", 1)[1]
    else:
        params["permission"] = what
    value = execute("permission.check", params, ctx).value
    return isinstance(value, dict) and value.get("granted") is True


_CHECKS: dict[WaitKind, Callable[[ActionContext, WaitingFor], bool]] = {
    WaitKind.PERMISSION_DIALOG: _dialog_gone,
    WaitKind.PERMISSION: _granted,
}


def _check_for(waiting: WaitingFor) -> Callable[[ActionContext, WaitingFor], bool] | None:
    """The read that says the wait is over; None: nothing the daemon may observe ends it
    (an unknown condition, or a person's pause: only they resume it)."""
    if waiting.kind is WaitKind.CONDITION:
        return _unlocked if waiting.condition == "unlock" else None
    if waiting.kind is WaitKind.PERMISSION and not (waiting.package and waiting.permission):
        return None
    return _CHECKS.get(waiting.kind)


def _handoff_seen(ctx: ActionContext, task: TaskRecord) -> bool:
    """A step handed to the person (``ui.handoff``): its expectation shows, or another app
    came to the front; the resumed run decides which (reads only, nothing of what the
    person enters is kept: this recorder is thrown away)."""

    return observed(ctx, UiHandoff.model_validate(task.params))


def condition_met(device: Device, task: TaskRecord) -> bool:
    """Whether what ``task`` waits for is observed on the phone now (reads only)."""
    waiting = task.waiting
    if waiting is not None and waiting.kind is WaitKind.PERSON:
        return _handoff_seen(ActionContext(recorder=Recorder(device, "pause-watch")), task)
    check = _check_for(waiting) if waiting is not None else None
    if waiting is None or check is None:
        return False
    ctx = ActionContext(recorder=Recorder(device, "pause-watch"))
    return check(ctx, waiting)


def runtime_grants(recorder: Recorder, package: str, phase: str) -> dict[str, bool]:
    """``package``'s runtime permissions and whether each is granted now (``dumpsys
    package``); empty when the package is not installed."""

    argv = commands.dumpsys_package(package)
    text = recorder.read(argv).stdout
    if not parsers.package_listed(text, package):
        return {}
    runtime = parsers.parse_package_permissions(text)["runtime"]
    recorder.observe(f"{package} runtime permissions", runtime, phase, argv)
    return runtime


def dialog_wait(device: Device, app: str) -> tuple[WaitingFor, dict[str, Any]]:
    """What a task paused on a permission dialog over ``app`` waits for: the dialog answered,
    then the grants ``app`` lacked when it showed (``missing``); with the reading's evidence."""
    recorder = Recorder(device, "permission-dialog")
    grants = runtime_grants(recorder, app, "before")
    missing = tuple(sorted(p for p, granted in grants.items() if not granted))
    waiting = WaitingFor(WaitKind.PERMISSION_DIALOG, package=app, missing=missing)
    return waiting, recorder.evidence({"app": app, "missing": list(missing)}).to_json()


def grant_recheck(device: Device, waiting: WaitingFor) -> tuple[list[str], dict[str, Any]]:
    """The fresh check of a task resuming from a permission dialog: the grants that were
    missing and are still not observed (empty: every grant observed), with its evidence."""
    recorder = Recorder(device, "permission-recheck")
    grants = runtime_grants(recorder, waiting.package or "", "after")
    denied = [p for p in waiting.missing if grants.get(p) is not True]
    body = {"app": waiting.package, "missing": list(waiting.missing), "still_denied": denied}
    return denied, recorder.evidence(body).to_json()


def check_paused(store: WorkerStore, device: Device, clock: Callable[[], float]) -> list[str]:
    """Requeue every paused task of this device whose condition is met; their ids."""
    return resume_met(store, device, paused_tasks(store, device.serial), clock)


def paused_tasks(
    store: WorkerStore, device: str | None = None, limit: int = 100
) -> list[TaskRecord]:
    """The tasks in ``waiting`` or ``permission`` (of ``device``; None: of every device)."""
    paused = (TaskState.WAITING, TaskState.PERMISSION)
    return store.list_tasks(states=paused, device=device, limit=limit)


def resume_met(
    store: WorkerStore, device: Device, paused: list[TaskRecord], clock: Callable[[], float]
) -> list[str]:
    """Requeue those of ``paused`` (tasks of ``device``) whose condition is met; their ids."""
    resumed = []
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
