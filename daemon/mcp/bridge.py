"""What an MCP tool call does to the queue, without MCP: submit through ingress, wait for a
task to end or pause, decide a pending preview, read status, context and queue.

Everything here is synchronous (the stores are); ``phoned.daemon.mcp.server`` runs it in worker
threads. The decisions are the store's own ``approve``/``deny``, quoting the revision and
preview digest the person was shown, exactly as ``phoned approve``/``deny`` do.
"""

from __future__ import annotations

import json
import time
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from phoned.daemon.config import ConfigError
from phoned.daemon.lifecycle.documents import InputError
from phoned.daemon.lifecycle.errors import LifecycleError, TaskNotFound
from phoned.daemon.lifecycle.states import PAUSED
from phoned.daemon.mcp.images import screen_content
from phoned.daemon.planning.context import planning_context
from phoned.daemon.planning.device_context import AdbContextProvider, context_json
from phoned.daemon.planning.queueing import queue_spec, unserved_warning
from phoned.daemon.rendering.approval_view import approval_card, decision_command
from phoned.daemon.rendering.choice_view import pending_choice
from phoned.daemon.rendering.person_view import pending_person as view
from phoned.daemon.rendering.render import approval_preview, argv_text, evidence_view
from phoned.device.adb import AdbServer
from phoned.device.connection import connect
from phoned.device.errors import DeviceError

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.daemon.lifecycle.records import TaskRecord
    from phoned.daemon.mcp.images import ImageLimits
    from phoned.daemon.store.protocol import PlannerStore

POLL_S = 0.1


# How long a tool call waits for some daemon to be there before saying none is.
UNSERVED_GRACE_S = 5.0
# task fields a method tool takes beside its params (``tools.method_tool``)
TASK_FIELDS = ("rationale", "require_approval")


class ToolError(Exception):
    """A tool call that cannot be carried out; the message is what the model is told."""


@dataclass(frozen=True)
class Settled:
    """A task as the call leaves it, and whether the wait ran out first."""

    task: TaskRecord
    timed_out: bool


def known_errors() -> tuple[type[Exception], ...]:
    """The errors a call may meet that are the caller's to read (not bugs)."""

    return (LifecycleError, DeviceError, ConfigError, InputError)


def error_text(exc: Exception) -> str:
    """One line naming what is wrong (an invalid task names every refused field)."""
    hint = getattr(exc, "HINT", "")
    message = str(exc) or type(exc).__name__
    return f"{message}: {hint}" if hint and hint not in message else message


