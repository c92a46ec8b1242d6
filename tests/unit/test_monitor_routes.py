"""The monitor page's routes (FastAPI TestClient over a temp SQLite queue).

The page and its two files are served without a token, with a strict CSP; nothing else
under ``/monitor/`` is served (no path reaches the disk). Screenshots the page shows come
from ``/v1/tasks/{id}/artifacts/{name}``: a token with the read right is needed (401
without, 403 for a daemon of another device), and no name escapes the task's directory.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from planes import Grant, write_tokens
from starlette.exceptions import StarletteDeprecationWarning

from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.monitor import ASSETS, STATIC_DIR
from phoned.daemon.server.settings import ServerSettings

with warnings.catch_warnings():  # starlette 1.x prefers httpx2 for its TestClient; httpx works
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

SERIAL, OTHER = "emu-1", "emu-2"
ROLES = (("daemon", SERIAL), ("planner", None), ("viewer", None), ("other_daemon", OTHER))


class Client:
    """A TestClient and one raw token per role."""

    def __init__(self, client: TestClient, tokens: dict[str, str]) -> None:
        self.http = client
        self.tokens = tokens

    def get(self, path: str, role: str | None = None, token: str | None = None) -> Any:
        raw = self.tokens[role] if role else token
        headers = {"Authorization": f"Bearer {raw}"} if raw else {}
        return self.http.get(path, headers=headers)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    grants = {role: Grant(role.replace("other_", ""), (device,) if device else ())
              for role, device in ROLES}  # fmt: skip
    tokens = write_tokens(tmp_path / "tokens.yaml", grants)
    settings = ServerSettings(
        queue_url=f"sqlite:///{tmp_path / 'queue.db'}",
        state_dir=tmp_path / "serve",
        tokens_path=tmp_path / "tokens.yaml",
    )
    app = create_app(settings, TokenBook.load(settings.tokens_path))
    with TestClient(app) as http:
        yield Client(http, tokens)


def png_bytes() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 8), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def task_with_screenshot(client: Client) -> tuple[str, bytes]:
    """A task on SERIAL whose daemon uploaded ``screen.png``; its id and the bytes."""
    body = {"method": "screen.snapshot", "params": {}, "conversation_id": "c1", "device": SERIAL}
    answer = client.http.post(
        "/v1/tasks", json=body, headers={"Authorization": f"Bearer {client.tokens['planner']}"}
    )
    assert answer.status_code in (200, 201), answer.text
    task_id = str(answer.json()["task"]["id"])
    claim = client.http.post(  # artifacts go only onto a task the daemon token holds or held
        "/v1/claims",
        json={"owner": f"d1/{SERIAL}", "device": SERIAL, "task_id": task_id},
        headers={"Authorization": f"Bearer {client.tokens['daemon']}"},
    )
    assert claim.status_code == 200 and claim.json()["task"]["id"] == task_id, claim.text
    data = png_bytes()
    put = client.http.put(
        f"/v1/tasks/{task_id}/artifacts/screen.png",
        content=data,
        headers={"Authorization": f"Bearer {client.tokens['daemon']}"},
    )
    assert put.status_code == 200, put.text
    return task_id, data


def test_the_page_is_served_without_a_token_with_a_strict_csp(client: Client) -> None:
    page = client.get("/monitor")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert 'src="/monitor/monitor.js"' in page.text and 'href="/monitor/monitor.css"' in page.text
    csp = page.headers["content-security-policy"]
    assert (
        "script-src 'self'" in csp and "default-src 'none'" in csp and "img-src 'self' blob:" in csp
    )
    assert "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("name", sorted(ASSETS))
def test_each_asset_is_served_with_its_type(client: Client, name: str) -> None:
    answer = client.get(f"/monitor/{name}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == ASSETS[name]
    assert answer.content == (STATIC_DIR / name).read_bytes()


def test_the_page_loads_nothing_from_elsewhere() -> None:
    for name in ASSETS:
        text = (STATIC_DIR / name).read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, name
    script = (STATIC_DIR / "monitor.js").read_text(encoding="utf-8")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "localStorage" not in script  # the token lives in sessionStorage only


@pytest.mark.parametrize(
    "path",
    [
        "/monitor/..%2Fapp.py",
        "/monitor/%2E%2E%2Fmonitor.py",
        "/monitor/../server/app.py",
        "/monitor/static/monitor.js",
        "/monitor/monitor.py",
        "/monitor/.%2E/.%2E/pyproject.toml",
    ],
)
def test_no_other_file_is_served(client: Client, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 404, (path, answer.status_code, answer.text[:200])
    assert "from __future__" not in answer.text and "[project]" not in answer.text


def test_the_page_is_not_in_the_api_document(client: Client) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith("/monitor")]


def test_a_screenshot_needs_a_token_that_may_read_it(client: Client) -> None:
    task_id, data = task_with_screenshot(client)
    path = f"/v1/tasks/{task_id}/artifacts/screen.png"
    assert client.get(path).status_code == 401
    assert client.get(path, token="phd_not-a-known-token").status_code == 401
    assert client.get(path, role="other_daemon").status_code == 403
    for role in ("viewer", "planner", "daemon"):
        answer = client.get(path, role=role)
        assert answer.status_code == 200, role
        assert answer.content == data
    assert client.get(path, role="viewer").headers["content-type"] == "image/png"


@pytest.mark.parametrize(
    "name",
    ["..%2F..%2Fqueue.db", "%2E%2E", ".hidden", "a%2Fb", "..%5Cqueue.db", "x..y"],
)
def test_an_artifact_name_cannot_escape_its_task(client: Client, name: str) -> None:
    task_id, _ = task_with_screenshot(client)
    answer = client.get(f"/v1/tasks/{task_id}/artifacts/{name}", role="viewer")
    assert answer.status_code in (404, 422), (name, answer.status_code)
    assert b"SQLite format" not in answer.content


def test_a_task_id_cannot_escape_the_artifacts_dir(client: Client) -> None:
    task_with_screenshot(client)
    answer = client.get("/v1/tasks/..%2F..%2F/artifacts/queue.db", role="viewer")
    assert answer.status_code in (404, 422)
    assert b"SQLite format" not in answer.content
