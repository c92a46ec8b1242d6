"""The two store verbs the new-user fixes need, on a real SQLite file and a real PostgreSQL:
``submit_claimed`` (``run --once --task`` beside a daemon) and ``list_tasks(newest_first)``
(``phoned tasks`` and the monitor)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)

from phoned.daemon.lifecycle.contract import TaskSpec
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.protocol import Store

pytestmark = pytest.mark.integration


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened: Store
    if request.param == "sqlite":
        from phoned.daemon.store.sqlite_store import SqliteStore

        opened = SqliteStore(str(tmp_path / "q.db"))
    else:
        request.getfixturevalue("postgres_url")
        from phoned.daemon.store.postgres_store import PostgresStore

        opened = PostgresStore(fresh_schema_url(str(tmp_path)))
    yield opened
    opened.close()


def spec(level: int, device: str | None = None) -> TaskSpec:
    return TaskSpec.model_validate(
        {"method": "volume.set", "params": {"stream": "music", "level": level},
         "conversation_id": "c", "device": device}
    )  # fmt: skip


def test_submit_claimed_leases_the_new_task_before_anyone_sees_it_queued(store: Store) -> None:
    older = store.submit(spec(1), time.time())
    mine = store.submit_claimed(spec(2), "host/once/emu-1", "emu-1", time.time(), lease_s=30)
    assert mine.id != older.id and mine.state is TaskState.DISPATCHED
    assert mine.lease_owner == "host/once/emu-1" and mine.device == "emu-1" and mine.attempt == 1
    other = store.claim("host/emu-1", "emu-1", time.time())  # a daemon's worker on the queue
    assert other is not None and other.id == older.id
    assert store.claim("host/emu-1", "emu-1", time.time()) is None
    assert store.claim("host/emu-1", "emu-1", time.time(), task_id=mine.id) is None


def test_list_tasks_newest_first(store: Store) -> None:
    ids = [store.submit(spec(level), time.time() + level).id for level in range(4)]
    assert [t.id for t in store.list_tasks(limit=10)] == ids
    assert [t.id for t in store.list_tasks(limit=2, newest_first=True)] == ids[::-1][:2]
    queued = store.list_tasks(states=(TaskState.QUEUED,), limit=10, newest_first=True)
    assert [t.id for t in queued] == ids[::-1]


def test_the_sweeper_fails_a_task_left_queued_past_its_limit(store: Store) -> None:
    from phoned.daemon.store.sweeper import sweep

    now = time.time()
    limited = spec(1, device="emu-9").model_copy(
        update={"timeouts": spec(1).timeouts.model_copy(update={"queued_s": 60.0})}
    )
    late = store.submit(limited, now)
    unlimited = store.submit(spec(2, device="emu-9"), now)
    assert sweep(store, now + 59) == []
    (swept,) = sweep(store, now + 61)
    assert swept.id == late.id and swept.state is TaskState.FAILED and swept.attempt == 0
    assert swept.failure is not None and swept.failure.reason.value == "timeout"
    assert "not claimed within 60 s: no daemon serving device emu-9" in swept.failure.message
    assert store.get(unlimited.id).state is TaskState.QUEUED
