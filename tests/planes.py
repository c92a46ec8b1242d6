"""The control plane as tests set it up: a tokens file, and the app under a TestClient.

* ``write_tokens(path, {name: Grant(role, devices, conversations)})``: a tokens file (mode
  0600) with one fresh token per name; the raw tokens by name (unit and integration tests).
* ``plane_settings(tmp, queue_url=None, name="serve", **extra)``: ``ServerSettings`` over
  ``tmp/queue.db`` (or ``queue_url``) with the tokens file ``tmp/tokens.yaml``.
* ``app_plane(settings, tokens)``: ``phoned serve``'s app in this process (FastAPI
  TestClient over ``create_app``), as an ``AppPlane`` that calls it as any token.
* ``loose_umask_plane(tmp, grants)``: the same with its tokens file written, under umask 0o002.
* Requests the server tests make again and again, through an ``AppPlane`` whose tokens
  hold a ``planner`` and a ``daemon`` for ``SERIAL``: ``submit(plane, **fields)`` (``DND``
  in conversation ``c1``), ``claimed(plane, device)``, ``ticket(task)`` (what a report of
  the claim carries), ``running(plane)`` (submitted, claimed and started).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from phoned.daemon.server.auth import Role, make_token

SERIAL = "emu-1"
DND = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c1"}


@dataclasses.dataclass(frozen=True)
class Grant:
    """What one token of a tokens file may do: its role, devices and conversations."""

    role: str
    devices: tuple[str, ...] = ()
    conversations: tuple[str, ...] = ()


def write_tokens(path: Path, grants: Mapping[str, Grant]) -> dict[str, str]:
    """A tokens file (mode 0600) with a fresh token per name; the raw tokens by name."""
    tokens: dict[str, str] = {}
    entries: list[Any] = []
    for name, grant in grants.items():
        tokens[name], entry = make_token(
            Role(grant.role), grant.devices, name=name, conversations=grant.conversations
        )
        entries.extend(yaml.safe_load(entry))
    path.write_text(yaml.safe_dump({"tokens": entries}))
    path.chmod(0o600)
    return tokens


def plane_settings(
    tmp: Path, queue_url: str | None = None, name: str = "serve", **extra: Any
) -> Any:
    """``ServerSettings`` for a test plane: its queue, state dir ``tmp/NAME``, the tokens
    file ``tmp/tokens.yaml``, a short fallback poll; ``extra`` overrides any field."""
    from phoned.daemon.server.settings import ServerSettings

    return ServerSettings(
        queue_url=queue_url or f"sqlite:///{tmp / 'queue.db'}",
        state_dir=tmp / name,
        tokens_path=tmp / "tokens.yaml",
        **{"fallback_poll": 0.05, **extra},
    )


class AppPlane:
    """A TestClient over the app, and the raw tokens it may call with."""

    def __init__(self, client: Any, tokens: dict[str, str]) -> None:
        self.client = client
        self.tokens = tokens

    def call(self, who: str | None, method: str, path: str, **kw: Any) -> Any:
        """``method path`` as token ``who`` (None: no token)."""
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        headers.update(kw.pop("headers", {}))
        return self.client.request(method, path, headers=headers, **kw)

    def ok(self, who: str, method: str, path: str, **kw: Any) -> Any:
        """The JSON answer of a call that must succeed (200 or 201)."""
        response = self.call(who, method, path, **kw)
        assert response.status_code in (200, 201), (who, path, response.text)
        return response.json()


def app_client(app: Any) -> Any:
    """A ``TestClient`` for ``app`` (run it as a context manager to run its lifespan)."""
    from starlette.exceptions import StarletteDeprecationWarning

    with warnings.catch_warnings():  # starlette 1.x prefers httpx2 for its TestClient
        warnings.simplefilter("ignore", StarletteDeprecationWarning)
        from fastapi.testclient import TestClient
    return TestClient(app)


@contextlib.contextmanager
def app_plane(settings: Any, tokens: dict[str, str], kind: type = AppPlane) -> Iterator[Any]:
    """``create_app(settings)`` under a TestClient (its lifespan running) as ``kind``."""
    from phoned.daemon.server.app import create_app
    from phoned.daemon.server.auth import TokenBook

    with app_client(create_app(settings, TokenBook.load(settings.tokens_path))) as client:
        yield kind(client, tokens)


@contextlib.contextmanager
def loose_umask_plane(tmp: Path, grants: Mapping[str, Grant]) -> Iterator[AppPlane]:
    """``app_plane`` over ``tmp`` with a tokens file of ``grants``, run under umask 0o002 (a
    group-writable default), so what the plane writes is as private as it makes it itself."""
    raw = write_tokens(tmp / "tokens.yaml", grants)
    old = os.umask(0o002)
    try:
        with app_plane(plane_settings(tmp), raw) as plane:
            yield plane
    finally:
        os.umask(old)


def submit(plane: AppPlane, **fields: Any) -> dict[str, Any]:
    """A ``DND`` task (``fields`` override it) submitted by the ``planner`` token."""
    task: dict[str, Any] = plane.ok("planner", "POST", "/v1/tasks", json={**DND, **fields})["task"]
    return task


def claimed(plane: AppPlane, device: str = SERIAL) -> dict[str, Any]:
    """The next task of ``device``, claimed by the ``daemon`` token as ``d1/<device>``."""
    body = {"owner": f"d1/{device}", "device": device}
    task: dict[str, Any] = plane.ok("daemon", "POST", "/v1/claims", json=body)["task"]
    return task


def ticket(task: dict[str, Any]) -> dict[str, Any]:
    """The ticket a report on the claimed ``task`` carries (owner, attempt, revision)."""
    return {"owner": task["lease_owner"], "attempt": task["attempt"], "revision": task["revision"]}


def running(plane: AppPlane) -> dict[str, Any]:
    """A ``DND`` task submitted, claimed and started; the task as claimed."""
    submit(plane)
    task = claimed(plane)
    plane.ok("daemon", "POST", f"/v1/tasks/{task['id']}/start", json={"ticket": ticket(task)})
    return task
