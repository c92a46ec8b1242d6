"""Private values at rest: the one redacted form of phone numbers and message texts.

Evidence is shown to viewers and kept in the queue; it never holds a phone number or a
message text in clear. The task's own params (needed to act) are the one place in clear.
Everything that writes evidence uses the forms here:

* a phone number becomes ``<number •••4567>``: its last four digits only. A digest of a
  number would give it away (ten digits are enumerated in seconds), so none is kept.
* any other text becomes ``<text 42 chars sha256:1a2b3c4d5e6f>``: its length and the first
  48 bits of its sha256, enough to tell whether two texts (the composer's now and at the
  pause, a sent-box row and the task's body) are the same, and never the text. (A very
  short or predictable text can still be guessed from its digest; the length says so.)

``redact(value)`` picks the form; ``stand_in`` tells whether a string already is one
(redacting is idempotent). ``scrub(value, secrets)`` walks a JSON document: every
occurrence of a secret (the task's sensitive params) in any string is replaced by its
stand-in, and the values of the keys that hold a number or a text wherever they appear
(``to``, ``address``; ``body``, ``text``, ``compose_text``, ``field_text``) are redacted
whatever they hold. ``scrub_markup`` redacts the texts of a hierarchy dump (``text``,
``content-desc``, ``hint`` attributes) kept as raw output. ``restore`` puts the secrets
back into a redacted document (the approval preview shown to an approver is rebuilt so
from the task's params, then checked against the approval digest).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

DIGEST_CHARS = 12
MIN_EMBEDDED = 4  # a secret shorter than this is replaced only where it is a whole value
NUMBER_KEYS = frozenset({"to", "address"})
TEXT_KEYS = frozenset({"body", "text", "compose_text", "field_text"})

_STAND_IN = re.compile(r"<number [^<>]*>|<text \d+ chars sha256:[0-9a-f]+>")
_NUMBER = re.compile(r"\+?[\d\s().\-]+")
_MARKUP_TEXT = re.compile(r'\b(text|content-desc|hint)="([^"]*)"')


def stand_in(value: str) -> bool:
    """Whether ``value`` is already a redacted form."""
    return _STAND_IN.fullmatch(value) is not None


def looks_like_number(value: str) -> bool:
    """A phone number: digits with the usual separators, at least five digits."""
    return _NUMBER.fullmatch(value) is not None and sum(c.isdigit() for c in value) >= 5


def redact_number(value: str) -> str:
    digits = "".join(c for c in value if c.isdigit())
    return f"<number •••{digits[-4:]}>"


def redact_text(value: str) -> str:
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:DIGEST_CHARS]
    return f"<text {len(value)} chars sha256:{digest}>"


def redact(value: str) -> str:
    """The redacted form of ``value`` (a number's or a text's); a stand-in stays as it is."""
    if stand_in(value):
        return value
    return redact_number(value) if looks_like_number(value) else redact_text(value)


@functools.lru_cache(maxsize=256)
def _plan(secrets: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(secret, its form) longest first, stand-ins and empties left out; computed once."""
    kept = sorted({s for s in secrets if s and not stand_in(s)}, key=len, reverse=True)
    return tuple((s, redact(s)) for s in kept)


def _replace(text: str, plan: tuple[tuple[str, str], ...]) -> str:
    if not plan or stand_in(text):
        return text
    for secret, form in plan:
        if text == secret:
            return form
    embedded = [(s, f) for s, f in plan if len(s) >= MIN_EMBEDDED and s in text]
    if not embedded:
        return text
    parts = _STAND_IN.split(text)
    kept = _STAND_IN.findall(text)
    for secret, form in embedded:
        parts = [p.replace(secret, form) for p in parts]
    out = parts[0]
    for found, part in zip(kept, parts[1:], strict=True):
        out += found + part
    return out


def replace_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret replaced by its stand-in: a whole value always, one inside
    a longer text when it has at least ``MIN_EMBEDDED`` characters. Stand-ins already in
    ``text`` are left alone (a secret such as ``chars`` never rewrites one)."""
    return _replace(text, _plan(tuple(secrets)))


def scrub(value: Any, secrets: Iterable[str] = (), key: str | None = None) -> Any:
    """A copy of the JSON ``value`` with secrets and the private keys' values redacted."""
    return _scrub(value, _plan(tuple(secrets)), key)


def _scrub(value: Any, plan: tuple[tuple[str, str], ...], key: str | None) -> Any:
    if isinstance(value, str):
        if key in NUMBER_KEYS or key in TEXT_KEYS:
            return value if stand_in(value) or not value else _by_key(key, value)
        return _replace(value, plan)
    if isinstance(value, Mapping):
        return {k: _scrub(v, plan, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, plan, key) for v in value]
    return value


def _by_key(key: str | None, value: str) -> str:
    if key in NUMBER_KEYS and looks_like_number(value):
        return redact_number(value)
    return redact_text(value)


def scrub_markup(text: str) -> str:
    """A hierarchy dump (or part of one) with every text attribute's value redacted."""
    return _MARKUP_TEXT.sub(
        lambda m: f'{m[1]}="{redact_text(m[2])}"' if m[2] and not stand_in(m[2]) else m[0],
        text,
    )


def restore(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with each secret's stand-in replaced by the secret (the inverse of
    ``scrub`` for the secrets given; the caller checks the result against a digest)."""
    return _restore(value, _plan(tuple(secrets)))


def _restore(value: Any, plan: tuple[tuple[str, str], ...]) -> Any:
    if isinstance(value, str):
        for secret, form in plan:
            value = value.replace(form, secret)
        return value
    if isinstance(value, Mapping):
        return {k: _restore(v, plan) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_restore(v, plan) for v in value]
    return value
