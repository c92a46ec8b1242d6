"""A task waiting for a choice of ``to`` on the control plane (FastAPI TestClient over a real
SQLite queue): ``GET /v1/tasks/{id}`` lists the candidates with their amend lines for the
planner, redacted for a viewer bound to the conversation (as ``contacts.find``'s numbers are); the planner's amendment
with the chosen number requeues the same attempt as a new revision."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from planes import AppPlane, Grant, claimed, loose_umask_plane, submit
from planes import ticket as ticket_of

SERIAL, NAME, BODY = "emu-1", "Ivan Petrov", "see you at 8"
NUMBERS = ("+79160000001", "+79160000002")


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[AppPlane]:
    grants = {"daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner"),
              "viewer": Grant("viewer", conversations=("c1",))}  # fmt: skip
    with loose_umask_plane(tmp_path, grants) as made:
        yield made


def _candidate(n: int, number: str, kind: str) -> dict[str, Any]:
    return {"display_name": NAME, "contact_id": n, "number": number, "type": 2,
            "type_name": kind, "label": None}  # fmt: skip


def test_the_choice_is_listed_for_the_planner_redacted_for_a_viewer_and_answered(plane) -> None:
    task = submit(plane, method="sms.send", params={"to": NAME, "body": BODY}, device=SERIAL)
    ticket = ticket_of(claimed(plane))  # attempt 1, revision 1
    path = f"/v1/tasks/{task['id']}"
    plane.ok("daemon", "POST", f"{path}/start", json={"ticket": ticket})
    candidates = [_candidate(1, NUMBERS[0], "mobile"), _candidate(2, NUMBERS[1], "work")]
    outcome = {"status": "waiting", "message": "the name fits 2 numbers",
               "detail": {"choice": "to", "candidates": candidates}}  # fmt: skip
    plane.ok("daemon", "POST", f"{path}/evidence",
             json={"ticket": ticket, "kind": "outcome", "body": outcome})  # fmt: skip
    plane.ok("daemon", "POST", f"{path}/pause",
             json={"ticket": ticket, "state": "waiting", "waiting_for": "choice:to"})  # fmt: skip

    mine = plane.ok("planner", "GET", path)["pending_choice"]
    assert [(c["display_name"], c["number"], c["type_name"]) for c in mine["candidates"]] == [
        (NAME, NUMBERS[0], "mobile"), (NAME, NUMBERS[1], "work"),
    ]  # fmt: skip
    assert mine["candidates"][1]["amend"] == {"to": NUMBERS[1], "contact": NAME}
    assert f"--param to={NUMBERS[1]}" in mine["candidates"][1]["amend_command"]
    seen = json.dumps(plane.ok("viewer", "GET", path), ensure_ascii=False)
    assert "pending_choice" in seen
    for number in NUMBERS:
        assert number not in seen and f"•••{number[-4:]}" in seen
    assert NAME not in seen  # the name asked for is the task's secret, as its to

    amended = plane.ok("planner", "POST", f"{path}/amend", json={
        "conversation_id": "c1", "params": {"to": NUMBERS[1], "contact": NAME, "body": BODY}})  # fmt: skip
    assert (amended["task"]["state"], amended["task"]["revision"]) == ("queued", 2)
    assert claimed(plane)["attempt"] == 1  # the paused attempt goes on
    assert plane.ok("planner", "GET", path)["pending_choice"] is None
