"""Request limits of the control plane, enforced before any handler (or token check) runs.

``RequestLimits`` is the outermost ASGI layer of ``phoned serve``:

- a body over its cap is answered 413 without reading the rest: at once when
  ``Content-Length`` says so, else as soon as the streamed bytes pass the cap (JSON bodies:
  ``max_body_bytes``; ``PUT /v1/tasks/{id}/artifacts/{name}``: ``max_artifact_bytes``,
  streamed through to the handler, never buffered here);
- a JSON body (at most ``max_body_bytes``, so buffering it is bounded) is checked before the
  app parses it: nested deeper than ``max_json_depth``, a ``NaN``/``Infinity`` or a float
  that overflows to infinity, an integer outside the signed 64-bit range, or a NUL
  character in any string or key is 422 naming the field;
- a NUL character in the path or a query parameter is 422 too (PostgreSQL refuses NUL in
  text, which would otherwise surface as a 503 the client reads as temporary);
- a ``/v1`` request without a known bearer token is 401 before its body is read, so no
  one without a token makes the server buffer or parse anything (the route's own
  dependencies still check the token and its rights as before).

Answers use the API's error shape: ``{"error", "message", "errors": [{field, message}]}``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

INT64 = 2**63 - 1
_ARTIFACT_PATH = re.compile(r"^/v1/tasks/[^/]+/artifacts/[^/]+$")


@dataclass(frozen=True)
class Limits:
    """The caps ``RequestLimits`` enforces (``ServerSettings`` holds the configured values)."""

    max_body_bytes: int
    max_artifact_bytes: int
    max_json_depth: int


class _TooLarge(Exception):
    """The streamed body passed its cap."""


@dataclass(frozen=True)
class _Bad:
    """A number the JSON parser met that the API refuses (kept to name its field)."""

    text: str
    why: str


def _bad_constant(text: str) -> _Bad:
    return _Bad(text, "not a finite number")


def _checked_float(text: str) -> float | _Bad:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return _Bad(text, "not a finite number (overflows a double)")
    return value


def _checked_int(text: str) -> int | _Bad:
    if len(text.lstrip("-")) > 19:
        return _Bad(text[:24], "integer outside the signed 64-bit range")
    value = int(text)
    if not -INT64 - 1 <= value <= INT64:
        return _Bad(text, "integer outside the signed 64-bit range")
    return value


def _join(path: str, key: str | int) -> str:
    return str(key) if not path else f"{path}.{key}"


def json_problems(body: bytes, max_depth: int) -> list[dict[str, str]]:
    """Why a JSON body is refused (``[]``: fine, or not JSON at all: the app answers that).

    Checks nesting depth, finite and 64-bit-range numbers and NUL characters; each problem
    names its field as a dotted path (``(root)`` for the document itself).
    """
    # the common case first: a fine document, told by a plain parse and one walk that
    # builds no field's name (issue #35). JSON writes a NUL only as the escape \u0000
    # (the parser refuses a raw control character): a body without that text holds none.
    if b"\\u0000" not in body:
        try:
            if _fine(json.loads(body), max_depth):
                return []
        except (ValueError, RecursionError):
            pass  # the parse below says what is wrong, or leaves it to the app
    return named_problems(body, max_depth)


def named_problems(body: bytes, max_depth: int) -> list[dict[str, str]]:
    """``json_problems`` without its shortcut: a parse that keeps each refused number and
    a walk that names every field it looks at."""
    try:
        doc = json.loads(
            body,
            parse_constant=_bad_constant,
            parse_float=_checked_float,
            parse_int=_checked_int,
        )
    except RecursionError:
        return [{"field": "(root)", "message": f"JSON nested deeper than {max_depth} levels"}]
    except ValueError:  # not JSON (or not UTF-8): the app's own parser answers it
        return []
    problems: list[dict[str, str]] = []
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack and len(problems) < 20:
        value, path, depth = stack.pop()
        field = path or "(root)"
        if isinstance(value, dict | list):
            if depth >= max_depth:
                problems.append(
                    {"field": field, "message": f"JSON nested deeper than {max_depth} levels"}
                )
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and "\x00" in key:
                    problems.append({"field": _join(path, key.replace("\x00", "\\u0000")),
                                     "message": "NUL character (\\u0000) in a key"})  # fmt: skip
                    continue
                stack.append((item, _join(path, key), depth + 1))
        elif isinstance(value, _Bad):
            problems.append({"field": field, "message": f"{value.text}: {value.why}"})
        elif isinstance(value, str) and "\x00" in value:
            problems.append({"field": field, "message": "NUL character (\\u0000) not allowed"})
    return sorted(problems, key=lambda p: p["field"])


def _fine(doc: Any, max_depth: int) -> bool:
    """Whether a plainly parsed ``doc`` nests at most ``max_depth`` levels and holds only
    finite floats (a NaN, an Infinity or an overflow parses to one that is not) and
    integers in the signed 64-bit range; ``named_problems`` names what is not."""
    stack: list[tuple[Any, int]] = [([doc], -1)]  # the document as the item of a holder
    while stack:
        holder, depth = stack.pop()
        if depth >= max_depth:
            return False
        for item in holder.values() if type(holder) is dict else holder:
            kind = type(item)
            if kind is dict or kind is list:
                stack.append((item, depth + 1))
            elif (kind is float and not math.isfinite(item)) or (
                kind is int and not -INT64 - 1 <= item <= INT64
            ):
                return False
    return True


def _query_problems(scope: Scope) -> list[dict[str, str]]:
    problems = []
    if "\x00" in scope.get("path", ""):
        problems.append({"field": "(path)", "message": "NUL character in the URL path"})
    query = scope.get("query_string", b"").decode("latin-1")
    for key, value in parse_qsl(query, keep_blank_values=True):
        if "\x00" in key or "\x00" in value:
            problems.append({"field": key.replace("\x00", "\\u0000"),
                             "message": "NUL character (\\u0000) not allowed"})  # fmt: skip
    return problems


async def _answer(send: Send, status: int, body: dict[str, Any], close: bool = False) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:  # the rest of the body is never read: the connection cannot be reused
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _too_large(cap: int) -> dict[str, Any]:
    return {
        "error": "PayloadTooLarge",
        "message": f"request body larger than {cap} bytes (this server's limit)",
        "errors": [{"field": "(body)", "message": f"at most {cap} bytes"}],
    }


def _invalid(problems: list[dict[str, str]]) -> dict[str, Any]:
    detail = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
    return {"error": "InvalidRequest", "message": f"invalid request: {detail}", "errors": problems}


def header(scope: Scope, wanted: bytes) -> bytes | None:
    """The value of the request's first header named ``wanted`` (lower case), else None."""
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return bytes(value)
    return None