@dataclass(eq=False)
class Bridge:
    """The queue as the MCP tools see it: one conversation, an optional default device."""

    store: PlannerStore
    cfg: Config
    conversation: str
    _: KW_ONLY
    device: str | None = None  # the device a call that names none goes to
    wait: float = 30.0  # seconds a call waits for its task to end or pause

    @property
    def queue_url(self) -> str:
        """The queue's URL, as the commands and warnings the tools print name it."""
        return self.cfg.queue_url

    # --- tasks ----------------------------------------------------------------------
    def submit(self, method: str, arguments: dict[str, Any]) -> TaskRecord:
        """Queue ``method`` with ``arguments`` (params plus optional ``device``) through
        the ingress ``phoned submit`` uses; ``InvalidTask`` names each refused field."""

        params = dict(arguments)
        device = params.pop("device", None) or self.device
        raw: dict[str, Any] = {
            "method": method,
            "params": params,
            "conversation_id": self.conversation,
        }
        for field in TASK_FIELDS:  # the planner's own, beside the params (``tools.py``)
            if field in params:
                raw[field] = params.pop(field)
        if device is not None:
            raw["device"] = device
        queued, _ = queue_spec(self.store, raw, self.cfg)
        return queued[0]

    def get(self, task_id: str) -> TaskRecord:
        return self.store.get(task_id)

    def unattended(self, task: TaskRecord) -> str | None:
        """The unserved warning for a task just queued, when no daemon took it up within
        ``UNSERVED_GRACE_S`` (a daemon that is just starting gets that long to say it is
        there); None as soon as one is there or the task moved."""
        deadline = time.monotonic() + UNSERVED_GRACE_S
        while True:
            warning = self.unserved(task.device)
            if warning is None or self.store.get(task.id).state.value != "queued":
                return None
            if time.monotonic() >= deadline:
                return warning
            time.sleep(POLL_S)

    def unserved(self, device: str | None = None) -> str | None:
        """The warning when no daemon served this queue (or ``device``) recently, naming
        the queue (``phoned.daemon.store.presence``); None when one did."""

        return unserved_warning(self.store, self.queue_url, device)

    def own(self, task_id: str) -> TaskRecord:
        """The task, when it is one of this conversation's; ``TaskNotFound`` with the same
        text whether no task has that id or another conversation's has (as the plane's
        404: a caller cannot tell the two apart)."""

        try:
            task = self.store.get(task_id)
        except TaskNotFound:
            task = None
        if task is None or task.conversation_id != self.conversation:
            raise TaskNotFound(f"no task {task_id} in this conversation")
        return task

    def settle(self, task_id: str, timeout: float | None = None) -> Settled:
        """Wait (at most ``timeout``, default the server's ``--wait``) until the task ends
        or pauses (waiting, approval, permission)."""

        deadline = time.monotonic() + (self.wait if timeout is None else timeout)
        task = self.store.get(task_id)
        while not (task.terminal or task.state in PAUSED):
            if time.monotonic() >= deadline:
                return Settled(task, timed_out=True)
            time.sleep(POLL_S)
            task = self.store.get(task_id)
        return Settled(task, timed_out=False)

    def decide(self, task_id: str, revision: int, digest: str, approve: bool) -> TaskRecord:
        """Approve or deny the preview shown at ``revision`` with ``digest`` (the store
        refuses it when the task, its revision or its preview has changed since)."""
        verb = self.store.approve if approve else self.store.deny
        return verb(task_id, self.conversation, revision, digest, time.time())

    def cancel(self, task_id: str) -> TaskRecord:
        self.own(task_id)
        return self.store.cancel(task_id, self.conversation, time.time())

    # --- reading ------------------------------------------------------------------
    def preview(self, task_id: str) -> dict[str, Any] | None:
        """The pending approval's preview (effect, target, data) in clear: rebuilt from the
        task's params and bound to its approval digest (``phoned.daemon.rendering.render.approval_preview``;
        evidence keeps it redacted)."""

        shown = approval_preview(self.store.get(task_id), self.store.evidence(task_id))
        if shown is None:
            return None
        return {k: v for k, v in shown.items() if k not in ("digest", "revision")}

    def result(self, task: TaskRecord, *, timed_out: bool = False) -> dict[str, Any]:
        """The structured content of a task: state, target, evidence summary, approval."""

        evidence = self.store.evidence(task.id)
        views = [evidence_view(d) for d in evidence]
        latest = views[-1] if views else None
        out: dict[str, Any] = {
            "task_id": task.id,
            "method": task.method,
            "device": task.device,
            "conversation": task.conversation_id,
            "state": task.state.value,
            "terminal": task.terminal,
            "revision": task.revision,
            "attempt": task.attempt,
            "observed_target": task.observed_target,
            "value": latest["value"] if latest else None,
            "waiting_for": task.waiting_for,
            "failure": None,
            "approval": None,
            "evidence": [_evidence_summary(v) for v in views],
        }
        if task.failure is not None:
            out["failure"] = {"reason": task.failure.reason.value, "message": task.failure.message}
        if task.state.value == "approval" and task.approval_digest:
            out["approval"] = self._approval(task)
        out["choice"] = _choice(task, evidence, self.queue_url)
        out["person"] = pending_person(task, evidence)  # a step handed to the person
        out["message"] = _message(out, timed_out)
        return out

    def _approval(self, task: TaskRecord) -> dict[str, Any]:

        digest = task.approval_digest or ""
        preview = self.preview(task.id)
        return {
            "status": "pending",
            "revision": task.revision,
            "digest": digest,
            "preview": preview,
            "card": approval_card(task, preview),
            "deadline": task.approval_deadline,
            "approve_command": decision_command("approve", task, self.queue_url),
            "deny_command": decision_command("deny", task, self.queue_url),
        }

    def screen(self, task_id: str, limits: ImageLimits) -> list[Any]:
        """The screen this conversation's task kept, as MCP content: the screenshot fitted to
        ``limits`` and the visible elements (``phoned.daemon.mcp.images``); [] when it kept none."""

        task = self.own(task_id)
        folders = [self.cfg.artifacts_path]
        return screen_content(task.id, self.store.evidence(task.id), folders, limits)

    def counts(self, device: str | None = None) -> dict[str, int]:
        """This conversation's tasks per state (never another conversation's: a token bound
        to this conversation learns nothing of the others through the counts)."""
        return self.store.queue_status(device, self.conversation)

    def queue(self, device: str | None = None, limit: int = 20) -> dict[str, Any]:
        """This conversation's tasks per state and its latest tasks, newest first."""
        counts = self.counts(device)
        warning = self.unserved(device)
        tasks = self.store.list_tasks(
            device=device, conversation_id=self.conversation, limit=100_000
        )
        latest = sorted(tasks, key=lambda t: t.created_at, reverse=True)[:limit]
        return {
            "conversation": self.conversation,
            "queue": self.queue_url,
            "warning": warning,
            "counts": counts,
            "tasks": [
                {"task_id": t.id, "method": t.method, "state": t.state.value,
                 "device": t.device, "revision": t.revision}
                for t in latest
            ],
        }  # fmt: skip

    def context(self, device: str | None, apps: bool = False) -> dict[str, Any]:
        """The device planning context read now through the configured adb server (with
        ``apps`` the launchable apps too). Never
        starts an adb server: the daemon serving the queue runs it (a second one would
        take the phones from it); none answering is said, with where it was looked for."""

        server = AdbServer(self.cfg.adb_host, self.cfg.adb_port, adb_path=self.cfg.adb_path)
        if not server.is_running():
            hint = self.unserved(device or self.device) or "is the daemon running? (phoned status)"
            raise ToolError(
                f"no adb server answers at {server.host}:{server.port}, so the phone cannot be "
                f"read; phoned does not start one from here: {hint}"
            )
        serial = connect(device or self.device, server).serial
        provider = AdbContextProvider(server, apps=apps)
        planning = planning_context(provider, self.store, serial, time.time())
        return {
            "device": context_json(planning.device),
            "queue": self.counts(serial),  # this conversation's, as queue_status
            "stale": list(planning.stale),
            "missing": list(planning.missing),
            "at": planning.at,
        }


