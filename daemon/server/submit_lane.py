"""``SubmitLane``: a planner's plain submit (``POST /v1/tasks``) without FastAPI's routing.

FastAPI spends about 0.4 ms of Python on a submit before its handler runs (routing, the
body read and validated as a ``dict``, three dependencies solved, two query parameters),
twice that after an idle spell, and a daemon's long-polled claim waits for all of it
(issue #35). This ASGI layer, inside ``RequestLimits`` (body caps, JSON shape, a known
token: all checked already), answers the common case itself with the route's own steps:
``parsed_task``, ``check_submits`` and ``submitted`` (``routes_planner``).

It takes a request only when it is ``POST /v1/tasks`` with no query string, a JSON
content type, a bearer token of a principal that may plan, a JSON object body that parses
as a task the token may submit into. Everything else (a refused field, another
conversation, ``?wait=``, ``?successor_of=``, a viewer's token, another path) goes on to
FastAPI with the body as read, which answers it as before: so every refusal is the
route's own, and the OpenAPI document still describes the route. A store error while
queueing is answered as the app's exception handler answers it.
"""

from __future__ import annotations

import json

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.wire import error_json, error_status
from phoned.daemon.server.auth import Principal, Right
from phoned.daemon.server.deps import check_submits
from phoned.daemon.server.limits import bearer_token, header, read_body, replay
from phoned.daemon.server.plane import Plane
from phoned.daemon.server.routes_planner import parsed_task, submitted
from starlette.types import ASGIApp, Receive, Scope, Send

PATH = ops.Submit.route


class SubmitLane:
    """ASGI middleware: a plain submit straight to ``routes_planner.submitted``."""

    def __init__(self, app: ASGIApp, plane: Plane) -> None:
        self.app = app
        self.plane = plane

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = self._planner(scope)
        if principal is None:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        answer = await self._answer(principal, body)
        if answer is None:  # FastAPI's route answers it, refusals included
            await self.app(scope, replay(body, receive), send)
            return
        await answer(scope, receive, send)

    def _planner(self, scope: Scope) -> Principal | None:
        """The principal of a request this lane may take, else None."""
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] != PATH
            or scope.get("query_string")
            or not _json_content(scope)
        ):
            return None
        token = bearer_token(scope)
        principal = self.plane.tokens.lookup(token) if token else None
        return principal if principal is not None and principal.may(Right.PLAN) else None

    async def _answer(self, principal: Principal, body: bytes) -> JSONResponse | None:
        """The submit's answer, or None when the route must answer (a refusal)."""
        try:
            raw = json.loads(body)
            if type(raw) is not dict:
                return None
            spec = parsed_task(raw)
            check_submits(principal, spec.conversation_id)
        except (ValueError, LifecycleError, HTTPException):
            return None
        try:
            return await submitted(self.plane, principal, spec, None, 0.0)
        except LifecycleError as exc:
            return JSONResponse(error_json(exc), error_status(exc))


def _json_content(scope: Scope) -> bool:
    """Whether the request says its body is JSON (``Content-Type: application/json``)."""
    value = header(scope, b"content-type")
    return value is not None and value.split(b";", 1)[0].strip().lower() == b"application/json"
