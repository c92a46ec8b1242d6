"""Open the task store a queue URL names: ``sqlite:///path`` (embedded default) or
``postgresql://user@host:port/db`` (fleets; see docs/postgres.md).

SQLite URLs follow the usual form: ``sqlite:///queue.db`` is relative to the working
directory, ``sqlite:////var/lib/phoned/queue.db`` (a fourth slash) is absolute.
"""

from __future__ import annotations

import os
from pathlib import Path

from daemon.store.protocol import Store

SQLITE_PREFIX = "sqlite:///"


class QueueUrlError(ValueError):
    """The queue URL names no store this build can open."""


class QueueMissing(QueueUrlError):
    """A reading verb named a SQLite queue that does not exist (nothing is created)."""


def sqlite_path(url: str) -> Path:
    """The file a ``sqlite:///`` URL names, absolute (a relative one is under the cwd)."""
    rest = url[len(SQLITE_PREFIX) :]
    if not rest:
        raise QueueUrlError(f"queue URL {url!r} names no file")
    return Path(os.path.abspath(rest))  # "/abs" stays absolute, "rel" joins the cwd


def open_store(url: str, *, create: bool = True) -> Store:
    """The store behind ``url``; raise ``QueueUrlError`` with what is wrong.

    With ``create=False`` a SQLite queue that does not exist yet is not created (neither
    its folder nor the file): ``QueueMissing`` says so instead.
    """
    if url.startswith(SQLITE_PREFIX):
        path = sqlite_path(url)
        if not create and not path.exists():
            raise QueueMissing(f"no queue at {path} (nothing was submitted there; check --queue)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise QueueUrlError(
                f"cannot open queue {path}: cannot create {path.parent}: {exc.strerror}"
            ) from exc
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise QueueUrlError(f"cannot open queue {path}: {path.parent} is not writable")
        from daemon.store.sqlite_store import SqliteStore

        return SqliteStore(str(path))
    if url.startswith(("http://", "https://")):  # a remote control plane (``phoned serve``)
        from daemon.store.http_store import open_http_store

        return open_http_store(url)
    if url.startswith(("postgresql://", "postgres://")):
        from daemon.store.postgres_store import PostgresStore

        return PostgresStore(url)
    raise QueueUrlError("queue URL must start with sqlite:///, postgresql:// or http(s)://")
