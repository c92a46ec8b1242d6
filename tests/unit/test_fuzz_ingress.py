"""Fuzzing ingress: arbitrary JSON-like payloads and mutated valid tasks.

``parse_ingress`` must either accept a payload or raise ``InvalidTask`` naming at least one
field; ``phoned submit`` must refuse the same payloads with exit 2, a one-line message that
names a field, and nothing queued. The valid bases are the canonical contract and seed 004
§3's single-task and workflow examples (the same ones ``test_cli_tasks.py`` quotes).
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seed004_examples import SEED004_TASK, SEED004_WORKFLOW

from phoned.daemon.cli import main
from phoned.daemon.lifecycle.contract import TaskSpec, WorkflowSpec
from phoned.daemon.lifecycle.errors import InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.daemon.store.sqlite_store import SqliteStore

CANONICAL = {
    "conversation_id": "c1",
    "method": "sms.draft",
    "params": {"to": "+15551234567", "body": "hi"},
    "device": "SIM0001",
    "source": "voice",
}
BASES: tuple[dict[str, Any], ...] = (CANONICAL, SEED004_TASK, SEED004_WORKFLOW)

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
known_keys = st.sampled_from(
    sorted({k for base in BASES for k in base} | {"steps", "payload", "completion_target"})
)
payloads = st.dictionaries(known_keys | st.text(max_size=12), json_values, max_size=8).filter(
    lambda raw: not _known_bug(raw)
)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """A valid base task with one to three keys dropped, retyped or added."""
    raw = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("drop", "retype", "extra", "param")))
        keys = sorted(raw)
        if kind == "drop" and keys:
            raw.pop(draw(st.sampled_from(keys)))
        elif kind == "retype" and keys:
            raw[draw(st.sampled_from(keys))] = draw(json_values)
        elif kind == "param" and isinstance(raw.get("params"), dict):
            raw["params"][draw(st.text(max_size=8))] = draw(json_values)
        else:
            raw[draw(st.text(min_size=1, max_size=12))] = draw(json_values)
    return raw


_YAML_UNPRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def _yaml_unprintable(raw: Any) -> bool:
    """``raw`` holds a character YAML forbids (JSON input is read as JSON first)."""
    return bool(_YAML_UNPRINTABLE.search(json.dumps(raw, ensure_ascii=False)))


def _known_bug(raw: Any) -> bool:
    """No known parse_ingress bug is filtered out any more (kept as the place to add one)."""
    return False


def refusal_fields(raw: Any) -> list[str] | None:
    """The fields ``parse_ingress`` names when it refuses ``raw``; None when it accepts."""
    try:
        spec = parse_ingress(raw)
    except InvalidTask as exc:
        assert exc.errors, "a refusal names at least one field"
        fields = [str(e["field"]) for e in exc.errors]
        assert all(fields), exc.errors
        return fields
    assert isinstance(spec, TaskSpec | WorkflowSpec)
    return None


@settings(max_examples=300, deadline=None)
@given(payloads)
def test_arbitrary_payloads_are_accepted_or_refused_naming_a_field(raw: dict[str, Any]) -> None:
    refusal_fields(raw)


@settings(max_examples=300, deadline=None)
@given(mutated().filter(lambda raw: not _known_bug(raw)))
def test_mutated_valid_tasks_are_accepted_or_refused_naming_a_field(raw: dict[str, Any]) -> None:
    refusal_fields(raw)


@settings(max_examples=50, deadline=None)
@given(json_values.filter(lambda v: not isinstance(v, dict)))
def test_a_root_that_is_not_an_object_is_refused(raw: Any) -> None:
    assert refusal_fields(raw) == ["(root)"]


# Regression: a list or object as method once raised TypeError in is_seed004.
@pytest.mark.parametrize("method", [[], {}, ["dnd.set"]])
def test_a_list_or_object_as_method_is_refused_naming_method(method: Any) -> None:
    assert refusal_fields({"conversation_id": "c1", "method": method, "params": {}}) == ["method"]


def test_the_bases_are_valid() -> None:
    for base in BASES:
        assert refusal_fields(copy.deepcopy(base)) is None


def _submit(raw: Any, *, ascii_only: bool = False) -> tuple[int, str, int]:
    """``phoned submit -`` of ``raw`` into a fresh queue: (exit code, output, tasks queued).

    The JSON is written as UTF-8 unless ``ascii_only`` (``\\uXXXX`` escapes, surrogate
    pairs for characters beyond the BMP: see test_submit_accepts_any_valid_json).
    """
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "queue.db"
        text = json.dumps(raw, ensure_ascii=ascii_only)
        result = CliRunner().invoke(main, ["submit", "-", "--queue", f"sqlite:///{db}"], input=text)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        store = SqliteStore(str(db))
        try:
            queued = len(store.list_tasks(limit=1000))
        finally:
            store.close()
    return result.exit_code, result.output, queued


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated().filter(lambda raw: not _known_bug(raw)) | payloads)
def test_submit_refuses_with_exit_2_naming_a_field_and_queues_nothing(raw: dict[str, Any]) -> None:
    fields = refusal_fields(raw)
    if _yaml_unprintable(raw):
        return  # test_submit_accepts_any_valid_json covers it
    code, output, queued = _submit(raw)
    if fields is None:
        return  # accepted by the parser: the CLI may still apply config defaults; not fuzzed
    assert code == 2, output
    assert queued == 0
    printable = [f for f in fields if f.isprintable() and f.strip()]
    assert not printable or any(f in output for f in printable), output  # "\r" shows as ""
    assert "Traceback" not in output


@pytest.mark.parametrize(("body", "ascii_only"), [("ok \U0001f600", True), ("tab\x7fdel", False)])
def test_submit_accepts_any_valid_json(body: str, ascii_only: bool) -> None:
    raw = {**CANONICAL, "params": {"to": "+15551234567", "body": body}}
    assert refusal_fields(raw) is None
    code, output, queued = _submit(raw, ascii_only=ascii_only)
    assert (code, queued) == (0, 1), output


# Regression (found by the fuzzer in CI): a NUL under an empty key was named by a blank field.
def test_a_nul_under_an_empty_key_names_that_key() -> None:
    assert refusal_fields({"": "\x00"}) == ['""']
