"""The schedules contract (seed 002's autopilot) over every SQL store: SQLite and PostgreSQL.

A clock is injected (every verb and the tick take ``now``): nothing sleeps for cron
minutes. Exactly once: several connections ticking the same due time at the same moment
(threads, each with its own connection, as separate daemons or plane replicas hold) create
one task.
"""

from __future__ import annotations

import itertools
import threading
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from phoned.daemon.lifecycle.errors import ConversationMismatch, InvalidTask, TaskNotFound
from phoned.daemon.lifecycle.records import Failure
from phoned.daemon.lifecycle.schedule_ops import AddSchedule, PauseSchedule, RemoveSchedule
from phoned.daemon.lifecycle.schedules import MISSED_RECORDED, next_due, validate_schedule
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.schedule_tick import tick
from phoned.daemon.store.sql_store import SqlStore

BERLIN = ZoneInfo("Europe/Berlin")
# 2026-03-02 10:00:30 in Berlin: 30 s past a whole minute
T0 = datetime(2026, 3, 2, 10, 0, 30, tzinfo=BERLIN).timestamp()
GRACE = 60.0


def _add(store: Store, cron: str = "*/5 * * * *", now: float = T0, **extra: object) -> str:
    raw = {
        "cron": cron,
        "tz": "Europe/Berlin",
        "conversation_id": "conv-a",
        "task": {"method": "dnd.get"},
        **extra,
    }
    spec = validate_schedule(raw, now=now)
    return store.apply(AddSchedule(spec, now)).id


def _another(store: Store) -> SqlStore:
    """Another connection to the queue of ``store`` (another process would hold one)."""
    from phoned.daemon.store.postgres_store import PostgresStore
    from phoned.daemon.store.sqlite_store import SqliteStore

    if isinstance(store, SqliteStore):
        return SqliteStore(store.sqlite.path)
    assert isinstance(store, PostgresStore)
    return PostgresStore(store.pg.url)


def _sql(store: Store) -> SqlStore:
    assert isinstance(store, SqlStore)
    return store


def test_added_schedule_lists_with_next_due_and_no_run(store: Store) -> None:
    schedule_id = _add(store, name="morning check")
    [listed] = _sql(store).schedules(T0)
    assert listed.id == schedule_id
    assert listed.name == "morning check"
    assert listed.task["source"] == "schedule"
    assert listed.last_run is None and listed.missed_count == 0
    assert listed.next_due_at == T0 + 270  # 10:05:00 Berlin
    assert _sql(store).schedules(T0, conversation_id="conv-b") == []


def test_each_due_time_fires_one_task_of_source_schedule(store: Store) -> None:
    schedule_id = _add(store)
    assert tick(_sql(store), T0 + 60, GRACE).fired == []  # nothing due yet
    due = T0 + 270
    first = tick(_sql(store), due + 5, GRACE)
    assert len(first.fired) == 1
    again = tick(_sql(store), due + 20, GRACE)
    assert again.fired == [] and again.next_due == due + 300
    task = store.get(first.fired[0])
    assert task.source == "schedule"
    assert task.conversation_id == "conv-a"
    assert task.spec["idempotency_key"] == f"schedule:{schedule_id}:{due:.0f}"
    listed = _sql(store).schedule(schedule_id, due + 20)
    assert listed.last_run is not None
    assert (listed.last_run.result, listed.last_run.task_id) == ("fired", task.id)
    assert listed.last_run.task_state == "queued"
    assert listed.last_due_at == due


def test_a_new_schedule_never_fires_for_due_times_before_it(store: Store) -> None:
    # added at 10:04:50: the 10:00 due time is before it (even inside the grace window)
    created = T0 + 260
    schedule_id = _add(store, now=created)
    assert tick(_sql(store), created + 1, GRACE).fired == []
    assert _sql(store).schedule(schedule_id, created + 1).missed_count == 0


def test_missed_due_times_are_recorded_not_fired_in_a_burst(store: Store) -> None:
    schedule_id = _add(store)
    # nothing ticked for 3 hours: 36 due times passed; the latest (at now) fires
    later = T0 + 270 + 3 * 3600
    done = tick(_sql(store), later + 10, GRACE)
    assert len(done.fired) == 1
    assert done.missed == 36
    listed = _sql(store).schedule(schedule_id, later + 10)
    assert listed.missed_count == 36
    runs = _sql(store).schedule_runs(schedule_id, limit=100)
    assert [r.result for r in runs].count("fired") == 1
    assert [r.result for r in runs].count("missed") == MISSED_RECORDED
    assert runs[0].result == "fired" and runs[0].due_at == later
    # the recorded missed ones are the newest before it
    missed = [r.due_at for r in runs if r.result == "missed"]
    assert missed == [later - 300 * k for k in range(1, MISSED_RECORDED + 1)]


