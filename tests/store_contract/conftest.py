"""The store contract suite runs against every factory in ``STORE_FACTORIES``.

A new backend (PostgreSQL, HTTP) joins by adding a factory here, marked as needed
(``pytest.param(..., marks=pytest.mark.postgres)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from daemon.store.protocol import Store
from daemon.store.sqlite_store import SqliteStore

StoreFactory = Callable[[Path], Store]


def _sqlite_file(tmp: Path) -> Store:
    return SqliteStore(str(tmp / "queue.db"))


STORE_FACTORIES: dict[str, StoreFactory] = {"sqlite-file": _sqlite_file}


@pytest.fixture
def second_store(store: Store, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Another connection to the same queue as ``store`` (another process would hold one)."""
    kind = request.node.callspec.params["store"]
    instance = STORE_FACTORIES[kind](tmp_path)
    yield instance
    instance.close()


@pytest.fixture(params=sorted(STORE_FACTORIES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store of each kind; closed at teardown."""
    instance = STORE_FACTORIES[request.param](tmp_path)
    yield instance
    instance.close()
