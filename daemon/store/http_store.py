"""``HttpStore``: the ``Store`` protocol over a remote control plane (``phoned serve``).

``phoned run --queue https://plane:8400`` works unchanged: the worker's verbs become
calls of the ``/v1`` API with a daemon token. Transport: ``httpx`` (sync) behind one
method, ``_Transport.send``, with explicit timeouts; transport failures, 5xx and refused
tokens become ``StoreUnavailable``, and error answers are raised again as the named
lifecycle error (``daemon.server.wire.error_from``).

Reports go through the durable outbox (``daemon.store.outbox``): written first, then
delivered in order until acknowledged; the plane dedupes by ``report_id``. While the
plane is down:

==========================  ====================================================
verb                        behaviour
==========================  ====================================================
start, put_evidence,        queued; answers predicted from the last known record
journal_after, complete,    (``put_evidence`` hands out ``pending:<report id>``,
fail, pause,                resolved by the plane on delivery)
request_approval,
confirm_stopped
get                         the last known record of the task
journal_before, admit,      the admission gate needs the plane: retried for up to
unknown_entries, recover    ``sync_wait`` seconds, then ``StoreUnavailable``
claim                       refused (``StoreUnavailable``) while reports wait, so the
                            worker claims nothing new until the plane has them all
heartbeat                   ``StoreUnavailable`` (the lease may run out)
planner verbs and reads     ``StoreUnavailable`` at once
==========================  ====================================================

Idle workers long-poll ``GET /v1/work`` for ``idle_wait`` seconds (default 30): one
request per 30 s per worker while idle, and a pickup within one round trip of a submit.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from daemon.lifecycle.errors import StoreUnavailable
from daemon.lifecycle.records import (
    Event,
    Failure,
    JournalEntry,
    Outcome,
    Preview,
    Revision,
    StopSummary,
    TaskRecord,
    Ticket,
    WorkflowRecord,
)
from daemon.lifecycle.states import TaskState, after_failure
from daemon.server import wire
from daemon.store.outbox import Answer, Courier, Outbox, Pending
from daemon.store.protocol import DEFAULT_LEASE_S

log = logging.getLogger("phoned.http_store")

TOKEN_ENV = "PHONED_TOKEN"  # the daemon's (or planner's) bearer token
TOKEN_FILE_ENV = "PHONED_TOKEN_FILE"  # or a file holding it
OUTBOX_ENV = "PHONED_OUTBOX"  # outbox file (default: <state dir>/outbox-<host>-<port>.db)
_DEFINITIVE = {404, 409, 422}  # refusals that redelivery cannot change


class _Transport:
    """One method to the plane: ``send``; every failure below it is ``StoreUnavailable``."""

    def __init__(self, url: str, token: str, timeout: float) -> None:
        self._timeout = timeout
        self._client = httpx.Client(
            base_url=url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout, connect=min(3.0, timeout)),
        )

    def close(self) -> None:
        self._client.close()

    def send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | None = None,
        params: dict[str, Any] | None = None,
        wait: float = 0.0,
    ) -> Answer:
        """The plane's answer (any status); ``StoreUnavailable`` when none came."""
        try:
            response = self._client.request(
                method,
                path,
                json=json,
                content=content,
                params=params,
                timeout=httpx.Timeout(self._timeout + wait, connect=min(3.0, self._timeout)),
            )
        except httpx.HTTPError as exc:
            raise StoreUnavailable(f"control plane unreachable: {type(exc).__name__}") from exc
        try:
            body = response.json() if response.content else None
        except ValueError:
            body = {"message": response.text[:200]}
        return Answer(response.status_code, body)


def _checked(answer: Answer) -> Any:
    """The body of a success; the named error of a refusal; ``StoreUnavailable`` otherwise."""
    if 200 <= answer.status < 300:
        return answer.body
    if answer.status in (401, 403):
        message = answer.body.get("detail") if isinstance(answer.body, dict) else ""
        raise StoreUnavailable(f"control plane refused the token (HTTP {answer.status}): {message}")
    raise wire.error_from(answer.body, answer.status)


