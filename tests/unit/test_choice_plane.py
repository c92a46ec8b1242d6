"""A task waiting for a choice of ``to`` on the control plane (FastAPI TestClient over a real
SQLite queue): ``GET /v1/tasks/{id}`` lists the candidates with their amend lines for the
planner, redacted for a viewer bound to the conversation (as ``contacts.find``'s numbers are); the planner's amendment
with the chosen number requeues the same attempt as a new revision."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from planes import Grant, write_tokens
from starlette.exceptions import StarletteDeprecationWarning

from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.settings import ServerSettings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

SERIAL, NAME, BODY = "emu-1", "Ivan Petrov", "see you at 8"
NUMBERS = ("+79160000001", "+79160000002")


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    grants = {"daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner"),
              "viewer": Grant("viewer", conversations=("c1",))}  # fmt: skip
    raw = write_tokens(tmp_path / "tokens.yaml", grants)
    settings = ServerSettings(
        queue_url=f"sqlite:///{tmp_path / 'queue.db'}", state_dir=tmp_path / "serve",
        tokens_path=tmp_path / "tokens.yaml", fallback_poll=0.05,
    )  # fmt: skip
    old = os.umask(0o002)
    try:
        with TestClient(create_app(settings, TokenBook.load(settings.tokens_path))) as client:
            yield client, raw
    finally:
        os.umask(old)


def call(plane: Any, role: str, method: str, path: str, **kw: Any) -> Any:
    client, tokens = plane
    response = client.request(method, path, headers={"Authorization": f"Bearer {tokens[role]}"},
                              **kw)  # fmt: skip
    assert response.status_code in (200, 201), response.text
    return response.json()


def _candidate(n: int, number: str, kind: str) -> dict[str, Any]:
    return {"display_name": NAME, "contact_id": n, "number": number, "type": 2,
            "type_name": kind, "label": None}  # fmt: skip


def test_the_choice_is_listed_for_the_planner_redacted_for_a_viewer_and_answered(plane) -> None:
    task = call(plane, "planner", "POST", "/v1/tasks", json={
        "method": "sms.send", "params": {"to": NAME, "body": BODY}, "conversation_id": "c1",
        "device": SERIAL})["task"]  # fmt: skip
    got = call(
        plane, "daemon", "POST", "/v1/claims", json={"owner": f"d1/{SERIAL}", "device": SERIAL}
    )
    ticket = {"owner": got["task"]["lease_owner"], "attempt": 1, "revision": 1}
    path = f"/v1/tasks/{task['id']}"
    call(plane, "daemon", "POST", f"{path}/start", json={"ticket": ticket})
    candidates = [_candidate(1, NUMBERS[0], "mobile"), _candidate(2, NUMBERS[1], "work")]
    outcome = {"status": "waiting", "message": "the name fits 2 numbers",
               "detail": {"choice": "to", "candidates": candidates}}  # fmt: skip
    call(plane, "daemon", "POST", f"{path}/evidence",
         json={"ticket": ticket, "kind": "outcome", "body": outcome})  # fmt: skip
    call(plane, "daemon", "POST", f"{path}/pause",
         json={"ticket": ticket, "state": "waiting", "waiting_for": "choice:to"})  # fmt: skip

    mine = call(plane, "planner", "GET", path)["pending_choice"]
    assert [(c["display_name"], c["number"], c["type_name"]) for c in mine["candidates"]] == [
        (NAME, NUMBERS[0], "mobile"), (NAME, NUMBERS[1], "work"),
    ]  # fmt: skip
    assert mine["candidates"][1]["amend"] == {"to": NUMBERS[1], "contact": NAME}
    assert f"--param to={NUMBERS[1]}" in mine["candidates"][1]["amend_command"]
    seen = json.dumps(call(plane, "viewer", "GET", path), ensure_ascii=False)
    assert "pending_choice" in seen
    for number in NUMBERS:
        assert number not in seen and f"•••{number[-4:]}" in seen
    assert NAME not in seen  # the name asked for is the task's secret, as its to

    amended = call(plane, "planner", "POST", f"{path}/amend", json={
        "conversation_id": "c1", "params": {"to": NUMBERS[1], "contact": NAME, "body": BODY}})  # fmt: skip
    assert (amended["task"]["state"], amended["task"]["revision"]) == ("queued", 2)
    again = call(
        plane, "daemon", "POST", "/v1/claims", json={"owner": f"d1/{SERIAL}", "device": SERIAL}
    )
    assert again["task"]["attempt"] == 1  # the paused attempt goes on
    assert call(plane, "planner", "GET", path)["pending_choice"] is None
