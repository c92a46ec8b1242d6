"""The store contract suite runs against every factory in ``STORE_FACTORIES``.

A new backend (PostgreSQL, HTTP) joins by adding a factory here, marked as needed
(``pytest.param(..., marks=pytest.mark.postgres)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)

from daemon.store.postgres_store import PostgresStore
from daemon.store.protocol import Store
from daemon.store.sqlite_store import SqliteStore

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
