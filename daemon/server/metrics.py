"""``GET /metrics`` of ``phoned serve``: the plane's Prometheus metrics (issue #36).

The families are ``phoned.daemon.runtime.metrics``'s, on the plane's own registry: its counters
hear every task write of the plane's stores (each request thread's, the sweeper's, the
schedule tick's), so a fleet's transitions, failures, claims and waits are counted where
they are ruled. At each scrape it reads the queue's one aggregate (``state_summary``: one
``GROUP BY state`` query), the phone holds and the presence rows (a row per phone), never
the tasks themselves.

A scrape needs a bearer token of the ``metrics`` role or an unbound ``viewer`` (the counts
span every conversation, so a token bound to some is refused, 403). A missing or unknown
token is 401 with no body, as is every refusal here: a scraper learns nothing without one.
Not in the OpenAPI document (it is not JSON).
"""

from __future__ import annotations

import time

from fastapi import APIRouter, Request, Response

from phoned.daemon.runtime.metrics import CONTENT_TYPE, PhonedMetrics, Phones
from phoned.daemon.server.auth import Right
from phoned.daemon.server.deps import plane_of
from phoned.daemon.server.plane import Plane
from phoned.daemon.store.sql_store import SqlStore, StateSummary

router = APIRouter()


def plane_metrics(plane: Plane) -> PhonedMetrics:
    """The plane's metrics, reading its queue and phones at each scrape."""
    metrics = plane.metrics

    def queue() -> list[StateSummary]:
        store = plane.store()
        return store.state_summary(time.time()) if isinstance(store, SqlStore) else []

    def phones() -> Phones:
        store, now = plane.store(), time.time()
        held = frozenset(h.serial for h in store.phone_holds() if h.expires_at > now)
        rows = [r for r in store.presence() if r.serial]
        claims = tuple((r.serial, r.claimed_at) for r in rows if r.claimed_at is not None)
        return Phones(held, frozenset(r.serial for r in rows), claims)

    metrics.watch(queue=queue, phones=phones)
    return metrics


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """The Prometheus text format; 401 (no body) without a known token."""
    plane = plane_of(request)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    principal = plane.tokens.lookup(token.strip()) if scheme.lower() == "bearer" else None
    if principal is None:
        return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
    if not principal.may(Right.SCRAPE) or principal.bound:
        return Response(status_code=403)
    return Response(plane.metrics.exposition(), media_type=CONTENT_TYPE)
