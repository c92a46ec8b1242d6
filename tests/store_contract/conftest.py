"""The store contract suites.

``store``: the whole ``Store`` contract (``test_store_contract.py``) against every factory
in ``STORE_FACTORIES`` (the SQL stores). ``queue``: the ``WorkerStore`` and ``PlannerStore``
contracts (``test_worker_contract.py``, ``test_planner_contract.py``) over the same stores
and over HTTP (``HttpStore`` and ``PlaneClient`` against ``phoned serve``'s app over a real
SQLite queue, in this process). A new backend joins by adding a factory here, marked as needed (``pytest.param(..., marks=pytest.mark.postgres)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)
from served_plane import Queue, ServedPlane

from phoned.daemon.store.http_store import HttpStore, PlaneLink
from phoned.daemon.store.plane_client import PlaneClient
from phoned.daemon.store.postgres_store import PostgresStore
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.sqlite_store import SqliteStore

StoreFactory = Callable[[Path], Store]


def _sqlite_file(tmp: Path) -> Store:
    return SqliteStore(str(tmp / "queue.db"))


def _postgres(tmp: Path) -> Store:
    """A store in a schema of its own on the session's throwaway server (same tmp, same queue)."""
    return PostgresStore(fresh_schema_url(str(tmp)))


STORE_FACTORIES: dict[str, StoreFactory] = {"sqlite-file": _sqlite_file, "postgres": _postgres}
# backends that need a server: their marker, and the session fixture that starts it
# (skipped with the reason locally, failed under CI, when the server cannot start)
_NEEDS_SERVER: dict[str, tuple[pytest.MarkDecorator, str]] = {
    "postgres": (pytest.mark.postgres, "postgres_url"),
}


def _param(kind: str) -> object:
    needs = _NEEDS_SERVER.get(kind)
    return pytest.param(kind, marks=needs[0]) if needs else kind


@pytest.fixture
def second_store(store: Store, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Another connection to the same queue as ``store`` (another process would hold one)."""
    kind = request.node.callspec.params["store"]
    instance = STORE_FACTORIES[kind](tmp_path)
    yield instance
    instance.close()


@pytest.fixture(params=[_param(kind) for kind in sorted(STORE_FACTORIES)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store of each kind; closed at teardown."""
    if request.param in _NEEDS_SERVER:
        request.getfixturevalue(_NEEDS_SERVER[request.param][1])
    instance = STORE_FACTORIES[request.param](tmp_path)
    yield instance
    instance.close()


# --- the worker protocol over every store, HTTP included ------------------------------------


def _local_artifact(value: str) -> bytes:
    return Path(value).read_bytes()


@pytest.fixture(params=[_param(kind) for kind in [*sorted(STORE_FACTORIES), "http"]])
def queue(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Queue]:
    """A fresh, empty queue of each kind: SQLite, PostgreSQL, and a plane over SQLite."""
    kind = request.param
    if kind in _NEEDS_SERVER:
        request.getfixturevalue(_NEEDS_SERVER[kind][1])
    if kind != "http":
        store = STORE_FACTORIES[kind](tmp_path)
        yield Queue(kind, store, store, store, _local_artifact)
        store.close()
        return
    plane = ServedPlane(tmp_path)
    link = PlaneLink(plane.url, plane.tokens["daemon"], tmp_path / "outbox.db")
    planner = PlaneClient(plane.url, plane.tokens["planner"])
    approver = PlaneClient(plane.url, plane.tokens["approver"])

    def artifact(value: str) -> bytes:
        answer = httpx.get(
            plane.url + value, headers={"Authorization": f"Bearer {plane.tokens['planner']}"}
        )
        answer.raise_for_status()
        return answer.content

    try:
        yield Queue(
            kind, HttpStore(link, idle_wait=5.0, sync_wait=2.0), planner, approver, artifact
        )
    finally:
        link.close()
        planner.close()
        approver.close()
        plane.stop()
