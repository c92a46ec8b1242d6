"""Versioned schema migrations for the PostgreSQL store.

Migrations are the files ``daemon/store/sql/postgres/NNNN_name.sql``, numbered from
0001 without gaps. ``migrate`` applies each pending one once, in order, each in its own
transaction that first takes a transaction-scoped advisory lock (per schema) and then
re-reads ``schema_migrations``: several processes or ``serve`` replicas starting at once
serialise on the lock and the later ones find the work done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from phoned.daemon.lifecycle.errors import StoreUnavailable

_FILE = re.compile(r"^(\d{4})_(\w+)\.sql$")

# hashtext() keys: one lock per schema, distinct from the events cursor lock
LOCK = (
    "SELECT pg_advisory_xact_lock(hashtext('phoned.migrations'), "
    "hashtext(coalesce(current_schema(), '')))"
)
CREATE_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version integer PRIMARY KEY, name text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())"
)


@dataclass(frozen=True)
class Migration:
    """One migration file: its number, name and SQL text."""

    version: int
    name: str
    sql: str


def bundled() -> list[Migration]:
    """The migrations shipped in ``sql/postgres``, in order; a gap is an error."""
    folder = resources.files("phoned.daemon.store").joinpath("sql").joinpath("postgres")
    found = []
    for entry in folder.iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text()))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise ValueError(f"migrations must be numbered 0001.. without gaps: {found}")
    return found


def applied_versions(conn: psycopg.Connection[Any]) -> set[int]:
    """Versions recorded in ``schema_migrations`` (the table must exist)."""
    with conn.cursor(row_factory=tuple_row) as cur:
        return {int(row[0]) for row in cur.execute("SELECT version FROM schema_migrations")}


def _apply_one(conn: psycopg.Connection[Any], migration: Migration) -> bool:
    """Apply ``migration`` unless another process did; True when this call applied it."""
    with conn.transaction():
        conn.execute(LOCK)
        conn.execute(CREATE_TABLE)
        if migration.version in applied_versions(conn):
            return False
        conn.execute(migration.sql.encode())
        conn.execute(
            "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
            (migration.version, migration.name),
        )
        return True


def _check_not_newer(conn: psycopg.Connection[Any], known: list[Migration]) -> None:
    with conn.transaction():
        conn.execute(LOCK)
        conn.execute(CREATE_TABLE)
        newest = max(applied_versions(conn), default=0)
    if newest > len(known):
        raise StoreUnavailable(
            f"queue schema version {newest} is newer than this build's {len(known)}"
        )


def migrate(conn: psycopg.Connection[Any], migrations: list[Migration] | None = None) -> list[int]:
    """Bring the schema up to date; return the versions this call applied.

    Raises ``StoreUnavailable`` when the database has a migration this build does not
    know (a newer phoned migrated it). ``psycopg`` errors propagate to the caller.
    """
    known = bundled() if migrations is None else migrations
    _check_not_newer(conn, known)
    return [m.version for m in known if _apply_one(conn, m)]
