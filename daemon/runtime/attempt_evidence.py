"""What one attempt ran on the phone, kept as evidence however the attempt ends.

Each step of an attempt (the read-back of an earlier effect, the action, a re-plan of it)
records its commands through its own ``Recorder``. A step that reports keeps its recorder
as an evidence document (``outcome``, ``reconcile``). ``AttemptEvidence`` remembers every
recorder not kept yet, so an attempt that ends any other way (a device error before or
after an effect, the queue gone, an internal error) still keeps the commands it ran, with
their exit codes and errors, and what it observed, in one ``failure`` document whose note
says what failed. An attempt that failed before any command keeps that document too, with
no commands and the note.

Whatever is kept is redacted first (``stored``: the task's phone numbers and message
texts, and every private key's value), and each step's recorder redacts them as it
records (``sensitive_values``).
"""

from __future__ import annotations

import logging
from typing import Any

from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.records import Failure, TaskRecord
from phoned.daemon.runtime.faults import PreReadRecorder
from phoned.daemon.store.protocol import WorkerStore
from phoned.device import private
from phoned.device.actions.registry import task_secrets
from phoned.device.connection import Device
from phoned.device.evidence import Recorder

log = logging.getLogger("phoned.executor")

FAILURE_KIND = "failure"
_NO_TARGET: dict[str, Any] = {}  # a failed attempt observed no target


def sensitive_values(task: TaskRecord) -> list[str]:
    """The task's values a ``Recorder`` must redact: its method's sensitive params (phone
    numbers, message bodies); none for a method the registry does not know."""
    return task_secrets(task.method, task.params)


def stored(task: TaskRecord, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as evidence keeps it: the task's phone numbers and message texts, and every
    private key's value, in their redacted form (``phoned.device.private``), wherever they are."""
    return private.scrub(body, sensitive_values(task))


class AttemptEvidence:
    """The recorders of one attempt's steps whose evidence is not kept yet."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self._tracked: list[Recorder] = []
        self._unkept: list[Recorder] = []

    def track(self, recorder: Recorder, kept: bool = False) -> Recorder:
        """Remember ``recorder`` (a step's) until its evidence is kept (``kept``: it is in the
        store already, a step that ran all the same); returns it."""
        self._tracked.append(recorder)
        if not kept:
            self._unkept.append(recorder)
        return recorder

    def step_recorder(self, task: TaskRecord) -> Recorder:
        """A tracked recorder for one step of ``task``'s attempt, redacting its secrets
        (crash point ``after_pre_read`` at its first read when armed)."""
        return self.track(
            PreReadRecorder(self.device, task.method, sensitive=sensitive_values(task))
        )

    def kept(self, recorder: Recorder) -> None:
        """``recorder``'s evidence is in the store: a failure need not keep it again."""
        self._unkept = [r for r in self._unkept if r is not recorder]

    def keep(
        self,
        store: WorkerStore,
        task: TaskRecord,
        kind: str,
        body: dict[str, Any],
        now: float,
        recorder: Recorder | None = None,
    ) -> str:
        """Keep ``body`` as evidence of ``kind``, numbers and texts redacted (``stored``);
        its ref. ``recorder``: the step whose evidence ``body`` is, kept with it."""
        ref = store.put_evidence(task.ticket, kind, stored(task, body), now)
        if recorder is not None:
            self.kept(recorder)
        return ref

    def failure_body(self, task: TaskRecord, failure: Failure) -> dict[str, Any]:
        """The ``failure`` document: every unkept command and observation, in the order
        they ran, and a note naming the failure."""
        merged = Recorder(self.device, task.method, sensitive=sensitive_values(task))
        for step in self._unkept:
            merged.commands += step.commands
            merged.observations += step.observations
            merged.notes += step.notes
            merged.artifacts.update(step.artifacts)
        if not any(step.commands for step in self._tracked):
            merged.note("no command ran on the phone in this attempt")
        elif not merged.commands:
            merged.note("the commands this attempt ran are in its other evidence documents")
        merged.note(f"attempt {task.attempt} ended {failure.reason.value}: {failure.message}")
        reason = {"reason": failure.reason.value, "message": merged.redact_text(failure.message)}
        return stored(task, {"failure": reason, "evidence": merged.evidence(_NO_TARGET).to_json()})

    def keep_failure(
        self, store: WorkerStore, task: TaskRecord, failure: Failure, now: float
    ) -> tuple[str, ...]:
        """Keep the ``failure`` document; its ref, or none when the store refused it (the
        failure is reported all the same)."""
        body = self.failure_body(task, failure)
        try:
            ref = store.put_evidence(task.ticket, FAILURE_KIND, body, now)
        except LifecycleError as exc:
            log.warning("task %s: failure evidence not kept: %s", task.id, exc)
            return ()
        self._unkept.clear()
        return (ref,)
