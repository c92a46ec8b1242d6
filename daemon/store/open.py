"""Open the queue a URL names: ``sqlite:///path`` (embedded default),
``postgresql://user@host:port/db`` (fleets; see docs/postgres.md) or ``http(s)://`` (a
control plane, ``phoned serve``; see docs/control-plane.md).

SQLite URLs follow the usual form: ``sqlite:///queue.db`` is relative to the working
directory, ``sqlite:////var/lib/phoned/queue.db`` (a fourth slash) is absolute.

PostgreSQL needs the ``postgres`` extra (psycopg): without it a ``postgresql://`` URL is a
``QueueUrlError`` (exit 2) that says ``pip install 'phoned[postgres]'``. Nothing imports
psycopg until such a URL is opened, so SQLite and control-plane installs run without it.

* ``open_store``: the whole queue, held directly (SQL URLs only): ``phoned serve``, tests;
* ``open_planner_store``: what the ``phoned`` verbs use: the SQL store, or ``PlaneClient``;
* ``WorkerStores``: how a daemon opens its queue: one ``WorkerStore`` per thread (the SQL
  store, or an ``HttpStore`` view of the process's one ``PlaneLink``), and ``sweeps``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from phoned.daemon.store.protocol import PlannerStore, Store, TaskWrites, WorkerStore
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.foundation.private_files import UnsafePath, sqlite_file

if TYPE_CHECKING:
    from phoned.daemon.store.http_store import PlaneLink

OUTBOX_ENV = "PHONED_OUTBOX"  # a daemon's outbox file (default: <state dir>/outbox.db)

SQLITE_PREFIX = "sqlite:///"
POSTGRES_PREFIXES = ("postgresql://", "postgres://")
POSTGRES_EXTRA_HINT = "pip install 'phoned[postgres]'"


class QueueUrlError(ValueError):
    """The queue URL names no store this build can open."""


def _is_plane(url: str) -> bool:
    return url.startswith(("http://", "https://"))


class QueueMissing(QueueUrlError):
    """A reading verb named a SQLite queue that does not exist (nothing is created)."""


def require_postgres_driver() -> None:
    """Raise ``QueueUrlError`` naming the ``postgres`` extra when psycopg cannot be imported."""
    try:
        # lazy: psycopg is the optional postgres extra, imported only to learn whether it is there
        import psycopg  # noqa: F401
    except ImportError as exc:  # not installed, or installed without a libpq it can load
        raise QueueUrlError(
            f"a postgresql:// queue needs psycopg, which this install lacks ({exc}): "
            f"install phoned's PostgreSQL extra, {POSTGRES_EXTRA_HINT}"
        ) from exc


def sqlite_path(url: str) -> Path:
    """The file a ``sqlite:///`` URL names, absolute (a relative one is under the cwd)."""
    rest = url[len(SQLITE_PREFIX) :]
    if not rest:
        raise QueueUrlError(f"queue URL {url!r} names no file")
    return Path(os.path.abspath(rest))  # "/abs" stays absolute, "rel" joins the cwd


def open_store(url: str, *, create: bool = True, busy_wait_s: float | None = None) -> Store:
    """The store behind ``url``; raise ``QueueUrlError`` with what is wrong.

    With ``create=False`` a SQLite queue that does not exist yet is not created (neither
    its folder nor the file): ``QueueMissing`` says so instead. ``busy_wait_s``: how long
    a SQLite call waits for another process's write lock (``queue_busy_wait`` for the
    verbs; a daemon's default is shorter, and it retries: ``phoned.daemon.runtime.patience``).
    """
    if url.startswith(SQLITE_PREFIX):
        path = sqlite_path(url)
        if not create and not path.exists():
            raise QueueMissing(f"no queue at {path} (nothing was submitted there; check --queue)")

        try:  # a folder made here is 0700; it, the queue and its side files are never links
            sqlite_file(path)
        except UnsafePath as exc:
            raise QueueUrlError(f"cannot open queue {path}: {exc}") from exc
        except OSError as exc:
            raise QueueUrlError(
                f"cannot open queue {path}: cannot create {path.parent}: {exc.strerror}"
            ) from exc
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise QueueUrlError(f"cannot open queue {path}: {path.parent} is not writable")
        if busy_wait_s is None:
            return SqliteStore(str(path))
        return SqliteStore(str(path), busy_wait_s)
    if url.startswith(POSTGRES_PREFIXES):
        require_postgres_driver()
        # lazy: psycopg is the optional postgres extra (a SQLite or plane install lacks it)
        from phoned.daemon.store.postgres_store import PostgresStore

        return PostgresStore(url)
    if _is_plane(url):
        raise QueueUrlError(f"{url} is a control plane: its queue is behind its API")
    raise QueueUrlError("queue URL must start with sqlite:///, postgresql:// or http(s)://")


def open_planner_store(
    url: str, *, create: bool = True, busy_wait_s: float | None = None
) -> PlannerStore:
    """The planner's side of ``url``: the SQL store, or the plane's API with ``$PHONED_TOKEN``.

    ``create=False``: a SQLite queue that does not exist is ``QueueMissing``, not created.
    """
    if _is_plane(url):
        # a verb on a SQLite queue starts about 0.1 s sooner without it (issue #35)
        # lazy: the plane's HTTP client (urllib3) is imported only for a plane's URL
        from phoned.daemon.store.plane_client import PlaneClient, token_from_env

        return PlaneClient(url, token_from_env())
    return open_store(url, create=create, busy_wait_s=busy_wait_s)


class WorkerStores:
    """A daemon's stores: call it for one ``WorkerStore`` per thread; ``close()`` at exit.

    An ``http(s)://`` queue shares one ``PlaneLink`` (connection, outbox at
    ``$PHONED_OUTBOX`` else ``<state_dir>/outbox.db``, records) between the views; an
    embedded queue is opened per thread and swept by the daemon (``sweeps``).
    """

    def __init__(self, url: str, state_dir: Path, on_write: TaskWrites | None = None) -> None:
        self.url = url
        self.on_write = on_write  # given to every store opened here (the daemon's metrics)
        self.sweeps = not _is_plane(url)  # a plane sweeps its own queue
        # one claim for every idle phone of the daemon (the plane has no batch claim: its
        # workers keep one long-poll each)
        self.batch_claims = not _is_plane(url)
        self._link: PlaneLink | None = None
        if _is_plane(url):
            # lazy: as in open_planner_store, only a daemon on a plane imports its client
            from phoned.daemon.store.http_store import PlaneLink
            from phoned.daemon.store.plane_client import token_from_env

            outbox = Path(os.environ.get(OUTBOX_ENV) or state_dir / "outbox.db")
            self._link = PlaneLink(url, token_from_env(), outbox)
        else:
            open_store(url).close()  # fail early on a bad queue

    def __call__(self) -> WorkerStore:
        if self._link is None:
            store: WorkerStore = open_store(self.url)
        else:
            # lazy: imported with the link, in __init__ (this import finds it loaded)
            from phoned.daemon.store.http_store import HttpStore

            store = HttpStore(self._link)
        store.on_write = self.on_write
        return store

    def full(self) -> Store:
        """The whole queue (embedded queues only): the daemon's sweeper."""
        store = open_store(self.url)
        store.on_write = self.on_write
        return store

    def pending_reports(self) -> int | None:
        """Reports in the outbox not yet acknowledged by the plane; None for an embedded
        queue (no outbox)."""
        link = self._link
        return None if link is None else link.courier.outbox.count()

    def close(self) -> None:
        """Close the plane link (queued reports stay in the outbox for the next start)."""
        if self._link is not None:
            self._link.close()
            self._link = None