def test_a_due_time_older_than_the_grace_is_missed_too(store: Store) -> None:
    schedule_id = _add(store)
    due = T0 + 270
    done = tick(_sql(store), due + GRACE + 30, GRACE)
    assert done.fired == [] and done.missed == 1
    listed = _sql(store).schedule(schedule_id, due + GRACE + 30)
    assert listed.last_run is not None and listed.last_run.result == "missed"
    assert listed.missed_count == 1
    assert store.list_tasks() == []


def test_a_paused_schedule_fires_nothing_and_resuming_counts_no_missed(store: Store) -> None:
    schedule_id = _add(store)
    paused = store.apply(PauseSchedule(schedule_id, "conv-a", True, T0 + 10))
    assert paused.paused and paused.next_due_at is None
    assert tick(_sql(store), T0 + 270 + 5, GRACE).fired == []
    resumed_at = T0 + 3600
    resumed = store.apply(PauseSchedule(schedule_id, "conv-a", False, resumed_at))
    assert not resumed.paused
    done = tick(_sql(store), resumed_at + 1, GRACE)
    assert done.fired == [] and done.missed == 0
    next_due = T0 + 270 + 3600  # 11:05 Berlin, after the resume
    assert len(tick(_sql(store), next_due + 1, GRACE).fired) == 1


def test_another_conversation_may_not_remove_or_pause(store: Store) -> None:
    schedule_id = _add(store)
    with pytest.raises(ConversationMismatch):
        store.apply(RemoveSchedule(schedule_id, "conv-b", T0))
    with pytest.raises(ConversationMismatch):
        store.apply(PauseSchedule(schedule_id, "conv-b", True, T0))
    removed = store.apply(RemoveSchedule(schedule_id, "conv-a", T0))
    assert removed.id == schedule_id
    assert _sql(store).schedules(T0) == []
    with pytest.raises(TaskNotFound):
        store.apply(RemoveSchedule(schedule_id, "conv-a", T0))


def test_a_scheduled_task_is_never_retried_automatically(store: Store) -> None:
    _add(store)
    [task_id] = tick(_sql(store), T0 + 275, GRACE).fired
    claimed = store.claim("daemon-1/SERIAL", None, T0 + 276)
    assert claimed is not None and claimed.id == task_id
    store.start(claimed.ticket, T0 + 277)
    failure = Failure(FailureReason.RUNTIME_OFFLINE, "daemon went away")  # retryable
    ended = store.fail(store.get(task_id).ticket, failure, T0 + 278)
    assert ended.state is TaskState.FAILED
    listed = _sql(store).schedules(T0 + 279)[0]
    assert listed.last_run is not None and listed.last_run.task_state == "failed"


def test_several_connections_ticking_at_once_create_one_task_per_due_time(store: Store) -> None:
    _add(store, cron="* * * * *")
    others = [_another(store) for _ in range(3)]
    stores = [_sql(store), *(_sql(s) for s in others)]
    fired: list[str] = []
    lock = threading.Lock()
    try:
        for minute in range(1, 4):
            now = T0 + 60 * minute - 20  # 10 s after each whole minute
            barrier = threading.Barrier(len(stores))

            def run(one: SqlStore, at: float = now, gate: threading.Barrier = barrier) -> None:
                gate.wait()
                done = tick(one, at, GRACE)
                with lock:
                    fired.extend(done.fired)

            threads = [threading.Thread(target=run, args=(s,)) for s in stores]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=30)
        assert len(fired) == 3
        assert len(set(fired)) == 3
        assert len(store.list_tasks()) == 3
    finally:
        for other in others:
            other.close()


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"cron": "0 0 30 2 *"}, "cron"),  # never fires
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "* * * *"}, "cron"),
        ({"tz": "Mars/Olympus"}, "tz"),
        ({"task": {"method": "dnd.sett"}}, "task.method"),
        ({"task": {"method": "dnd.set", "params": {"mode": "loud"}}}, "task.params.mode"),
        ({"task": {"method": "dnd.get", "conversation_id": "conv-b"}}, "task.conversation_id"),
        ({"conversation_id": ""}, "conversation_id"),
        ({"task": {"method": "dnd.get", "workflow_id": "wf-1"}}, "task.workflow_id"),
        ({"task": {"method": "dnd.get", "idempotency_key": "k"}}, "task.idempotency_key"),
    ],
)
def test_bad_schedules_are_refused_naming_the_field(raw: dict[str, object], field: str) -> None:
    base: dict[str, object] = {
        "cron": "*/5 * * * *",
        "tz": "UTC",
        "conversation_id": "conv-a",
        "task": {"method": "dnd.get"},
    }
    with pytest.raises(InvalidTask) as refused:
        validate_schedule({**base, **raw}, now=T0)
    assert field in [e["field"] for e in refused.value.errors]