class _Shared:
    """What every ``HttpStore`` of one outbox shares in a process: courier and known records."""

    def __init__(self, url: str, token: str, outbox_path: Path, timeout: float) -> None:
        self.transport = _Transport(url, token, timeout)
        self.courier = Courier(Outbox(outbox_path), self._deliver)
        self.known: dict[str, TaskRecord] = {}
        self.entries: dict[str, JournalEntry] = {}
        self.registered: set[str] = set()
        self.lock = threading.Lock()

    def _deliver(self, pending: Pending) -> Answer:
        if pending.file is not None:
            content = Path(pending.file).read_bytes() if Path(pending.file).exists() else b""
            answer = self.transport.send(pending.method, pending.path, content=content)
        else:
            answer = self.transport.send(pending.method, pending.path, json=pending.body)
        if answer.status in _DEFINITIVE or 200 <= answer.status < 300:
            self.remember(answer.body)
            return answer
        _checked(answer)  # raises StoreUnavailable for 401/403/5xx: keep it for later
        raise StoreUnavailable(f"control plane answered HTTP {answer.status}")

    def remember(self, body: Any) -> None:
        """Keep the task records and journal entries an answer carries."""
        if not isinstance(body, dict):
            return
        with self.lock:
            if isinstance(body.get("task"), dict):
                record = wire.task_from(body["task"])
                self.known[record.id] = record
            if isinstance(body.get("entry"), dict):
                entry = wire.journal_from(body["entry"])
                self.entries[entry.op_id] = entry


_SHARED: dict[tuple[str, str, str], _Shared] = {}
_SHARED_LOCK = threading.Lock()


def _shared(url: str, token: str, outbox_path: Path, timeout: float) -> _Shared:
    key = (url, token, str(outbox_path.resolve()))
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = _Shared(url, token, outbox_path, timeout)
        return _SHARED[key]


