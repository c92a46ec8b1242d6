"""Request dependencies: the plane, the caller's principal, and the right it must hold.

Tokens are read from the ``Authorization: Bearer`` header only (never a query string, so
no access log can carry one) and are never logged: the principal's ``name`` is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from daemon.lifecycle.records import TaskRecord
from daemon.server.auth import Principal, Right, Role
from daemon.server.plane import Plane

bearer = HTTPBearer(auto_error=False, description="A token from the tokens file")


def plane_of(request: Request) -> Plane:
    """The running control plane."""
    plane: Plane = request.app.state.plane
    return plane


def authenticated(
    request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> Principal:
    """The token's principal; 401 when the token is missing or unknown."""
    if creds is None or not creds.credentials:
        raise HTTPException(401, "a bearer token is required", {"WWW-Authenticate": "Bearer"})
    principal = plane_of(request).tokens.lookup(creds.credentials)
    if principal is None:
        raise HTTPException(401, "unknown token", {"WWW-Authenticate": "Bearer"})
    return principal


def require(right: Right) -> Callable[..., Principal]:
    """A dependency admitting only principals whose role grants ``right`` (else 403)."""

    def dependency(principal: Annotated[Principal, Depends(authenticated)]) -> Principal:
        if not principal.may(right):
            raise HTTPException(403, f"role {principal.role.value} may not {right.value}")
        return principal

    return dependency


def check_serves(principal: Principal, serial: str | None) -> None:
    """403 unless ``principal`` is a daemon allowed to serve ``serial``."""
    if not principal.serves(serial):
        raise HTTPException(403, f"this daemon token may not serve device {serial}")


def check_reads(principal: Principal, task: TaskRecord) -> None:
    """Readers see every task; a daemon sees only tasks on its own devices."""
    if principal.role is Role.DAEMON:
        check_serves(principal, task.device)
    elif not principal.may(Right.READ):
        raise HTTPException(403, f"role {principal.role.value} may not read")


def owner_serial(owner: str) -> str:
    """The device part of a lease owner ``<daemon id>/<serial>``."""
    return owner.rsplit("/", 1)[-1]


def report_time(at: float | None) -> float:
    """The time a report happened: the daemon's clock, never later than the server's."""
    now = time.time()
    return now if at is None else min(at, now)


PlaneDep = Annotated[Plane, Depends(plane_of)]
Caller = Annotated[Principal, Depends(authenticated)]
Reader = Annotated[Principal, Depends(require(Right.READ))]
Planner = Annotated[Principal, Depends(require(Right.PLAN))]
Approver = Annotated[Principal, Depends(require(Right.DECIDE))]
Daemon = Annotated[Principal, Depends(require(Right.SERVE))]
