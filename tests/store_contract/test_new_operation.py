"""Adding a store operation is one class (issue #32): a report declared in this test, with
nothing else written for it, reaches the plane's routes and OpenAPI schema, a daemon's HTTP
client (``HttpStore``, spooled while the plane is down), the SQLite and PostgreSQL stores,
and a planner's read-back.

The operation, ``Note``: a worker notes its progress on the task it holds, kept as the
evidence reference ``note:<text>`` of the task (a transition of the row: no SQL of its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pytest
from phoned.daemon.lifecycle import operation, ops, rules
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.operation import Change, Delivery, Facts
from phoned.daemon.lifecycle.rules import Row
from phoned.daemon.server.openapi import openapi_document
from phoned.daemon.store.http_store import HttpStore, PlaneLink
from phoned.daemon.store.plane_client import PlaneClient
from planes import SERIAL, Grant, app_plane, plane_settings, running, ticket, write_tokens
from pydantic import Field
from served_plane import Queue, ServedPlane

NOTE_ROUTE = "/v1/tasks/{task_id}/note"


@pytest.fixture
def note() -> Iterator[type[ops.TaskReport]]:
    """``Note``, declared for this test only (the plane apps built meanwhile serve it)."""
    before = list(operation.DECLARED)

    @dataclass(frozen=True)
    class Note(ops.TaskReport):
        """The worker notes its progress on the task it holds."""

        route: ClassVar[str] = NOTE_ROUTE
        offline: ClassVar[Delivery] = "spool"
        note: Annotated[str, Field(min_length=1, max_length=40)]

        def transition(self, row: Row, now: float, facts: Facts) -> Change:
            rules.check_lease(row, self.ticket, now, revision=False)
            refs = rules.add_refs(row, [f"note:{self.note}"])
            return Change(rules.bump(row, now, evidence_refs=refs))

    try:
        yield Note
    finally:
        operation.DECLARED[:] = before


def test_it_reaches_every_store_through_its_own_verb(note: Any, queue: Queue) -> None:
    """SQLite, PostgreSQL, and a plane over SQLite through ``HttpStore`` (``queue``'s
    kinds): the worker's store applies it, a planner reads back the row it wrote."""
    spec = validate_task({"method": "dnd.get", "conversation_id": "c1", "device": SERIAL})
    task = queue.planner.submit(spec, 100.0)
    claimed = queue.worker.claim(f"d1/{SERIAL}", SERIAL, 101.0)
    assert claimed is not None and claimed.id == task.id
    started = queue.worker.start(claimed.ticket, 102.0)
    noted = queue.worker.apply(note(started.ticket, 103.0, "screen read"))
    assert "note:screen read" in noted.evidence_refs
    assert "note:screen read" in queue.planner.get(task.id).evidence_refs


def test_its_route_and_schema_come_from_the_declaration(note: Any) -> None:
    doc = openapi_document()
    route = doc["paths"][NOTE_ROUTE]["post"]
    assert route["summary"] == "The worker notes its progress on the task it holds."
    body = route["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema = doc["components"]["schemas"][body.rsplit("/", 1)[-1]]
    assert schema["properties"]["note"]["maxLength"] == 40
    assert set(schema["required"]) == {"note", "ticket"}


def test_the_plane_checks_its_body_and_its_claim(note: Any, tmp_path: Path) -> None:
    """The route takes the declared body (a too long note is refused naming ``note``) and
    the claim like every report (another daemon's ticket is refused)."""
    grants = {"planner": Grant("planner"), "daemon": Grant("daemon", (SERIAL,))}
    tokens = write_tokens(tmp_path / "tokens.yaml", grants)
    with app_plane(plane_settings(tmp_path), tokens) as plane:
        task = running(plane)
        path = NOTE_ROUTE.format(task_id=task["id"])
        long = plane.call("daemon", "POST", path, json={"ticket": ticket(task), "note": "x" * 41})
        assert long.status_code == 422
        assert [e["field"] for e in long.json()["errors"]] == ["note"]
        stranger = {**ticket(task), "owner": f"d2/{SERIAL}"}
        lost = plane.call("daemon", "POST", path, json={"ticket": stranger, "note": "hi"})
        assert (lost.status_code, lost.json()["error"]) == (409, "LeaseLost")
        answer = plane.ok("daemon", "POST", path, json={"ticket": ticket(task), "note": "hi"})
        assert "note:hi" in answer["task"]["evidence_refs"]


def test_a_daemon_spools_it_while_the_plane_is_down(note: Any, tmp_path: Path) -> None:
    """Declared ``offline = "spool"``: with the plane gone, ``HttpStore`` keeps it in its
    outbox and answers what the operation's own transition predicts."""
    plane = ServedPlane(tmp_path)
    link = PlaneLink(plane.url, plane.tokens["daemon"], tmp_path / "outbox.db")
    planner = PlaneClient(plane.url, plane.tokens["planner"])
    try:
        worker = HttpStore(link, idle_wait=5.0, sync_wait=1.0)
        spec = validate_task({"method": "dnd.get", "conversation_id": "c1", "device": SERIAL})
        planner.submit(spec, 100.0)
        claimed = worker.claim(f"d1/{SERIAL}", SERIAL, 101.0)
        assert claimed is not None
        started = worker.start(claimed.ticket, 102.0)
        plane.stop()
        predicted = worker.apply(note(started.ticket, 103.0, "offline"))
        assert "note:offline" in predicted.evidence_refs
        assert worker.pending_reports() == 1
    finally:
        planner.close()
        link.close()
