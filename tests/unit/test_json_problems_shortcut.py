"""The shortcuts of the request checks (issue #35) say "fine" only where the full checks
find nothing: ``json_problems`` against ``named_problems`` (the walk that names every
field) and ``_holds_nul`` against a plain recursive look, on documents full of
what they look for (NUL in strings and keys, NaN, infinities, overflowing floats,
integers past 64 bits, deep nesting, the literal text ``\\u0000``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phoned.daemon.lifecycle import ingress
from phoned.daemon.lifecycle.errors import InvalidTask
from phoned.daemon.server.limits import json_problems, named_problems

texts = st.sampled_from(["", "a", "\x00", "a\x00b", "\\u0000", "\\\\u0000", "é"]) | st.text(
    max_size=5
)
numbers = (
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1])
    | st.floats(allow_nan=True, allow_infinity=True)
)
scalars = st.none() | st.booleans() | numbers | texts
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(doc=documents, depth=st.integers(min_value=1, max_value=4))
def test_json_problems_agrees_with_the_naming_walk(doc: Any, depth: int) -> None:
    body = json.dumps(doc).encode()  # NaN and infinities as JSON's NaN, Infinity
    assert json_problems(body, depth) == named_problems(body, depth)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": 1e999}',
        b'{"a": [NaN]}',
        b'{"a": {"b": -Infinity}}',
        b'{"n": 9223372036854775808}',
        b'{"n": -9223372036854775809}',
        b'{"n": ' + b"9" * 5000 + b"}",
        b'{"k\\u0000": 1}',
        b'{"a": "x\\u0000"}',
        b"[[[[[[1]]]]]]",
        b"1e999",
        b"not json",
    ],
)
def test_each_refused_shape_is_named_as_before(body: bytes) -> None:
    assert json_problems(body, 4) == named_problems(body, 4)


def test_a_fine_task_document_has_no_problem() -> None:
    body = b'{"method": "dnd.set", "params": {"mode": "off", "n": [1, 2.5, -3]}, "x": null}'
    assert json_problems(body, 4) == []


def _nul_somewhere(value: Any) -> bool:
    """The plain recursive answer the shortcut must give."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_nul_somewhere(k) or _nul_somewhere(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_nul_somewhere(v) for v in value)
    return False


@settings(max_examples=400, deadline=None)
@given(doc=st.dictionaries(texts, documents, max_size=4))
def test_the_nul_shortcut_agrees_with_the_plain_answer_and_the_refusal(
    doc: dict[str, Any],
) -> None:
    try:
        ingress._refuse_nul(doc)
        refused = False
    except InvalidTask:
        refused = True
    assert ingress._holds_nul(doc) is _nul_somewhere(doc) is refused
