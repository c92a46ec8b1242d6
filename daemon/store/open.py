"""Open the task store a queue URL names: ``sqlite:///path`` (embedded default) or
``postgresql://user@host:port/db`` (fleets; see docs/postgres.md)."""

from __future__ import annotations

from pathlib import Path

from daemon.store.protocol import Store


class QueueUrlError(ValueError):
    """The queue URL names no store this build can open."""


def open_store(url: str) -> Store:
    """The store behind ``url``; raise ``QueueUrlError`` with what is wrong."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") - 1 :])
        from daemon.store.sqlite_store import SqliteStore
        from device.private_files import private_dir

        private_dir(path.parent, own=False)  # a folder made here is 0700

        return SqliteStore(str(path))
    if url.startswith(("http://", "https://")):  # a remote control plane (``phoned serve``)
        from daemon.store.http_store import open_http_store

        return open_http_store(url)
    if url.startswith(("postgresql://", "postgres://")):
        from daemon.store.postgres_store import PostgresStore

        return PostgresStore(url)
    raise QueueUrlError("queue URL must start with sqlite:///, postgresql:// or http(s)://")