def _next_two_in_berlin(expression: str, after: datetime) -> tuple[float, float]:
    """The next two times ``expression`` is due in Berlin after ``after`` (both exist)."""
    first = next_due(expression, "Europe/Berlin", after.timestamp())
    assert first is not None
    second = next_due(expression, "Europe/Berlin", first)
    assert second is not None
    return first, second


def test_a_daily_schedule_keeps_its_local_time_across_daylight_saving() -> None:
    before = datetime(2026, 3, 27, 12, 0, tzinfo=BERLIN)  # DST starts 29 March
    first, second = _next_two_in_berlin("30 8 * * *", before)
    assert datetime.fromtimestamp(first, BERLIN).hour == 8
    assert datetime.fromtimestamp(second, BERLIN).hour == 8
    assert second - first == 23 * 3600  # the night the clocks went forward


def test_a_local_time_the_clocks_pass_twice_fires_once_when_the_hour_is_named() -> None:
    before = datetime(2026, 10, 24, 12, 0, tzinfo=BERLIN)  # DST ends 25 October
    first, second = _next_two_in_berlin("30 2 * * *", before)
    assert second - first == 25 * 3600  # 02:30 CEST, then 02:30 CET the next night
    # an expression that does not name its hours runs in both passes of the hour
    night = datetime(2026, 10, 25, 1, 50, tzinfo=BERLIN).timestamp()
    dues = []
    for _ in range(4):
        found = next_due("*/20 * * * *", "Europe/Berlin", dues[-1] if dues else night)
        assert found is not None
        dues.append(found)
    assert [b - a for a, b in itertools.pairwise(dues)] == [1200.0, 1200.0, 1200.0]


def test_a_stored_task_ingress_no_longer_takes_is_a_refused_run_not_a_task(store: Store) -> None:
    import json

    from phoned.daemon.store.sqlite_store import SqliteStore

    schedule_id = _add(store)
    # the row as an older build wrote it: a method this build does not know
    task = json.dumps({"method": "torch.set", "params": {}, "conversation_id": "conv-a"})
    mark = "?" if isinstance(store, SqliteStore) else "%s"
    conn = _sql(store).db._conn  # type: ignore[attr-defined]
    with _sql(store).db.transaction():
        conn.execute(f"UPDATE schedules SET task = {mark} WHERE id = {mark}", (task, schedule_id))
    done = tick(_sql(store), T0 + 275, GRACE)
    assert done.fired == [] and done.refused == [schedule_id]
    assert store.list_tasks() == []
    listed = _sql(store).schedule(schedule_id, T0 + 276)
    assert listed.last_run is not None and listed.last_run.result == "refused"
    assert "method" in (listed.last_run.message or "")
    assert tick(_sql(store), T0 + 280, GRACE).refused == []  # that due time was handled


def test_a_queue_idle_for_a_month_counts_its_missed_runs_up_to_a_bound() -> None:
    from phoned.daemon.lifecycle.schedules import MISSED_COUNTED, ScheduleRecord, plan_tick

    record = ScheduleRecord(
        id="s", cron="0 * * * *", tz="UTC", conversation_id="c", task={}, name=None,
        paused=False, created_at=T0, updated_at=T0, armed_at=T0, last_due_at=None,
        missed_count=0,
    )  # fmt: skip
    whole_hour = T0 - T0 % 3600
    days = 30  # 720 hourly due times: counted one by one
    plan = plan_tick(record, whole_hour + days * 86400 + 5, GRACE)
    assert plan.fire == whole_hour + days * 86400
    assert plan.missed_total == days * 24 - 1 and plan.counted_all
    assert len(plan.missed) == MISSED_RECORDED
    minutely = ScheduleRecord(**{**record.__dict__, "cron": "* * * * *"})
    idle = plan_tick(minutely, whole_hour + days * 86400 + 5, GRACE)  # 43 200 due times
    assert not idle.counted_all and idle.missed_total >= MISSED_COUNTED
