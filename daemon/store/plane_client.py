"""The control plane's ``/v1`` API as a client: the transport, and ``PlaneClient``.

``PlaneClient`` is the ``PlannerStore`` of an ``http(s)://`` queue: each verb is one call
of the API with the caller's token (a steering verb: its operation's wire form posted to
its route, ``phoned.daemon.lifecycle.ops``) (planner, approver or viewer); the plane applies the
lifecycle rules, nothing is predicted or cached here, and while the plane is down every
verb is ``StoreUnavailable``. The ``phoned`` verbs (``submit``, ``approve``, ``show``, ...)
use it for ``--queue https://plane:8400``. A daemon's side is ``HttpStore``.

``Transport.send`` is the one method to the plane (``httpx``, sync, explicit timeouts):
transport failures become ``StoreUnavailable``; ``checked`` turns an answer into its body,
the named lifecycle error (``phoned.daemon.lifecycle.wire.error_from``) or, for 5xx and refused
tokens, ``StoreUnavailable``.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from phoned.daemon.lifecycle import ops, wire
from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.lifecycle.records import (
    Event,
    JournalEntry,
    Revision,
    TaskQuery,
    TaskRecord,
    WorkflowRecord,
)
from phoned.daemon.lifecycle.schedules import ScheduleRecord, ScheduleRun, schedule_from
from phoned.daemon.store.holds import Holder
from phoned.daemon.store.outbox import Answer
from phoned.daemon.store.presence import Presence
from phoned.daemon.store.protocol import PlannerStore

log = logging.getLogger(__name__)
R = TypeVar("R")

TOKEN_ENV = "PHONED_TOKEN"  # the caller's bearer token
TOKEN_FILE_ENV = "PHONED_TOKEN_FILE"  # or a file holding it


def token_from_env() -> str:
    """The bearer token: ``$PHONED_TOKEN``, else the file ``$PHONED_TOKEN_FILE``."""
    token = os.environ.get(TOKEN_ENV, "")
    if not token and os.environ.get(TOKEN_FILE_ENV):
        token = Path(os.environ[TOKEN_FILE_ENV]).read_text(encoding="utf-8").strip()
    if not token:
        raise StoreUnavailable(
            f"an http(s) queue needs a token: set {TOKEN_ENV} or {TOKEN_FILE_ENV}"
        )
    return token


_WARNED: set[str] = set()


def plain_http_risk(url: str) -> bool:
    """True for an ``http://`` plane on an address other than loopback (token in clear)."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        return False
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: not known to stay on this machine
        return True


def warn_plain_http(url: str, log: logging.Logger) -> None:
    """Log once per URL when a plane is reached over plain HTTP off this machine."""
    if url in _WARNED or not plain_http_risk(url):
        return
    _WARNED.add(url)
    log.warning(
        "the control plane %s is plain http:// on a non-loopback address: the bearer token "
        "and every report cross the network unencrypted; serve it with --tls-cert/--tls-key "
        "and use https://",
        url,
    )


class Transport:
    """One method to the plane: ``send``; every failure below it is ``StoreUnavailable``."""

    def __init__(self, url: str, token: str, timeout: float = 10.0) -> None:
        warn_plain_http(url, log)  # the token crosses the network in clear
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


def checked(answer: Answer) -> Any:
    """The body of a success; the named error of a refusal; ``StoreUnavailable`` otherwise."""
    if 200 <= answer.status < 300:
        return answer.body
    if answer.status in (401, 403):
        body = answer.body if isinstance(answer.body, dict) else {}
        message = body.get("detail") or body.get("message") or ""
        raise StoreUnavailable(f"control plane refused the token (HTTP {answer.status}): {message}")
    raise wire.error_from(answer.body, answer.status)


class PlaneClient(PlannerStore):
    """The ``PlannerStore`` protocol as calls of the plane's API (see the module docstring)."""

    def __init__(self, url: str, token: str, *, timeout: float = 10.0) -> None:
        self._t = Transport(url, token, timeout)

    def close(self) -> None:
        """Close the connection."""
        self._t.close()

    def _call(self, method: str, path: str, *, json: Any = None, params: Any = None) -> Any:
        return checked(self._t.send(method, path, json=json, params=params))

    def _task(self, method: str, path: str, **kw: Any) -> TaskRecord:
        return wire.task_from(self._call(method, path, **kw)["task"])

    # --- planner and approver verbs ------------------------------------------------------
    def apply(self, op: ops.Op[R]) -> R:
        """Send the operation's wire form to its route; what the plane's answer carries."""
        body = self._call(op.method, op.path(), json=op.to_wire(), params=op.query())
        return op.answer_from(body)

    # --- reads -----------------------------------------------------------------------------
    def revisions(self, task_id: str) -> list[Revision]:
        body = self._call("GET", f"/v1/tasks/{task_id}/revisions")
        return [Revision(**r) for r in body["revisions"]]

    def get(self, task_id: str) -> TaskRecord:
        return self._task("GET", f"/v1/tasks/{task_id}")

    def tasks(self, query: TaskQuery) -> list[TaskRecord]:
        body = self._call("GET", "/v1/tasks", params=query.params())
        return [wire.task_from(t) for t in body["tasks"]]

    def queue_status(
        self, device: str | None = None, conversation_id: str | None = None
    ) -> dict[str, int]:
        wanted = {"device": device, "conversation_id": conversation_id}
        params = {k: v for k, v in wanted.items() if v} or None
        return dict(self._call("GET", "/v1/queue", params=params)["queue"])

    def presence(self) -> list[Presence]:
        """Which daemons serve the plane's queue (``GET /v1/presence``)."""
        return [Presence.from_json(p) for p in self._call("GET", "/v1/presence")["presence"]]

    def phone_holds(self) -> list[Holder]:
        """Who drives each phone (``GET /v1/holds``)."""
        return [Holder.from_json(h) for h in self._call("GET", "/v1/holds")["holds"]]

    def workflow(self, workflow_id: str) -> WorkflowRecord:
        return wire.workflow_from(self._call("GET", f"/v1/workflows/{workflow_id}")["workflow"])

    def events(self, after: int = 0, limit: int = 100) -> list[Event]:
        body = self._call("GET", "/v1/events", params={"after": after, "limit": min(limit, 1000)})
        return [wire.event_from(e) for e in body["events"]]

    def journal(self, task_id: str) -> list[JournalEntry]:
        return [wire.journal_from(e) for e in self._call("GET", f"/v1/tasks/{task_id}")["journal"]]

    def evidence(self, task_id: str) -> list[dict[str, Any]]:
        return list(self._call("GET", f"/v1/tasks/{task_id}")["evidence"])

    # --- schedules (added, removed, paused by ``apply``) -----------------------------------
    def schedules(self, now: float, conversation_id: str | None = None) -> list[ScheduleRecord]:
        """The schedules the token reaches (``GET /v1/schedules``); ``now`` is the plane's."""
        params = {"conversation_id": conversation_id} if conversation_id else None
        body = self._call("GET", "/v1/schedules", params=params)
        return [schedule_from(s) for s in body["schedules"]]

    def schedule(self, schedule_id: str, now: float) -> ScheduleRecord:
        """One schedule (``GET /v1/schedules/{id}``)."""
        return schedule_from(self._call("GET", f"/v1/schedules/{schedule_id}")["schedule"])

    def schedule_runs(self, schedule_id: str, limit: int = 20) -> list[ScheduleRun]:
        """The newest runs of a schedule, newest first."""
        runs = self._call("GET", f"/v1/schedules/{schedule_id}")["runs"]
        return [ScheduleRun(**r) for r in runs[:limit]]