class HttpStore:
    """The ``Store`` protocol over ``phoned serve``; see the module docstring for outages."""

    def __init__(
        self,
        url: str,
        token: str,
        outbox_path: Path,
        *,
        timeout: float = 10.0,
        idle_wait: float = 30.0,
        sync_wait: float = 60.0,
    ) -> None:
        self._s = _shared(url, token, outbox_path, timeout)
        self._t = self._s.transport
        self.idle_wait = idle_wait
        self.sync_wait = sync_wait
        self._cursor: int | None = None  # the plane's event cursor, as last seen
        self._empty_at: int | None = None  # the cursor at which a claim last found nothing
        self._lists: dict[str, tuple[int, list[TaskRecord]]] = {}  # list_tasks by cursor

    def close(self) -> None:
        """Nothing to release: the connection and outbox are shared by the process."""

    # --- plumbing ------------------------------------------------------------------
    def _call(
        self, method: str, path: str, *, json: Any = None, params: Any = None, wait: float = 0.0
    ) -> Any:
        body = _checked(self._t.send(method, path, json=json, params=params, wait=wait))
        self._s.remember(body)
        return body

    def _patient(self, method: str, path: str, json: Any = None) -> Any:
        """A call the running task cannot do without: outbox first, retried up to ``sync_wait``."""
        deadline, delay = time.monotonic() + self.sync_wait, 0.2
        while True:
            try:
                self._s.courier.flush()
                return self._call(method, path, json=json)
            except StoreUnavailable:
                if time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _report(self, path: str, body: dict[str, Any], predict: Any) -> Any:
        """Queue a report, deliver the outbox through it; offline: ``predict(pending)``."""
        courier = self._s.courier
        pending = courier.add("POST", path, body)
        try:
            courier.flush(through=pending.seq)
        except StoreUnavailable as exc:
            answer = courier.answer(pending.seq)
            if answer is None:
                log.warning("control plane unreachable, report queued: %s (%s)", path, exc)
                return predict(pending)
        else:
            answer = courier.answer(pending.seq)
        if answer is None:  # delivered by another thread's flush first: read back
            raise StoreUnavailable(f"report {pending.report_id} answer was not kept")
        return _checked(answer)

    def _predict(self, task_id: str, **changes: Any) -> TaskRecord:
        with self._s.lock:
            known = self._s.known.get(task_id)
            if known is None:
                raise StoreUnavailable(f"control plane unreachable; task {task_id} is unknown")
            record = dataclasses.replace(
                known, state_version=known.state_version + 1, updated_at=time.time(), **changes
            )
            self._s.known[task_id] = record
        return record

    def _task_report(
        self, ticket: Ticket, verb: str, body: dict[str, Any], now: float, **predicted: Any
    ) -> TaskRecord:
        doc = {"ticket": wire.ticket_json(ticket), "at": now, **body}
        answer = self._report(
            f"/v1/tasks/{ticket.task_id}/{verb}",
            doc,
            lambda pending: {"task": wire.plain(self._predict(ticket.task_id, **predicted))},
        )
        return wire.task_from(answer["task"])

    # --- ingress and user verbs ------------------------------------------------------
    def submit(
        self,
        spec: TaskSpec,
        now: float,
        *,
        rerun_of: str | None = None,
        successor_of: str | None = None,
    ) -> TaskRecord:
        params = {k: v for k, v in (("successor_of", successor_of),) if v}
        if rerun_of:
            return self.rerun(rerun_of, now)
        body = self._call("POST", "/v1/tasks", json=spec.model_dump(mode="json"), params=params)
        return wire.task_from(body["task"])

    def submit_workflow(self, spec: WorkflowSpec, now: float) -> list[TaskRecord]:
        body = self._call("POST", "/v1/workflows", json=spec.model_dump(mode="json"))
        return [wire.task_from(t) for t in body["tasks"]]

    def rerun(self, task_id: str, now: float) -> TaskRecord:
        return wire.task_from(self._call("POST", f"/v1/tasks/{task_id}/rerun")["task"])

    def _decide(self, verb: str, task_id: str, doc: dict[str, Any]) -> TaskRecord:
        return wire.task_from(self._call("POST", f"/v1/tasks/{task_id}/{verb}", json=doc)["task"])

    def approve(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        doc = {"conversation_id": conversation_id, "revision": revision}
        return self._decide("approve", task_id, {**doc, "preview_digest": preview_digest})

    def deny(
        self, task_id: str, conversation_id: str, revision: int, preview_digest: str, now: float
    ) -> TaskRecord:
        doc = {"conversation_id": conversation_id, "revision": revision}
        return self._decide("deny", task_id, {**doc, "preview_digest": preview_digest})

    def resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self._decide("resume", task_id, {"conversation_id": conversation_id})

    def amend(
        self, task_id: str, conversation_id: str, params: dict[str, Any], now: float
    ) -> TaskRecord:
        doc = {"conversation_id": conversation_id, "params": params}
        return self._decide("amend", task_id, doc)

    def cancel(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self._decide("cancel", task_id, {"conversation_id": conversation_id})

    def user_pause(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self._decide("user-pause", task_id, {"conversation_id": conversation_id})

    def user_resume(self, task_id: str, conversation_id: str, now: float) -> TaskRecord:
        return self._decide("user-resume", task_id, {"conversation_id": conversation_id})

    def revisions(self, task_id: str) -> list[Revision]:
        body = self._call("GET", f"/v1/tasks/{task_id}/revisions")
        return [Revision(**r) for r in body["revisions"]]

    # --- worker ------------------------------------------------------------------------
    def register(self, daemon_id: str, devices: dict[str, list[str]]) -> None:
        """Tell the plane this daemon serves ``devices`` (serial -> supported methods)."""
        doc = {
            "daemon_id": daemon_id,
            "devices": [{"serial": s, "methods": sorted(m)} for s, m in devices.items()],
        }
        self._call("POST", "/v1/daemons/register", json=doc)

    def report_context(self, serial: str, context: dict[str, Any]) -> None:
        """Publish a device's planning context (``daemon.device_context.context_json``)."""
        self._call("PUT", f"/v1/devices/{serial}/context", json=context)

    def _register_owner(self, owner: str, device: str | None) -> None:
        if owner in self._s.registered or device is None:
            return
        try:
            self.register(owner.rsplit("/", 1)[0], {device: []})
            self._s.registered.add(owner)
        except StoreUnavailable as exc:
            log.debug("register failed: %s", exc)

    def claim(
        self,
        owner: str,
        device: str | None,
        now: float,
        lease_s: float = DEFAULT_LEASE_S,
        task_id: str | None = None,
    ) -> TaskRecord | None:
        """Claim at once (no wait); refused while reports wait in the outbox."""
        if task_id is None and self._empty_at is not None and self._empty_at == self._cursor:
            return None  # nothing happened since the last empty claim: save the round trip
        self._register_owner(owner, device)
        self._s.courier.flush()
        doc = {"owner": owner, "device": device, "wait": 0, "lease_s": lease_s, "task_id": task_id}
        body = self._call("POST", "/v1/claims", json=doc)
        if body.get("task") is None:
            self._empty_at = self._cursor
            return None
        self._empty_at = None
        return wire.task_from(body["task"])

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Long-poll the plane until the queue changes, ``max(timeout, idle_wait)`` or ``stop``.

        The wait is at least ``idle_wait`` so an idle worker asks once per ``idle_wait``
        seconds, not once per poll interval; ``stop`` still ends it at once.
        """
        wait = max(timeout, self.idle_wait if self._cursor is not None else 0.0)
        box: dict[str, Any] = {}
        done = threading.Event()

        def poll() -> None:
            try:
                after = -1 if self._cursor is None else self._cursor
                box["cursor"] = self._call(
                    "GET", "/v1/work", params={"after": after, "wait": wait}, wait=wait
                )["cursor"]
            except StoreUnavailable as exc:
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=poll, name="long-poll", daemon=True).start()
        while not done.wait(0.05):
            if stop.is_set():
                return
        if "cursor" in box:
            self._cursor = int(box["cursor"])
            return
        log.warning("waiting for work failed: %s", box.get("error"))
        stop.wait(max(timeout, 2.0))  # the plane is down: do not spin

    def heartbeat(self, ticket: Ticket, now: float, lease_s: float = DEFAULT_LEASE_S) -> TaskRecord:
        doc = {"ticket": wire.ticket_json(ticket), "at": now, "lease_s": lease_s}
        body = self._call("POST", f"/v1/tasks/{ticket.task_id}/heartbeat", json=doc)
        return wire.task_from(body["task"])

    def start(self, ticket: Ticket, now: float) -> TaskRecord:
        return self._task_report(
            ticket, "start", {}, now, state=TaskState.RUNNING, running_since=now
        )

    def admit(self, ticket: Ticket, now: float, approval_digest: str | None = None) -> TaskRecord:
        doc = {"ticket": wire.ticket_json(ticket), "at": now, "approval_digest": approval_digest}
        return wire.task_from(
            self._patient("POST", f"/v1/tasks/{ticket.task_id}/admit", doc)["task"]
        )

    def journal_before(
        self,
        ticket: Ticket,
        op_id: str,
        action: str,
        target: str,
        input_digest: str,
        now: float,
        approval_digest: str | None = None,
    ) -> JournalEntry:
        """The admission gate: needs the plane (retried, never queued); deduped on retry."""
        doc = {
            "report_id": f"jb-{op_id}",
            "ticket": wire.ticket_json(ticket),
            "at": now,
            "op_id": op_id,
            "action": action,
            "target": target,
            "input_digest": input_digest,
            "approval_digest": approval_digest,
        }
        body = self._patient("POST", f"/v1/tasks/{ticket.task_id}/journal", doc)
        return wire.journal_from(body["entry"])

    def journal_after(self, op_id: str, outcome: Outcome, detail: str, now: float) -> JournalEntry:
        entry = self._s.entries.get(op_id)
        if entry is None:
            raise StoreUnavailable(f"journal entry {op_id} is not known to this daemon")
        doc = {"outcome": outcome.value, "detail": detail, "at": now}

        def predict(pending: Pending) -> dict[str, Any]:
            done = dataclasses.replace(entry, outcome=outcome, detail=detail, finished_at=now)
            self._s.entries[op_id] = done
            return {"entry": wire.plain(done)}

        body = self._report(f"/v1/tasks/{entry.task_id}/journal/{op_id}", doc, predict)
        return wire.journal_from(body["entry"])

    def put_evidence(self, ticket: Ticket, kind: str, body: dict[str, Any], now: float) -> str:
        """Queue the artifacts it names and the document; offline: ``pending:<report id>``."""
        body = self._upload_artifacts(ticket.task_id, body)
        doc = {"ticket": wire.ticket_json(ticket), "at": now, "kind": kind, "body": body}
        answer = self._report(
            f"/v1/tasks/{ticket.task_id}/evidence",
            doc,
            lambda pending: {"ref": f"pending:{pending.report_id}"},
        )
        return str(answer["ref"])

    def _upload_artifacts(self, task_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Queue each local artifact file for upload; the document names its plane URL."""
        nested = body.get("evidence")
        inner: dict[str, Any] = nested if isinstance(nested, dict) else body
        artifacts = inner.get("artifacts")
        if not isinstance(artifacts, dict) or not artifacts:
            return body
        moved: dict[str, Any] = {}
        for name, value in artifacts.items():
            path = Path(str(value))
            if isinstance(value, str) and path.is_file():
                url = f"/v1/tasks/{task_id}/artifacts/{path.name}"
                self._s.courier.queue("PUT", url, {}, file=str(path))
                moved[name] = url
            else:
                moved[name] = value
        if inner is body:
            return {**body, "artifacts": moved}
        return {**body, "evidence": {**inner, "artifacts": moved}}

    def complete(
        self,
        ticket: Ticket,
        now: float,
        observed_target: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        known = self._s.known.get(ticket.task_id)
        refs = (known.evidence_refs if known else ()) + tuple(evidence_refs)
        doc = {"observed_target": observed_target, "evidence_refs": list(evidence_refs)}
        return self._task_report(
            ticket,
            "complete",
            doc,
            now,
            state=TaskState.COMPLETED,
            observed_target=observed_target,
            evidence_refs=refs,
            lease_owner=None,
        )

    def fail(
        self, ticket: Ticket, failure: Failure, now: float, evidence_refs: tuple[str, ...] = ()
    ) -> TaskRecord:
        known = self._s.known.get(ticket.task_id)
        state = TaskState.FAILED
        if known is not None:
            state = after_failure(failure.reason, known.attempt, known.max_attempts, known.source)
        doc = {"failure": wire.failure_json(failure), "evidence_refs": list(evidence_refs)}
        return self._task_report(
            ticket, "fail", doc, now, state=state, failure=failure, lease_owner=None
        )

    def pause(
        self,
        ticket: Ticket,
        state: TaskState,
        now: float,
        waiting_for: str | None = None,
        evidence_refs: tuple[str, ...] = (),
    ) -> TaskRecord:
        doc = {
            "state": state.value,
            "waiting_for": waiting_for,
            "evidence_refs": list(evidence_refs),
        }
        return self._task_report(
            ticket, "pause", doc, now, state=state, waiting_for=waiting_for, lease_owner=None
        )

    def request_approval(self, ticket: Ticket, preview: Preview, now: float) -> TaskRecord:
        doc = {"preview": wire.preview_json(preview)}
        return self._task_report(
            ticket,
            "request_approval",
            doc,
            now,
            state=TaskState.APPROVAL,
            approval_digest=preview.digest,
            approval_status="pending",
            lease_owner=None,
        )

    def confirm_stopped(self, ticket: Ticket, summary: StopSummary, now: float) -> TaskRecord:
        doc = {"summary": {"done": list(summary.done), "not_done": list(summary.not_done)}}
        return self._task_report(
            ticket, "confirm_stopped", doc, now, state=TaskState.STOPPED, stop_summary=summary
        )

    # --- system --------------------------------------------------------------------------
    def due_for_sweep(self, now: float) -> list[TaskRecord]:
        """Nothing: the control plane sweeps its own queue."""
        return []

    def expire(self, task_id: str, state_version: int, failure: Failure, now: float) -> TaskRecord:
        raise StoreUnavailable("the control plane sweeps its own queue; daemons do not expire")

    def recover(self, owner_prefix: str, now: float) -> list[TaskRecord]:
        """Deliver every queued report first, then fail what this daemon still held."""
        doc = {"daemon_id": owner_prefix.rstrip("/"), "at": now}
        return [wire.task_from(t) for t in self._patient("POST", "/v1/recover", doc)["tasks"]]

    # --- queries -------------------------------------------------------------------------
    def _status(self, task_id: str) -> dict[str, Any]:
        body: dict[str, Any] = self._call("GET", f"/v1/tasks/{task_id}")
        for entry in body.get("journal") or []:
            self._s.remember({"entry": entry})
        return body

    def get(self, task_id: str) -> TaskRecord:
        """The task from the plane; while it is down, the last known record."""
        try:
            self._s.courier.flush()
            return wire.task_from(self._status(task_id)["task"])
        except StoreUnavailable:
            known = self._s.known.get(task_id)
            if known is None:
                raise
            return known

    def list_tasks(
        self,
        *,
        states: tuple[TaskState, ...] = (),
        device: str | None = None,
        conversation_id: str | None = None,
        workflow_id: str | None = None,
        limit: int = 100,
    ) -> list[TaskRecord]:
        """Tasks matching the filters; repeated while the queue did not change, from cache.

        An idle worker's pause watch asks the same question every idle round; the answer
        can only change with an event, so it costs no request until the cursor moves.
        """
        params: dict[str, Any] = {"state": [s.value for s in states], "limit": limit}
        extra = {"device": device, "conversation_id": conversation_id, "workflow_id": workflow_id}
        params.update({k: v for k, v in extra.items() if v is not None})
        key = repr(sorted(params.items()))
        cached = self._lists.get(key)
        if cached is not None and self._cursor is not None and cached[0] == self._cursor:
            return list(cached[1])
        tasks = [wire.task_from(t) for t in self._call("GET", "/v1/tasks", params=params)["tasks"]]
        if self._cursor is not None:
            self._lists[key] = (self._cursor, tasks)
        return tasks

    def queue_status(self, device: str | None = None) -> dict[str, int]:
        params = {"device": device} if device else None
        return dict(self._call("GET", "/v1/queue", params=params)["queue"])

    def workflow(self, workflow_id: str) -> WorkflowRecord:
        return wire.workflow_from(self._call("GET", f"/v1/workflows/{workflow_id}")["workflow"])

    def events(self, after: int = 0, limit: int = 100) -> list[Event]:
        body = self._call("GET", "/v1/events", params={"after": after, "limit": min(limit, 1000)})
        return [wire.event_from(e) for e in body["events"]]

    def journal(self, task_id: str) -> list[JournalEntry]:
        return [wire.journal_from(e) for e in self._status(task_id)["journal"]]

    def unknown_entries(self, task_id: str) -> list[JournalEntry]:
        """Open entries; the plane is needed (retried up to ``sync_wait``)."""
        body = self._patient("GET", f"/v1/tasks/{task_id}")
        entries = [wire.journal_from(e) for e in body["journal"]]
        for entry in entries:
            self._s.entries[entry.op_id] = entry
        return [e for e in entries if e.open]

    def evidence(self, task_id: str) -> list[dict[str, Any]]:
        return list(self._status(task_id)["evidence"])

    def pending_reports(self) -> int:
        """Reports written to the outbox and not yet acknowledged."""
        return self._s.courier.outbox.count()


def open_http_store(url: str) -> HttpStore:
    """The store for ``http(s)://`` queue URLs: token and outbox from the environment.

    Token: ``$PHONED_TOKEN`` or the file ``$PHONED_TOKEN_FILE``. Outbox:
    ``$PHONED_OUTBOX``, else ``outbox.db`` in the configured state directory.
    """
    token = os.environ.get(TOKEN_ENV, "")
    if not token and os.environ.get(TOKEN_FILE_ENV):
        token = Path(os.environ[TOKEN_FILE_ENV]).read_text(encoding="utf-8").strip()
    if not token:
        raise StoreUnavailable(
            f"an http(s) queue needs a token: set {TOKEN_ENV} or {TOKEN_FILE_ENV}"
        )
    outbox = os.environ.get(OUTBOX_ENV)
    if not outbox:
        from daemon import config

        outbox = str(config.load(config.default_config_path()).state_path / "outbox.db")
    return HttpStore(url, token, Path(outbox))


def close_shared() -> None:
    """Stop every outbox courier of this process (as at exit); queued reports stay on disk."""
    with _SHARED_LOCK:
        shared = list(_SHARED.values())
        _SHARED.clear()
    for item in shared:
        item.courier.close()
        item.courier.outbox.close()
        item.transport.close()
