"""Reading a task document a person wrote (a file or stdin), JSON or YAML.

Phone numbers must survive as text. JSON has no leading ``+`` or leading zeros, but YAML
1.1 reads an unquoted ``+15551234567`` as an integer and ``0123`` as octal 83, and a bare
``15551234567`` is a JSON number; so documents are loaded with a YAML loader that keeps
such scalars as strings.

What cannot be used is an ``InputError`` that says what would work: the line and column
of a syntax error. ``phoned submit``, ``phoned run --once FILE``, ``phoned classify`` and
the MCP bridge read documents and report ``InputError`` the same way (exit 2).

The one module of ``lifecycle`` that reads (a file or stdin): the front door of
``ingress``, below every room that takes a document from a person.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any


class InputError(Exception):
    """The user's input (a file, an option value) cannot be used; exit 2."""


# An unquoted scalar that is a number to YAML/JSON but a dial string to a person.
_DIAL_STRING = re.compile(r"\+[0-9]+|0[0-9]+|[0-9]{7,15}")


def looks_like_dial_string(text: str) -> bool:
    """True for ``+15551234567``, ``0301234567`` or a bare 7..15 digit number."""
    return _DIAL_STRING.fullmatch(text.strip()) is not None


def _text_number_loader() -> Any:
    """A ``yaml.SafeLoader`` subclass that keeps dial-string-like integers as strings."""
    import yaml  # lazy: phoned --help start-up path (docs/structure.md, measured)

    class TextNumberLoader(yaml.SafeLoader):
        pass

    def construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        raw = str(node.value)
        if looks_like_dial_string(raw):
            return raw
        return loader.construct_yaml_int(node)

    TextNumberLoader.add_constructor("tag:yaml.org,2002:int", construct_int)
    return TextNumberLoader


def read_document(path: str) -> Any:
    """A JSON or YAML document from ``path`` (``-`` = stdin); ``InputError`` if unreadable."""
    import yaml  # lazy: phoned --help start-up path (docs/structure.md, measured)

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text") from exc
    name = "stdin" if path == "-" else path
    if not text.strip():
        raise InputError(f"{name} is empty")
    try:  # JSON first: YAML refuses some valid JSON (surrogate-pair escapes, DEL, U+2028)
        return json.loads(text)
    except ValueError as exc:
        json_error = exc
    try:
        return yaml.load(text, Loader=_text_number_loader())  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        where = _syntax_error(text, json_error, exc)
        raise InputError(f"{name} is neither JSON nor YAML: {where}") from exc


def _syntax_error(text: str, json_error: ValueError, yaml_error: Exception) -> str:
    """Where and what the syntax error is: JSON's for a document that opens like JSON
    (``{`` or ``[``), else YAML's (``line 4, column 2: expected <block end> ...``)."""
    if text.lstrip()[:1] in ("{", "[") and isinstance(json_error, json.JSONDecodeError):
        return f"line {json_error.lineno}, column {json_error.colno}: {json_error.msg} (as JSON)"
    mark = getattr(yaml_error, "problem_mark", None)
    problem = getattr(yaml_error, "problem", None) or "not a YAML document"
    if mark is None:
        return f"{problem} (as YAML)"
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem} (as YAML)"
