"""The control plane's ``/v1`` API as a client: the transport, and ``PlaneClient``.

``PlaneClient`` is the ``PlannerStore`` of an ``http(s)://`` queue: each verb is one call
of the API with the caller's token (a steering verb: its operation's wire form posted to
its route, ``phoned.daemon.lifecycle.ops``) (planner, approver or viewer); the plane applies the
lifecycle rules, nothing is predicted or cached here, and while the plane is down every
verb is ``StoreUnavailable``. The ``phoned`` verbs (``submit``, ``approve``, ``show``, ...)
use it for ``--queue https://plane:8400``. A daemon's side is ``HttpStore``.

``Transport.send`` is the one method to the plane (``urllib3``, sync, kept-alive
connections, explicit timeouts, no retries and no redirects): transport failures become
``StoreUnavailable``; ``checked`` turns an answer into its body, the named lifecycle error
(``phoned.daemon.lifecycle.wire.error_from``) or, for 5xx and refused tokens,
``StoreUnavailable``. It was ``httpx`` until issue #35: ``httpx`` spends more Python per
request (building it, its cookie jar, its pure-Python HTTP/1.1 parser), on both halves of
a long-poll pickup: interleaved, ``scripts/bench_control_plane.py`` picked up in 5.6-5.8 ms
median through ``httpx`` and 4.5-5.2 ms through this transport (``bench/README.md``).
What ``httpx`` did for us it still does: a proxy from ``HTTP(S)_PROXY``/``ALL_PROXY``
unless ``NO_PROXY`` names the host, certificates checked against ``SSL_CERT_FILE``/
``SSL_CERT_DIR`` when set, else certifi's bundle, and ``params`` encoded as ``httpx``
encoded them.
"""

from __future__ import annotations

import ipaddress
import json as jsonlib
import logging
import os
import ssl
import urllib.request
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

import certifi
import urllib3
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
        self._base = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self._pool, proxied = _pool_for(self._base)
        # a proxy is asked for the whole URL; the plane's own pool, for its path
        self._prefix = self._base if proxied else urlsplit(self._base).path

    def close(self) -> None:
        if isinstance(self._pool, urllib3.PoolManager):
            self._pool.clear()
        else:
            self._pool.close()

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
        url = self._prefix + path + (f"?{query_string(params)}" if params else "")
        headers, body = self._headers, content
        if content is None and json is not None:
            headers = {**headers, "Content-Type": "application/json"}
            body = jsonlib.dumps(
                json, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode()
        timeout = urllib3.Timeout(connect=min(3.0, self._timeout), read=self._timeout + wait)
        try:
            response = self._pool.urlopen(
                method, url, body=body, headers=headers, timeout=timeout,
                retries=False, redirect=False,
            )  # fmt: skip
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise StoreUnavailable(f"control plane unreachable: {type(exc).__name__}") from exc
        data = response.data
        try:
            answer = jsonlib.loads(data) if data else None
        except ValueError:
            answer = {"message": data.decode("utf-8", "replace")[:200]}
        return Answer(response.status, answer)


def query_string(params: dict[str, Any]) -> str:
    """``params`` as ``httpx`` encoded them: a list repeats its key, True/False are
    ``true``/``false``, None is an empty value."""

    def text(value: Any) -> str:
        if value is True or value is False:
            return "true" if value else "false"
        return "" if value is None else str(value)

    pairs = [
        (key, text(item))
        for key, value in params.items()
        for item in (value if isinstance(value, list | tuple) else [value])
    ]
    return urlencode(pairs)


def _pool_for(base: str) -> tuple[urllib3.PoolManager | urllib3.HTTPConnectionPool, bool]:
    """Kept-alive connections to the plane at ``base``, and whether they go through a
    proxy: the environment's proxy for its scheme unless ``NO_PROXY`` names the host.
    Certificates are checked against ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set, else
    certifi's bundle (as ``httpx``)."""
    parts = urlsplit(base)
    options: dict[str, Any] = {"maxsize": 8}
    if parts.scheme == "https":
        cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
        if not (cafile or capath):
            cafile = certifi.where()
        options["ssl_context"] = ssl.create_default_context(cafile=cafile, capath=capath)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass(parts.hostname or ""):
        return urllib3.ProxyManager(proxy, **options), True
    return urllib3.connection_from_url(base, **options), False


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
