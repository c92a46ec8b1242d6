"""Reading what the user typed: ``--param k=v`` pairs (task documents: ``phoned.daemon.lifecycle.documents``).

Phone numbers must survive as text. JSON has no leading ``+`` or leading zeros, but YAML
1.1 reads an unquoted ``+15551234567`` as an integer and ``0123`` as octal 83, and a bare
``15551234567`` is a JSON number; so documents are loaded with a YAML loader that keeps
such scalars as strings, and a ``--param`` value stays a string whenever the method's
schema wants text for that key or the value looks like a phone number.

What cannot be used is an ``InputError`` that says what would work: the line and column
of a syntax error, the keys a method takes, one ``--param`` per key.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterable
from typing import Any

from phoned.daemon.lifecycle.documents import InputError, looks_like_dial_string
from phoned.device.actions.registry import METHOD_PARAMS


def _accepts_only(annotation: Any, kind: type) -> bool:
    """True when ``annotation`` accepts only values of ``kind``: ``kind`` itself, a Literal
    of such values, or an Optional or Union of those (``str`` keeps a ``--param`` value as
    text, ``bool`` reads ``true``/``false``)."""
    if annotation is kind:
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return all(isinstance(a, kind) for a in args)
    if origin is typing.Union or origin is types.UnionType:
        rest = [a for a in args if a is not type(None)]
        return bool(rest) and all(_accepts_only(a, kind) for a in rest)
    return False


def _param_fields(method: str | None) -> dict[str, Any]:
    """``method``'s parameter fields by name ({} for an unknown method)."""

    model = METHOD_PARAMS.get(method or "")
    return dict(model.model_fields) if model is not None else {}


def wants_text(method: str | None, key: str) -> bool:
    """True when ``method``'s parameter schema declares ``key`` as text."""
    field = _param_fields(method).get(key)
    return field is not None and _accepts_only(field.annotation, str)


def wants_bool(method: str | None, key: str) -> bool:
    """True when ``method``'s parameter schema declares ``key`` as a boolean."""
    field = _param_fields(method).get(key)
    return field is not None and _accepts_only(field.annotation, bool)


# How a boolean is written on the command line: YAML 1.2's core schema.
BOOLEAN_WORDS = {"true": True, "True": True, "TRUE": True,
                 "false": False, "False": False, "FALSE": False}  # fmt: skip


def parse_value(method: str | None, key: str, text: str) -> Any:
    """``text`` as JSON when it parses and the key is not text or a dial string, else as is.

    ``enabled=true`` is a bool, ``level=7`` an int, ``to=+15551234567`` and
    ``to=15551234567`` stay strings. A key the schema declares boolean takes ``true`` or
    ``false`` (``True``, ``TRUE``... too, as YAML 1.2 reads them); another word (``yes``,
    ``on``, ``1``) is left as it is, for ingress to refuse naming those two.
    """
    if wants_text(method, key) or looks_like_dial_string(text):
        return text
    if wants_bool(method, key) and text.strip() in BOOLEAN_WORDS:
        return BOOLEAN_WORDS[text.strip()]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _takes(method: str | None) -> str:
    """`` (dnd.set takes mode)``: the keys ``method`` takes, for an error message ("" for
    an unknown method: ingress names that one)."""

    model = METHOD_PARAMS.get(method or "")
    if model is None:
        return ""
    return f" ({method} takes {', '.join(model.model_fields) or 'no params'})"


def parse_params(method: str | None, pairs: Iterable[str]) -> dict[str, Any]:
    """``k=v`` pairs as a params dict; ``InputError`` naming a pair without ``=`` or key,
    and one that nests params (``params=k=v``, ``param=k=v``: one ``--param`` per key)."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--param {pair!r}: expected KEY=VALUE{_takes(method)}")
        if key in ("params", "param") and key not in _param_fields(method):
            inner = text if "=" in text else "KEY=VALUE"
            raise InputError(
                f"--param {pair!r}: give each parameter as its own --param KEY=VALUE "
                f"(--param {inner}){_takes(method)}"
            )
        params[key] = parse_value(method, key, text)
    return params
