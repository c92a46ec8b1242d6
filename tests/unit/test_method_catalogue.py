"""The method catalogue (``phoned methods``, docs/methods.md, the OpenAPI components, the
MCP tools) is generated from the registry and the params models, and kept current."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from phoned.daemon.planning import catalogue
from phoned.daemon.server.openapi import openapi_document
from phoned.device.actions.registry import REGISTRY

REPO = Path(__file__).resolve().parents[2]


def _phoned(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", *args],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_docs_methods_md_is_current() -> None:
    assert (REPO / "docs" / "methods.md").read_text(encoding="utf-8") == catalogue.markdown(), (
        "docs/methods.md is stale: run `phoned methods --markdown > docs/methods.md`"
    )


def test_methods_json_lists_every_method_with_its_params_schema() -> None:
    result = _phoned("methods", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    listed = {m["method"]: m for m in doc["methods"]}
    assert list(listed) == list(REGISTRY)
    for name, item in listed.items():
        model = REGISTRY[name].params
        assert item["params"]["properties"].keys() == model.model_fields.keys()
        # sms.send always asks; the UI tier's changing steps by default (approval_policy)
        # (ui.find and ui.handoff read only: the person does the handed step)
        reads_only = name in ("ui.find", "ui.handoff")
        asks = REGISTRY[name].approval or (name.startswith("ui.") and not reads_only)
        assert item["needs_approval"] is asks, name
        assert item["summary"] and item["reads"], name
        assert (item["changes"] is None) is item["read_only"], name
    assert listed["sms.send"]["needs_approval"] and not listed["sms.send"]["idempotent"]
    assert listed["volume.set"]["params"]["properties"]["percent"]["anyOf"][0]["maximum"] == 100


@pytest.mark.parametrize("method", list(REGISTRY))
def test_every_example_is_valid_params(method: str) -> None:
    example = catalogue.example_params(method)
    assert not isinstance(REGISTRY[method].validate(example), tuple), example


def test_methods_text_names_types_ranges_and_approval() -> None:
    result = _phoned("methods")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "sms.send  (changes the phone, needs approval, never repeated)" in text
    assert "percent (integer 0..100; optional)" in text
    assert "phoned submit --method dnd.set --param mode=priority" in text


def test_openapi_publishes_each_methods_params_schema() -> None:
    schemas = openapi_document()["components"]["schemas"]
    for method in REGISTRY:
        published = schemas[f"params.{method}"]
        assert published["properties"] == catalogue.params_schema(method)["properties"]


def test_the_mcp_sdk_is_not_loaded_by_phoned_help() -> None:
    code = (
        "import sys; from phoned.daemon.cli import main; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'anyio', 'pydantic'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
    assert "mcp" in _phoned("--help").stdout and "methods" in _phoned("--help").stdout
