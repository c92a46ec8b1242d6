"""``run --once --task FILE`` while another holds the phone: the task is left to the holder.

The phone's holder (a daemon serving it, usually) runs the submitted task; this process
waits for the task to end and exits with the code its end state maps to, as if it had run
the task itself. It never sends the phone a command while another holds it: only when the
phone comes free while the task still waits in the queue does it take the hold and run
the task here. At a terminal a pending approval is asked about inline, as ``--once`` does
for a task it runs (``phoned.daemon.runtime.approval_prompt``).

``OnceStop`` is the ``--once`` process's SIGTERM/SIGINT: it ends a wait and stops the
worker running, at a safe point.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.runtime.phone_hold import WAIT_LOG_S, HoldRefused, PhoneHold
from phoned.daemon.store.holds import Holder

if TYPE_CHECKING:
    from phoned.daemon.store.protocol import PlannerStore, WorkerStore

UNDER_WAY = frozenset({TaskState.QUEUED, TaskState.DISPATCHED, TaskState.RUNNING})


class OnceStop:
    """SIGTERM/SIGINT of ``run --once``: stop waiting, and stop the running worker."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._worker: Any = None

    def install(self) -> OnceStop:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._handler)
        return self

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.set()

    def set(self) -> None:
        """Stop now: the wait ends, the worker stops at its next safe point."""
        self.event.set()
        if self._worker is not None:
            self._worker.stop()

    def running(self, worker: Any) -> Any:
        """``worker`` runs now: a stop (even one already asked) stops it."""
        self._worker = worker
        if self.event.is_set():
            worker.stop()
        return worker


def wait_for_end(
    planner: PlannerStore,
    hold: PhoneHold,
    holder: Holder,
    task_id: str,
    *,
    take: Callable[[], bool],
    drive: Callable[[str], object],
    ask: Callable[[TaskRecord], TaskRecord | None] | None,
    stop: OnceStop,
    poll: float,
) -> TaskRecord | None:
    """Wait until task ``task_id``, left to ``holder``, is no longer under way; the task
    then, or None when stopped first. ``take()`` tries for the phone (True: held now) when
    the task waits in the queue, ``drive(id)`` then runs it here; ``ask`` decides a pending
    approval (the approved task goes on, with the holder or here)."""
    click.echo(
        f"phoned: phone {hold.serial} is held by {holder.describe()}: task {task_id} is left "
        "to it; waiting for it to end (nothing is sent to the phone from here)",
        err=True,
    )
    said = time.monotonic()
    while not stop.event.is_set():
        task = planner.get(task_id)
        if task.state is TaskState.QUEUED and take():
            drive(task_id)  # the phone came free: run the task here
            continue
        if task.state not in UNDER_WAY:
            if ask is None or task.state is not TaskState.APPROVAL or ask(task) is None:
                return task
            continue
        if time.monotonic() - said >= WAIT_LOG_S:
            click.echo(f"phoned: still waiting: task {task_id} is {task.state.value}", err=True)
            said = time.monotonic()
        stop.event.wait(poll)
    return None


def try_take(hold: PhoneHold, store: WorkerStore) -> bool:
    """One try for the phone; False (not held) also when the lock file or the queue
    cannot be used right now."""
    try:
        return hold.take(store) is None
    except (HoldRefused, LifecycleError):
        return False
