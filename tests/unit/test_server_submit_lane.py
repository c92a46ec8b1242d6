"""``SubmitLane`` (issue #35): a plain submit is answered without FastAPI's routing, and
everything else reaches the route as before, so the lane never answers differently.

In-process app over a real SQLite queue. The route's own answer to each request is had by
adding ``?wait=0`` (no waiting: the same submit), which the lane always passes on; a spy
on the layer after the lane counts what reached FastAPI.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.server.submit_lane import SubmitLane
from planes import DND, SERIAL, AppPlane, Grant, app_plane, plane_settings, write_tokens

GRANTS = {
    "planner": Grant("planner"),
    "bound": Grant("planner", conversations=("c1",)),
    "viewer": Grant("viewer"),
    "approver": Grant("approver"),
    "daemon": Grant("daemon", (SERIAL,)),
}
# what differs between two answers to the same submit: the new task's id and its times
FRESH = {"id", "created_at", "updated_at"}


class Spy:
    """The layer after the lane, counting the ``POST /v1/tasks`` requests that reach it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.submits = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/tasks":
            self.submits += 1
        await self.app(scope, receive, send)


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[AppPlane]:
    tokens = write_tokens(tmp_path / "tokens.yaml", GRANTS)
    with app_plane(plane_settings(tmp_path), tokens) as made:
        yield made


@pytest.fixture
def spy(plane: AppPlane) -> Spy:
    layer: Any = plane.client.app.middleware_stack  # built by the lifespan's start
    while not isinstance(layer, SubmitLane):
        layer = layer.app
    layer.app = Spy(layer.app)
    return layer.app


def _both(plane: AppPlane, spy: Spy, who: str, **kw: Any) -> tuple[Any, Any, int]:
    """The answer as sent, the route's answer to the same request, and how many of the
    two reached FastAPI."""
    before = spy.submits
    sent = plane.call(who, "POST", "/v1/tasks", **kw)
    route = plane.call(who, "POST", "/v1/tasks?wait=0", **kw)
    return sent, route, spy.submits - before


def _task(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc["task"].items() if k not in FRESH}


@pytest.mark.parametrize(
    "body",
    [
        DND,
        {**DND, "wait_policy": "completed"},  # no ?wait: answered at admission
        {**DND, "device": SERIAL, "idempotency_key": "k1"},
        {"taskMethod": "dnd.set", "params": {"mode": "off"}, "conversation_id": "c1"},
    ],
)
def test_a_plain_submit_is_the_lanes_and_answers_as_the_route(
    plane: AppPlane, spy: Spy, body: dict[str, Any]
) -> None:
    sent, route, reached = _both(plane, spy, "planner", json=body)
    assert reached == 1  # the route's copy only
    assert (sent.status_code, route.status_code) == (201, 201)
    assert sent.headers["content-type"] == route.headers["content-type"]
    assert sent.json().keys() == route.json().keys() == {"task", "terminal"}
    if "idempotency_key" in body:  # the second submit of the key answers the first task
        assert sent.json() == route.json()
    else:
        assert sent.json()["task"]["id"] != route.json()["task"]["id"]
        assert _task(sent.json()) == _task(route.json())
        assert sent.json()["terminal"] is route.json()["terminal"] is False


REFUSED: list[tuple[str, str, dict[str, Any]]] = [
    ("a refused field", "planner", {"json": {**DND, "params": {"mode": "loud"}}}),
    ("no conversation", "planner", {"json": {"method": "dnd.set", "params": {"mode": "off"}}}),
    ("a workflow", "planner", {"json": {"conversation_id": "c1", "steps": [DND]}}),
    ("a list", "planner", {"json": [DND]}),
    ("a method that is not text", "planner", {"json": {**DND, "method": 7}}),
    (
        "not JSON",
        "planner",
        {"content": b"{not json", "headers": {"content-type": "application/json"}},
    ),
    ("no content type", "planner", {"content": b'{"method": "dnd.get"}'}),
    ("another conversation", "bound", {"json": {**DND, "conversation_id": "c2"}}),
    ("a viewer", "viewer", {"json": DND}),
    ("an approver", "approver", {"json": DND}),
    ("a daemon", "daemon", {"json": DND}),
]


@pytest.mark.parametrize(("case", "who", "request_kw"), REFUSED, ids=[c[0] for c in REFUSED])
def test_whatever_the_route_refuses_reaches_the_route(
    plane: AppPlane, spy: Spy, case: str, who: str, request_kw: dict[str, Any]
) -> None:
    sent, route, reached = _both(plane, spy, who, **request_kw)
    assert reached == 2, case
    assert sent.status_code == route.status_code and sent.status_code in (401, 403, 415, 422)
    assert sent.json() == route.json()


def test_a_store_refusal_is_answered_as_the_apps_handler_answers_it(
    plane: AppPlane, spy: Spy
) -> None:
    first = {**DND, "idempotency_key": "k2"}
    plane.ok("planner", "POST", "/v1/tasks", json=first)
    other = {**first, "params": {"mode": "off"}}  # the same key for another task
    sent, route, reached = _both(plane, spy, "planner", json=other)
    assert reached == 1
    assert sent.status_code == route.status_code == 409
    assert sent.json() == route.json()
    assert sent.json()["error"] == "IdempotencyConflict"


def test_a_submit_through_the_lane_is_handed_to_the_waiting_claim(
    plane: AppPlane, spy: Spy
) -> None:
    answers: list[Any] = []
    body = {"owner": f"d1/{SERIAL}", "device": SERIAL, "wait": 20.0}
    waiting = threading.Thread(
        target=lambda: answers.append(plane.call("daemon", "POST", "/v1/claims", json=body))
    )
    waiting.start()
    wakeup = plane.client.app.state.plane.wakeup
    deadline = time.monotonic() + 10
    while not wakeup._claims and time.monotonic() < deadline:  # the claim waits
        time.sleep(0.01)
    task = plane.ok("planner", "POST", "/v1/tasks", json={**DND, "device": SERIAL})["task"]
    waiting.join(timeout=20)
    assert spy.submits == 0 and answers, "the lane answered the submit; the claim returned"
    leased = answers[0].json()["task"]
    assert leased["id"] == task["id"] and leased["state"] == "dispatched"
    assert leased["lease_owner"] == f"d1/{SERIAL}"