def bearer_token(scope: Scope) -> str | None:
    """The request's bearer token (``Authorization: Bearer <token>``), else None."""
    value = header(scope, b"authorization")
    if value is None:
        return None
    scheme, _, token = value.decode("latin-1").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


async def _unauthorized(send: Send, message: str) -> None:
    data = json.dumps({"detail": message}).encode()
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        (b"www-authenticate", b"Bearer"), (b"connection", b"close")]})  # fmt: skip
    await send({"type": "http.response.body", "body": data})


class RequestLimits:
    """ASGI middleware: body caps, JSON shape checks and NUL refusal before the app runs.

    ``known_token(token)`` says whether a raw bearer token is in the tokens file.
    """

    def __init__(
        self, app: ASGIApp, limits: Limits, known_token: Callable[[str], bool] | None = None
    ) -> None:
        self.app = app
        self.limits = limits
        self.known_token = known_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problems = _query_problems(scope)
        if problems:
            await _answer(send, 422, _invalid(problems))
            return
        artifact = scope["method"] == "PUT" and bool(_ARTIFACT_PATH.match(scope["path"]))
        cap = self.limits.max_artifact_bytes if artifact else self.limits.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            await _answer(send, 413, _too_large(cap), close=True)
            return
        if self.known_token is not None and scope["path"].startswith("/v1/"):
            token = bearer_token(scope)
            if not token:
                await _unauthorized(send, "a bearer token is required")
                return
            if not self.known_token(token):
                await _unauthorized(send, "unknown token")
                return
        if artifact:  # streamed to disk by the handler, which counts against the same cap
            await self.app(scope, receive, send)
            return
        try:
            body = await _read_capped(receive, cap)
        except _TooLarge:
            await _answer(send, 413, _too_large(cap), close=True)
            return
        if body:
            problems = json_problems(body, self.limits.max_json_depth)
            if problems:
                await _answer(send, 422, _invalid(problems))
                return
        await self.app(scope, replay(body, receive), send)


def _content_length(scope: Scope) -> int | None:
    value = header(scope, b"content-length")
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


async def _read_capped(receive: Receive, cap: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the app sees no body
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def read_body(receive: Receive) -> bytes:
    """The whole body of a request whose size ``RequestLimits`` capped already."""
    return await _read_capped(receive, math.inf)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then the client's own."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