def pending_person(task: TaskRecord, evidence: Any) -> dict[str, Any] | None:

    return view(task, evidence)


def _choice(task: TaskRecord, evidence: Any, queue: str | None) -> dict[str, Any] | None:
    """A choice the task waits for: the candidates, each with the params that answer it."""

    return pending_choice(task, evidence, queue)


def _evidence_summary(view: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": view["kind"],
        "attempt": view["attempt"],
        "status": view["status"],
        "message": view["message"],
        "target": view["target"],
        "read_backs": [
            {"name": o.get("name"), "value": o.get("value"), "phase": o.get("phase"),
             "command": argv_text(o.get("command") or [])}
            for o in view["observations"]
        ],
        "commands": [
            {"argv": argv_text(c.get("argv") or []), "exit_code": c.get("exit_code"),
             "duration_ms": c.get("duration_ms")}
            for c in view["commands"]
        ],
        "artifacts": view["artifacts"],
    }  # fmt: skip


def _message(out: dict[str, Any], timed_out: bool) -> str:
    """One line for the model: what happened and what to do next."""
    task, state = out["task_id"], out["state"]
    if state == "completed":
        value = out["value"]
        shown = f"; value {json.dumps(value, ensure_ascii=False, default=str)}" if value else ""
        return f"task {task} completed: observed {out['observed_target']}{shown}"[:500]
    if out["failure"] is not None:
        failure = out["failure"]
        return f"task {task} {state}: {failure['reason']}: {failure['message']}".rstrip(": ")
    if state == "approval":
        return (
            f"task {task} is waiting for a person's approval of its preview; you cannot approve "
            f"it. The person approves in this client when asked, or with: "
            f"{out['approval']['approve_command']}. Call task_status later for the outcome."
        )
    if out.get("choice") is not None:
        choice = out["choice"]
        return (
            f"task {task} waits for a choice of {choice['field']}: "
            f"{len(choice['candidates'])} candidates (in 'choice'); nothing was done on the "
            f"phone. Answer with task_amend {{task_id, params: the chosen candidate's 'amend'}}"
        )
    if out.get("person") is not None:
        person = out["person"]
        return (
            f"task {task} is waiting for the person on the phone to do a step in "
            f"{person['package']} ({person['instruction']!r}); you cannot do it. phoned goes on "
            f"when it observes the expectation (TTL {person['ttl_s']} s). Call task_status later "
            f"for the outcome."
        )
    if state in ("waiting", "permission"):
        return f"task {task} paused ({state}: {out['waiting_for']}); call task_status later"
    if timed_out:
        return f"task {task} is still {state} after the wait; call task_status later"
    return f"task {task} is {state}"
