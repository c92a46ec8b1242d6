"""Request dependencies: the plane, the caller's principal, the right and scope it needs.

Tokens are read from the ``Authorization: Bearer`` header only (never a query string, so
no access log can carry one) and are never logged: the principal's ``name`` is.

A token bound to conversations sees a task of another conversation as missing (the same
404 ``TaskNotFound`` an unknown id gets), and a bound viewer gets every document with the
task's phone numbers and message bodies replaced by ``redact()`` stand-ins.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from phoned.daemon.lifecycle.errors import TaskNotFound
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.server.auth import Principal, Right, Role
from phoned.daemon.server.plane import Plane
from phoned.device.actions import registry as methods_registry  # REGISTRY read at call time
from phoned.device.private import redact

# keys whose text values carry a number or a message body (evidence, previews, params; a
# notification's title and text in notifications.list's value; a choice's answer line,
# amend_command, quotes the candidate's number)
SENSITIVE_KEYS = frozenset(
    {
        "to",
        "body",
        "text",
        "address",
        "number",
        "phone",
        "recipient",
        "title",
        "content_text",
        "label",
        "amend_command",
    }
)

bearer = HTTPBearer(auto_error=False, description="A token from the tokens file")


def plane_of(request: Request) -> Plane:
    """The running control plane."""
    plane: Plane = request.app.state.plane
    return plane


# The dependencies are coroutines: they only read memory, and FastAPI runs a plain ``def``
# dependency on a worker thread, a thread hop per dependency per request (issue #35: a
# GET /v1/tasks round trip 1.59 -> 1.41 ms median without them).
async def _plane(request: Request) -> Plane:
    """``plane_of`` as a dependency."""
    return plane_of(request)


async def authenticated(
    request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Principal:
    """The token's principal; 401 when the token is missing or unknown."""
    return _principal(request, creds)


def _principal(request: Request, creds: HTTPAuthorizationCredentials | None) -> Principal:
    if creds is None or not creds.credentials:
        raise HTTPException(401, "a bearer token is required", {"WWW-Authenticate": "Bearer"})
    principal = plane_of(request).tokens.lookup(creds.credentials)
    if principal is None:
        raise HTTPException(401, "unknown token", {"WWW-Authenticate": "Bearer"})
    return principal


def require(right: Right) -> Callable[..., Awaitable[Principal]]:
    """A dependency admitting only principals whose role grants ``right`` (else 403).

    It reads the token itself rather than through ``authenticated``: FastAPI solves each
    level of dependencies in turn, and one level fewer is 0.1 ms of every request's
    pickup path (issue #35)."""

    async def dependency(
        request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
    ) -> Principal:
        principal = _principal(request, creds)
        if not principal.may(right):
            raise HTTPException(403, f"role {principal.role.value} may not {right.value}")
        return principal

    return dependency


def check_serves(principal: Principal, serial: str | None) -> None:
    """403 unless ``principal`` is a daemon allowed to serve ``serial``."""
    if not principal.serves(serial):
        raise HTTPException(403, f"this daemon token may not serve device {serial}")


def check_reads(principal: Principal, task: TaskRecord) -> None:
    """Readers see the tasks of their conversations; a daemon, tasks on its own devices."""
    if principal.role is Role.DAEMON:
        check_serves(principal, task.device)
    elif not principal.may(Right.READ):
        raise HTTPException(403, f"role {principal.role.value} may not read")
    else:
        check_scope(principal, task)


def check_scope(principal: Principal, task: TaskRecord) -> TaskRecord:
    """``task``, unless it is in a conversation the token is not bound to: then 404."""
    if principal.role is not Role.DAEMON and not principal.sees(task.conversation_id):
        raise TaskNotFound(f"no task {task.id}")
    return task


def check_submits(principal: Principal, conversation_id: str) -> None:
    """403 naming ``conversation_id`` when a bound token submits into another conversation."""
    if not principal.sees(conversation_id):
        raise HTTPException(
            403, f"conversation_id: this token may not act in conversation {conversation_id!r}"
        )


def sensitive_texts(task: TaskRecord) -> list[str]:
    """The task's phone numbers and message bodies (its method's sensitive params).

    A number is listed as given and in the ``+digits`` form the phone stores it in.
    """

    declared = methods_registry.REGISTRY.get(task.method)
    names = declared.sensitive if declared is not None else ()
    texts: list[str] = []
    for name in names:
        value = task.params.get(name)
        if value in (None, ""):
            continue
        text = str(value)
        texts.append(text)
        digits = "".join(c for c in text if c.isdigit())
        if len(digits) >= 3 and digits != text:
            texts.append(("+" if text.lstrip().startswith("+") else "") + digits)
    return sorted(set(texts), key=len, reverse=True)


def redacted(principal: Principal, task: TaskRecord, doc: Any) -> Any:
    """``doc`` as ``principal`` may see it: a bound viewer gets numbers and bodies redacted."""
    if not principal.redacted:
        return doc
    return _redact(doc, sensitive_texts(task))


def _redact(value: Any, texts: list[str], key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, texts, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, texts) for v in value]
    if not isinstance(value, str) or not value:
        return value
    if key in SENSITIVE_KEYS:
        return redact(value)
    for text in texts:
        if text in value:
            value = value.replace(text, redact(text))
    return value


def owner_serial(owner: str) -> str:
    """The device part of a lease owner ``<daemon id>/<serial>``."""
    return owner.rsplit("/", 1)[-1]


def report_time(at: float | None) -> float:
    """The time a report happened: the daemon's clock, never later than the server's."""
    now = time.time()
    return now if at is None else min(at, now)


PlaneDep = Annotated[Plane, Depends(_plane)]
Caller = Annotated[Principal, Depends(authenticated)]
Reader = Annotated[Principal, Depends(require(Right.READ))]
Planner = Annotated[Principal, Depends(require(Right.PLAN))]
Approver = Annotated[Principal, Depends(require(Right.DECIDE))]
Daemon = Annotated[Principal, Depends(require(Right.SERVE))]
