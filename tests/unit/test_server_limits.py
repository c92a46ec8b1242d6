"""Limits of the control plane (issue #12 items 2, 3, 8, 12) over a real SQLite queue.

In-process app (FastAPI TestClient) for what is about answers: body caps, JSON depth,
finite numbers, NUL characters, artifact types, ``/docs``. The per-token long-poll cap
runs the app under a real uvicorn server on a loopback port, so the polls are really
concurrent. (``tests/integration/test_serve_limits.py`` drives ``phoned serve`` itself.)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from planes import (
    DND,
    SERIAL,
    AppPlane,
    Grant,
    app_client,
    app_plane,
    plane_settings,
    running,
    ticket,
    write_tokens,
)

from phoned.daemon.lifecycle.errors import InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.settings import ServerSettings
from scripts.stack import free_port

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


Plane = AppPlane


def write_role_tokens(path: Path) -> dict[str, str]:
    """A tokens file with one token per role (daemon: SERIAL only); returns raw tokens."""
    grants = {"daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner"),
              "viewer": Grant("viewer")}  # fmt: skip
    return write_tokens(path, grants)


def make_plane(tmp: Path, **extra: Any) -> Iterator[Plane]:
    tokens = write_role_tokens(tmp / "tokens.yaml")
    with app_plane(plane_settings(tmp, **extra), tokens) as made:
        yield made


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[Plane]:
    yield from make_plane(tmp_path)


@pytest.fixture
def small_artifacts(tmp_path: Path) -> Iterator[Plane]:
    yield from make_plane(tmp_path, max_artifact_bytes=64 * 1024)


def evidence(plane: Plane, task: dict[str, Any], **fields: Any) -> Any:
    doc = {"ticket": ticket(task), "kind": "outcome", "body": {"status": "met"}, **fields}
    return plane.call("daemon", "POST", f"/v1/tasks/{task['id']}/evidence", json=doc)


def raw_post(plane: Plane, role: str, path: str, text: str) -> Any:
    headers = {"Content-Type": "application/json"}
    return plane.call(role, "POST", path, content=text.encode(), headers=headers)


# --- body caps (item 2) ---------------------------------------------------------------
def test_a_json_body_over_the_cap_is_413_even_with_a_valid_token(plane: Plane) -> None:
    big = {**DND, "params": {"mode": "priority", "note": "x" * (2 * 1024 * 1024)}}
    response = plane.call("planner", "POST", "/v1/tasks", json=big)
    assert response.status_code == 413, response.text
    assert response.json()["error"] == "PayloadTooLarge"
    assert plane.ok("viewer", "GET", "/v1/tasks")["tasks"] == []


def test_a_streamed_body_without_length_is_cut_at_the_cap(plane: Plane) -> None:
    sent: list[int] = []

    def chunks() -> Iterator[bytes]:
        yield b'{"method": "dnd.set", "conversation_id": "c1", "params": {"mode": "'
        for _ in range(64):
            sent.append(1)
            yield b"p" * (64 * 1024)
        yield b'"}}'

    headers = {"Authorization": f"Bearer {plane.tokens['planner']}"}
    response = plane.client.post("/v1/tasks", content=chunks(), headers=headers)
    assert "content-length" not in response.request.headers
    assert response.status_code == 413, response.text
    assert plane.ok("viewer", "GET", "/v1/tasks")["tasks"] == []


def test_an_artifact_over_its_cap_is_413_and_leaves_no_file(small_artifacts: Plane) -> None:
    plane = small_artifacts
    task = running(plane)
    path = f"/v1/tasks/{task['id']}/artifacts/big.png"

    def chunks() -> Iterator[bytes]:
        for _ in range(8):
            yield PNG + b"\x00" * (16 * 1024)

    headers = {"Authorization": f"Bearer {plane.tokens['daemon']}"}
    response = plane.client.put(path, content=chunks(), headers=headers)
    assert response.status_code == 413, response.text
    assert plane.call("daemon", "GET", path).status_code == 404
    declared = plane.call("daemon", "PUT", path, content=b"\x00" * (64 * 1024 + 1))
    assert declared.status_code == 413
    ok = plane.call("daemon", "PUT", path, content=PNG)
    assert ok.status_code == 200 and ok.json()["bytes"] == len(PNG)
    folder = next(Path(p) for p in plane.client.app.state.plane.settings.artifacts_dir.iterdir())  # type: ignore[attr-defined]
    assert sorted(p.name for p in folder.iterdir()) == ["big.png"]  # no .part left behind


# --- JSON depth and numbers (items 2, 8) -----------------------------------------------
def test_900_level_nested_evidence_is_422_and_the_task_stays_readable(plane: Plane) -> None:
    task = running(plane)
    deep: Any = "leaf"
    for _ in range(900):
        deep = {"a": deep}
    response = evidence(plane, task, body=deep)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["message"].startswith("JSON nested deeper than 64")
    status = plane.call("viewer", "GET", f"/v1/tasks/{task['id']}")
    assert status.status_code == 200 and status.json()["evidence"] == []
    assert plane.call("viewer", "GET", f"/v1/tasks/{task['id']}/report").status_code == 200


def test_nesting_up_to_the_cap_is_kept(plane: Plane) -> None:
    task = running(plane)
    nested: Any = "leaf"
    for _ in range(60):  # body sits at depth 2 in the report: 62 levels in all
        nested = {"a": nested}
    assert evidence(plane, task, body=nested).status_code == 200
    assert plane.ok("viewer", "GET", f"/v1/tasks/{task['id']}")["evidence"]


@pytest.mark.parametrize(
    ("literal", "field"),
    [
        ('"at": -1e308', "at"),
        ('"at": NaN', "at"),
        ('"at": Infinity', "at"),
        ('"at": 1e999', "at"),
        ('"at": 1e300', "at"),
        ('"body": {"temp": -Infinity}', "body.temp"),
        ('"body": {"level": 1e400}', "body.level"),
        ('"body": {"n": 123456789012345678901234567890}', "body.n"),
    ],
)
def test_times_and_numbers_must_be_finite_and_in_range(
    plane: Plane, literal: str, field: str
) -> None:
    task = running(plane)
    doc = json.dumps({"ticket": ticket(task), "kind": "outcome"})[:-1]
    if not literal.startswith('"body"'):
        doc += ', "body": {"status": "met"}'
    response = raw_post(plane, "daemon", f"/v1/tasks/{task['id']}/evidence", doc + f", {literal}}}")
    assert response.status_code == 422, response.text
    assert field in [e["field"] for e in response.json()["errors"]], response.text
    assert plane.ok("viewer", "GET", f"/v1/tasks/{task['id']}")["evidence"] == []


def test_a_claim_wait_of_nan_or_forever_is_refused(plane: Plane) -> None:
    body = '{"owner": "d1/emu-1", "device": "emu-1", "wait": NaN}'
    assert raw_post(plane, "daemon", "/v1/claims", body).status_code == 422
    forever = {"owner": "d1/emu-1", "device": "emu-1", "wait": 1e300}
    assert plane.call("daemon", "POST", "/v1/claims", json=forever).status_code == 422


# --- NUL (item 12) ----------------------------------------------------------------------
def test_nul_in_a_submitted_field_is_422_naming_it(plane: Plane) -> None:
    task = {**DND, "conversation_id": "c\x001"}
    response = plane.call("planner", "POST", "/v1/tasks", json=task)
    assert response.status_code == 422, response.text
    assert [e["field"] for e in response.json()["errors"]] == ["conversation_id"]
    assert plane.ok("viewer", "GET", "/v1/tasks")["tasks"] == []


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({**DND, "conversation_id": "c\x001"}, "conversation_id"),
        ({**DND, "idempotency_key": "k\x00"}, "idempotency_key"),
        ({"taskMethod": "dnd.set", "mode": "priority", "conversation_id": "c1",
          "cloud_step_id": "s\x00"}, "cloud_step_id"),
        ({"conversation_id": "c1", "steps": [{**DND, "step_id": "a\x00"}]}, "steps.0.step_id"),
    ],
)  # fmt: skip
def test_ingress_refuses_nul_for_every_store(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidTask) as refused:
        parse_ingress(raw)
    assert [e["field"] for e in refused.value.errors] == [field]


def test_nul_in_a_daemon_report_is_422_naming_the_field(plane: Plane) -> None:
    task = running(plane)
    response = evidence(plane, task, body={"status": "met", "text": "a\x00b"})
    assert response.status_code == 422, response.text
    assert [e["field"] for e in response.json()["errors"]] == ["body.text"]
    fail = {"ticket": ticket(task), "failure": {"reason": "device_error", "message": "x\x00"}}
    response = plane.call("daemon", "POST", f"/v1/tasks/{task['id']}/fail", json=fail)
    assert [e["field"] for e in response.json()["errors"]] == ["failure.message"]


def test_nul_in_a_query_or_path_is_422(plane: Plane) -> None:
    response = plane.call("viewer", "GET", "/v1/tasks", params={"device": "emu\x001"})
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "device"
    assert plane.call("viewer", "GET", "/v1/tasks/t%00x").status_code == 422


# --- artifacts: fixed content type, nosniff (item 12) ------------------------------------
def test_artifacts_are_served_with_a_fixed_type_and_nosniff(plane: Plane) -> None:
    task = running(plane)
    base = f"/v1/tasks/{task['id']}/artifacts"
    uploads = {
        "page.html": (b"<html><script>alert(1)</script></html>", "application/octet-stream"),
        "shot.png": (PNG, "image/png"),
        "shot.jpg": (b"\xff\xd8\xff\xe0" + b"\x00" * 20, "image/jpeg"),
        "image.svg": (b"<svg onload=alert(1)></svg>", "application/octet-stream"),
        "fake.png": (b"<script>alert(1)</script>", "application/octet-stream"),
    }
    for name, (data, media_type) in uploads.items():
        assert plane.call("daemon", "PUT", f"{base}/{name}", content=data).status_code == 200
        response = plane.call("viewer", "GET", f"{base}/{name}")
        assert response.status_code == 200 and response.content == data
        assert response.headers["content-type"] == media_type, name
        assert response.headers["x-content-type-options"] == "nosniff"


# --- /docs (item 12) ---------------------------------------------------------------------
def test_docs_are_off_by_default_and_never_load_a_cdn_unasked(tmp_path: Path) -> None:
    write_role_tokens(tmp_path / "tokens.yaml")
    for docs, status in ((False, 404), (True, 200)):
        settings = plane_settings(tmp_path, docs=docs)
        app = create_app(settings, TokenBook.load(settings.tokens_path))
        with app_client(app) as client:
            assert client.get("/docs").status_code == status
            assert client.get("/redoc").status_code == status
            assert client.get("/openapi.json").status_code == 200


# --- long-polls per token (item 3) ---------------------------------------------------------
class LiveServer:
    """The app under a real uvicorn server on a free loopback port (in a thread)."""

    def __init__(self, settings: ServerSettings) -> None:
        self.port = free_port()
        app = create_app(settings, TokenBook.load(settings.tokens_path))
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def test_a_token_holds_at_most_its_share_of_long_polls(tmp_path: Path) -> None:
    tokens = write_role_tokens(tmp_path / "tokens.yaml")
    settings = plane_settings(tmp_path, max_polls_per_token=3, max_wait=3.0)
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=20) as client:
        viewer = {"Authorization": f"Bearer {tokens['viewer']}"}
        planner = {"Authorization": f"Bearer {tokens['planner']}"}
        cursor = client.get("/v1/events", headers=viewer).json()["cursor"]
        answers: list[int] = []

        def poll() -> None:
            params = {"after": cursor + 1000, "wait": 3}
            answers.append(client.get("/v1/events", params=params, headers=viewer).status_code)

        polls = [threading.Thread(target=poll) for _ in range(3)]
        for t in polls:
            t.start()
        time.sleep(0.8)
        over = client.get("/v1/events", params={"after": cursor, "wait": 3}, headers=viewer)
        assert over.status_code == 429, over.text
        assert over.headers["retry-after"] == "1"
        other = client.get("/v1/events", params={"after": cursor, "wait": 0.1}, headers=planner)
        assert other.status_code == 200  # another token has its own share
        for t in polls:
            t.join()
        assert answers == [200, 200, 200]
        again = client.get("/v1/events", params={"after": cursor, "wait": 0.1}, headers=viewer)
        assert again.status_code == 200  # the share is given back when a poll returns


def test_a_waiting_claim_wakes_when_a_task_arrives(tmp_path: Path) -> None:
    tokens = write_role_tokens(tmp_path / "tokens.yaml")
    with (
        LiveServer(plane_settings(tmp_path, max_wait=20.0)) as live,
        httpx.Client(base_url=live.url, timeout=30) as client,
    ):
        got: list[Any] = []
        body = {"owner": f"d1/{SERIAL}", "device": SERIAL, "wait": 20}
        daemon = {"Authorization": f"Bearer {tokens['daemon']}"}
        waiter = threading.Thread(
            target=lambda: got.append(client.post("/v1/claims", json=body, headers=daemon))
        )
        waiter.start()
        time.sleep(0.5)
        planner = {"Authorization": f"Bearer {tokens['planner']}"}
        task = client.post("/v1/tasks", json=DND, headers=planner).json()["task"]
        waiter.join(timeout=25)
        assert got and got[0].status_code == 200
        assert got[0].json()["task"]["id"] == task["id"]
