"""The published OpenAPI document: the repository copy is current, and schemathesis
finds no 5xx answer anywhere in the API (bounded: a few examples per operation)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from planes import Grant, plane_settings, write_tokens

from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.openapi import openapi_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
TOKENS: dict[str, str] = {}


def test_docs_openapi_json_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == openapi_text(), (
        "docs/openapi.json is stale: run `.venv/bin/python -m phoned.daemon.server.openapi > docs/openapi.json`"
    )


def test_every_operation_needs_a_bearer_token() -> None:
    doc = json.loads(DOC.read_text(encoding="utf-8"))
    assert doc["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            assert operation.get("security") == [{"HTTPBearer": []}], (method, path)


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    tmp = tmp_path_factory.mktemp("schema")
    grants = {"daemon": Grant("daemon", ("*",)), "planner": Grant("planner"),
              "approver": Grant("approver")}  # fmt: skip
    TOKENS.update(write_tokens(tmp / "tokens.yaml", grants))
    config = plane_settings(tmp, max_wait=0.2)  # long-polls answer fast under fuzzing
    app = create_app(config, TokenBook.load(config.tokens_path))
    yield schemathesis.openapi.from_asgi("/openapi.json", app)
    from schemathesis.python import asgi  # stop the app's lifespan (its threads) now

    asgi.shutdown_lifespans()


def _role(method: str, path: str) -> str:
    if path.endswith(("/approve", "/deny")):
        return "approver"
    daemon_verbs = ("/claims", "/work", "/recover", "/register", "/heartbeat", "/start",
                    "/admit", "/journal", "/evidence", "/complete", "/fail", "/pause",
                    "/request_approval", "/confirm_stopped", "/context", "/artifacts/{name}")  # fmt: skip
    if "/journal/" in path or (path.endswith(daemon_verbs) and method != "GET"):
        return "daemon"
    return "planner"


def test_no_operation_answers_5xx(api_schema: schemathesis.BaseSchema) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 25
    seen: list[tuple[str, str, int]] = []

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
        def answers(case: schemathesis.Case) -> None:
            role = _role(case.method.upper(), case.path)
            response = case.call(headers={"Authorization": f"Bearer {TOKENS[role]}"})
            seen.append((case.method, case.path, response.status_code))
            assert response.status_code < 500, (case.method, case.path, response.text[:500])

        answers()
    assert {path for _, path, _ in seen} == {op.path for op in operations}
