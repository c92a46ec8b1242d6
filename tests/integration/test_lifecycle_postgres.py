"""The PostgreSQL server enforces #13's lifecycle rules itself (migration 0003): a revision is
always the next one, is recorded in ``task_revisions`` and never changes on a terminal task;
a person may pause a queued task (queued -> waiting); a SQLite queue of schema 1 is migrated
to the same shape."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.postgres_store import PostgresStore
from phoned.daemon.store.sqlite_store import SqliteStore

T0 = 1_000.0


@pytest.fixture
def pg(postgres_url: str, tmp_path: Path) -> Iterator[PostgresStore]:  # noqa: F811
    store = PostgresStore(fresh_schema_url(str(tmp_path)))
    yield store
    store.close()


def _task(store: PostgresStore | SqliteStore) -> str:
    spec = validate_task({"method": "dnd.set", "params": {"mode": "off"}, "conversation_id": "c"})
    return store.submit(spec, T0).id


@pytest.mark.postgres
@pytest.mark.parametrize(
    "update",
    [
        "UPDATE tasks SET revision = 3 WHERE id = %s",  # skips revision 2
        "UPDATE tasks SET revision = 2 WHERE id = %s",  # revision 2 was never recorded
    ],
)
def test_the_database_refuses_a_revision_that_is_not_the_next_recorded_one(
    pg: PostgresStore, update: str
) -> None:
    task_id = _task(pg)
    with psycopg.connect(pg.pg.url) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(update, (task_id,))
    assert pg.get(task_id).revision == 1


@pytest.mark.postgres
def test_the_database_refuses_a_revision_of_a_terminal_task(pg: PostgresStore) -> None:
    task_id = _task(pg)
    pg.cancel(task_id, "c", T0 + 1)
    with psycopg.connect(pg.pg.url) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "INSERT INTO task_revisions (task_id, revision, params, conversation_id, created_at)"
            " VALUES (%s, 2, '{}', 'c', 0)",
            (task_id,),
        )
        conn.execute("UPDATE tasks SET revision = 2 WHERE id = %s", (task_id,))


@pytest.mark.postgres
def test_a_person_may_pause_a_queued_task_on_the_server_too(pg: PostgresStore) -> None:
    task_id = _task(pg)
    assert pg.user_pause(task_id, "c", T0 + 1).state is TaskState.WAITING
    assert pg.user_resume(task_id, "c", T0 + 2).state is TaskState.QUEUED
    assert [r.revision for r in pg.revisions(task_id)] == [1]


def test_a_schema_1_sqlite_queue_is_migrated_with_its_revisions(tmp_path: Path) -> None:
    path = tmp_path / "queue.db"
    store = SqliteStore(str(path))
    task_id = _task(store)
    store.close()
    conn = sqlite3.connect(path)  # as phoned before #13 left it
    conn.execute("DROP TABLE task_revisions")
    conn.execute("ALTER TABLE tasks DROP COLUMN pause_requested")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    store = SqliteStore(str(path))
    try:
        assert [(r.revision, r.params) for r in store.revisions(task_id)] == [(1, {"mode": "off"})]
        assert store.user_pause(task_id, "c", time.time()).pause_requested
    finally:
        store.close()
