"""The FastAPI application of ``phoned serve``.

``create_app(settings, tokens)`` builds the app over the ``Store`` its queue URL names.
Lifecycle errors become JSON answers (``phoned.daemon.lifecycle.wire``): 422 ``InvalidTask`` with
the refused fields, 404 ``TaskNotFound``, 409 for guard, approval, conversation and
terminal errors, 503 ``StoreUnavailable``. Request validation errors use the same shape.

``phoned.daemon.server.limits.RequestLimits`` wraps the app: body caps (413), JSON depth, finite
numbers and NUL characters (422) are checked before any handler or token check runs.
Inside it, ``phoned.daemon.server.submit_lane.SubmitLane`` answers a planner's plain submit
with the submit route's own steps, without FastAPI's routing (issue #35).
``/docs`` and ``/redoc`` are off unless ``settings.docs`` (their scripts come from a CDN);
``/openapi.json`` is always served.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.wire import error_json, error_status
from phoned.daemon.planning.catalogue import openapi_schemas
from phoned.daemon.server import (
    metrics,
    monitor,
    routes_control,
    routes_daemon,
    routes_planner,
    routes_read,
    routes_schedules,
)
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.limits import Limits, RequestLimits
from phoned.daemon.server.plane import Plane
from phoned.daemon.server.settings import ServerSettings
from phoned.daemon.server.submit_lane import SubmitLane

API_VERSION = "1.0.0"
DESCRIPTION = """\
The phoned control plane: planners submit and steer tasks, approvers decide, daemons
claim tasks for their phones and report every transition. Every call needs
`Authorization: Bearer <token>`; roles: viewer (read), planner (read + submit, amend,
cancel, rerun, resume), approver (read + approve, deny), daemon (its own devices only).
Errors: `{"error": <name>, "message": ..., "errors": [{field, message}]}`.
"""


async def _lifecycle_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, LifecycleError)
    return JSONResponse(error_json(exc), error_status(exc))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"field": ".".join(str(p) for p in e.get("loc", ())[1:]) or "(root)", "message": e["msg"]}
        for e in exc.errors()
    ]
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return JSONResponse(
        {"error": "InvalidRequest", "message": f"invalid request: {detail}", "errors": errors}, 422
    )


def create_app(settings: ServerSettings, tokens: TokenBook) -> FastAPI:
    """The control-plane app; its lifespan starts and stops the plane's threads."""
    plane = Plane(settings, tokens)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.worker_threads
        plane.start()
        try:
            yield
        finally:
            plane.stop()

    app = FastAPI(
        title="phoned control plane",
        version=API_VERSION,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs" if settings.docs else None,
        redoc_url="/redoc" if settings.docs else None,
    )
    app.state.plane = plane
    app.add_exception_handler(LifecycleError, _lifecycle_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    modules = (routes_planner, routes_read, routes_daemon, routes_control, routes_schedules)
    for module in (*modules, monitor, metrics):
        app.include_router(module.router)
    # the operations' own routes, from their declarations (phoned.daemon.lifecycle.operation)
    app.include_router(routes_daemon.report_router())
    app.include_router(routes_planner.steering_router())
    metrics.plane_metrics(plane)
    limits = Limits(settings.max_body_bytes, settings.max_artifact_bytes, settings.max_json_depth)
    app.add_middleware(SubmitLane, plane=plane)  # inside RequestLimits: added first
    app.add_middleware(
        RequestLimits, limits=limits, known_token=lambda t: tokens.lookup(t) is not None
    )
    _publish_method_params(app)
    return app


def _publish_method_params(app: FastAPI) -> None:
    """Put every task method's params schema in the document (``params.<method>``)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        doc = build()  # FastAPI's cached document; adding the same schemas again is a no-op
        doc.setdefault("components", {}).setdefault("schemas", {}).update(openapi_schemas())
        return doc

    app.openapi = openapi  # type: ignore[method-assign]


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI document (what ``/openapi.json`` serves)."""
    return app.openapi()


def run(app: FastAPI, **options: Any) -> None:
    """``uvicorn.run(app, **options)``, except that a shutdown signal answers long-polls.

    uvicorn waits for in-flight requests before it shuts the app down; a waiting long-poll
    would hold that up for its whole wait. On SIGTERM/SIGINT every waiting poll answers at
    once (nothing new: the client polls again, elsewhere or later), so the server stops
    promptly.

    ``access_log`` (default on) logs each request once its answer is sent
    (``phoned.daemon.server.access_log``), not before its headers as uvicorn does.
    """

    import uvicorn  # lazy: uvicorn is loaded only by the verbs that use it (start-up)

    # lazy: it imports uvicorn
    from phoned.daemon.server.access_log import AccessLog, log_config

    plane: Plane = app.state.plane

    class _Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # a thread, not here: a signal handler may run while this thread holds the lock
            threading.Thread(target=plane.wakeup.release, name="release", daemon=True).start()
            super().handle_exit(sig, frame)

    asgi: Any = AccessLog(app) if options.pop("access_log", True) else app
    logs = log_config(options.get("log_level") or "info")
    server = _Server(uvicorn.Config(asgi, **options, access_log=False, log_config=logs))
    server.run()
    if not server.started:
        raise SystemExit(3)  # as uvicorn.run: the server could not start
