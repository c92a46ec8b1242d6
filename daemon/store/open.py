"""Open the queue a URL names: ``sqlite:///path`` (embedded default),
``postgresql://user@host:port/db`` (fleets; see docs/postgres.md) or ``http(s)://`` (a
control plane, ``phoned serve``; see docs/control-plane.md).

* ``open_store``: the whole queue, held directly (SQL URLs only): ``phoned serve``, tests;
* ``open_planner_store``: what the ``phoned`` verbs use: the SQL store, or ``PlaneClient``;
* ``WorkerStores``: how a daemon opens its queue: one ``WorkerStore`` per thread (the SQL
  store, or an ``HttpStore`` view of the process's one ``PlaneLink``), and ``sweeps``.
"""

from __future__ import annotations

import os
from pathlib import Path

from daemon.store.protocol import PlannerStore, Store, WorkerStore

OUTBOX_ENV = "PHONED_OUTBOX"  # a daemon's outbox file (default: <state dir>/outbox.db)


class QueueUrlError(ValueError):
    """The queue URL names no store this build can open."""


def _is_plane(url: str) -> bool:
    return url.startswith(("http://", "https://"))


def open_store(url: str) -> Store:
    """The SQL store behind ``url``; raise ``QueueUrlError`` with what is wrong."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") - 1 :])
        from daemon.store.sqlite_store import SqliteStore
        from device.private_files import private_dir

        private_dir(path.parent, own=False)  # a folder made here is 0700

        return SqliteStore(str(path))
    if url.startswith(("postgresql://", "postgres://")):
        from daemon.store.postgres_store import PostgresStore

        return PostgresStore(url)
    if _is_plane(url):
        raise QueueUrlError(f"{url} is a control plane: its queue is behind its API")
    raise QueueUrlError("queue URL must start with sqlite:///, postgresql:// or http(s)://")


def open_planner_store(url: str) -> PlannerStore:
    """The planner's side of ``url``: the SQL store, or the plane's API with ``$PHONED_TOKEN``."""
    if _is_plane(url):
        from daemon.store.plane_client import PlaneClient, token_from_env

        return PlaneClient(url, token_from_env())
    return open_store(url)


class WorkerStores:
    """A daemon's stores: call it for one ``WorkerStore`` per thread; ``close()`` at exit.

    An ``http(s)://`` queue shares one ``PlaneLink`` (connection, outbox at
    ``$PHONED_OUTBOX`` else ``<state_dir>/outbox.db``, records) between the views; an
    embedded queue is opened per thread and swept by the daemon (``sweeps``).
    """

    def __init__(self, url: str, state_dir: Path) -> None:
        self.url = url
        self.sweeps = not _is_plane(url)  # a plane sweeps its own queue
        self._link = None
        if _is_plane(url):
            from daemon.store.http_store import PlaneLink
            from daemon.store.plane_client import token_from_env

            outbox = Path(os.environ.get(OUTBOX_ENV) or state_dir / "outbox.db")
            self._link = PlaneLink(url, token_from_env(), outbox)
        else:
            open_store(url).close()  # fail early on a bad queue

    def __call__(self) -> WorkerStore:
        if self._link is None:
            return open_store(self.url)
        from daemon.store.http_store import HttpStore

        return HttpStore(self._link)

    def full(self) -> Store:
        """The whole queue (embedded queues only): the daemon's sweeper."""
        return open_store(self.url)

    def close(self) -> None:
        """Close the plane link (queued reports stay in the outbox for the next start)."""
        if self._link is not None:
            self._link.close()
            self._link = None
