"""PostgresStore under real concurrency: processes, threads and migrations racing.

Every test runs against the session's throwaway PostgreSQL server
(``tests/postgres_server.py``), each in a schema of its own.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from helpers import assert_claimed_once_each
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.errors import (
    ApprovalMismatch,
    RevisionSuperseded,
    StoreUnavailable,
    TaskTerminal,
    UnreconciledOutcome,
)
from phoned.daemon.lifecycle.records import Preview, TaskRecord
from phoned.daemon.lifecycle.states import TRANSITIONS, TaskState
from phoned.daemon.store.postgres_migrations import Migration, bundled, migrate
from phoned.daemon.store.postgres_store import PostgresStore
from phoned.daemon.store.wake import Alarm
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)

pytestmark = [pytest.mark.postgres, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_000.0

# Claims, starts and completes until the queue is empty, then prints the ids it claimed.
CLAIMER = """
import json, sys, time
from phoned.daemon.store.postgres_store import PostgresStore
from phoned.daemon.store.wake import Alarm
store = PostgresStore(sys.argv[1])
owner = sys.argv[2]
while time.time() < float(sys.argv[3]):
    time.sleep(0.001)
claimed = []
while (task := store.claim(owner, None, time.time(), lease_s=600)) is not None:
    running = store.start(task.ticket, time.time())
    store.complete(running.ticket, time.time(), "dnd.priority", ("ev:1",))
    claimed.append(task.id)
store.close()
print(json.dumps(claimed))
"""

# Opens (and so migrates) the store at the same instant as its siblings.
MIGRATOR = """
import sys, time
while time.time() < float(sys.argv[2]):
    time.sleep(0.001)
from phoned.daemon.store.postgres_store import PostgresStore
from phoned.daemon.store.wake import Alarm
PostgresStore(sys.argv[1]).close()
print("ok")
"""


@pytest.fixture
def url(postgres_url: str, tmp_path: Path) -> str:  # noqa: F811 (the imported fixture)
    """A fresh schema for this test."""
    return fresh_schema_url(str(tmp_path))


@pytest.fixture
def open_store(url: str) -> Iterator[Callable[[], PostgresStore]]:
    """Opens stores on the test's schema (one per thread, as the daemon does); closes them."""
    opened: list[PostgresStore] = []

    def make() -> PostgresStore:
        opened.append(PostgresStore(url))
        return opened[-1]

    yield make
    for store in opened:
        store.close()


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )


def _race(
    count: int, make: Callable[[], PostgresStore], act: Callable[[int, PostgresStore], Any]
) -> list[Any]:
    """Run ``act(i, store)`` in ``count`` threads (one store each) released at once.

    Returns each thread's result or the exception it raised.
    """
    stores = [make() for _ in range(count)]
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = act(i, stores[i])
        except Exception as exc:  # collected and asserted on by the caller
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def _running(store: PostgresStore, method: str = "dnd.set") -> TaskRecord:
    params = {"to": "+4915112345678", "body": "hi"} if method == "sms.send" else {"mode": "off"}
    store.submit(validate_task({"method": method, "conversation_id": "c", "params": params}), T0)
    claimed = store.claim("d/w0", "S1", T0 + 1, lease_s=3600)
    assert claimed is not None
    return store.start(claimed.ticket, T0 + 2)


def test_eight_processes_claim_every_task_exactly_once(url: str) -> None:
    tasks, procs = 240, 8
    store = PostgresStore(url)
    try:
        for i in range(tasks):
            raw = {"method": "dnd.get", "conversation_id": f"c{i % 7}"}
            store.submit(validate_task(raw), T0 + i)
        start_at = str(time.time() + 1.5)
        workers = [_spawn(CLAIMER, url, f"proc-{n}/w0", start_at) for n in range(procs)]
        assert_claimed_once_each(workers, tasks, competed=4)
        assert store.queue_status()[TaskState.COMPLETED.value] == tasks
        assert {t.attempt for t in store.list_tasks(limit=tasks)} == {1}
        cursors = [e.cursor for e in store.events(limit=10 * tasks)]
        assert len(cursors) == 4 * tasks and cursors == sorted(set(cursors))
    finally:
        store.close()


def test_processes_migrating_at_once_apply_each_migration_once(url: str) -> None:
    start_at = str(time.time() + 1.5)
    procs = [_spawn(MIGRATOR, url, start_at) for _ in range(6)]
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert (proc.returncode, out.strip()) == (0, "ok")
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
        assert rows.fetchall() == [(m.version, m.name) for m in bundled()]


def test_migrate_applies_pending_ones_in_order_once(url: str) -> None:
    known = bundled()
    extra = Migration(len(known) + 1, "probe", "CREATE TABLE probe (n integer);")
    with psycopg.connect(url) as conn:
        assert migrate(conn, known) == [m.version for m in known]
        assert migrate(conn, [*known, extra]) == [extra.version]
        assert migrate(conn, [*known, extra]) == []
        assert conn.execute("SELECT count(*) FROM probe").fetchone() == (0,)
        with pytest.raises(StoreUnavailable, match="newer"):
            migrate(conn, known)  # this "build" does not know the probe migration


def test_schema_transition_table_is_the_lifecycle_table(open_store) -> None:
    store = open_store()
    with psycopg.connect(store.pg.url) as conn:
        rows = set(conn.execute("SELECT src, dst FROM task_transitions").fetchall())
    assert rows == {(src.value, dst.value) for src, dsts in TRANSITIONS.items() for dst in dsts}


def test_database_refuses_an_illegal_state_change(open_store) -> None:
    store = open_store()
    task = store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0)
    with psycopg.connect(store.pg.url) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "UPDATE tasks SET state = 'completed', state_version = 2 WHERE id = %s", (task.id,)
        )
    assert store.get(task.id).state is TaskState.QUEUED


def test_concurrent_actions_of_one_attempt_admit_only_the_first(open_store) -> None:
    task = _running(open_store(), "sms.send")
    results = _race(
        8,
        open_store,
        lambda i, s: s.journal_before(task.ticket, f"op-{i}", "sms.send", "+49", "x", T0 + 3),
    )
    admitted = [r for r in results if not isinstance(r, Exception)]
    assert len(admitted) == 1
    assert all(isinstance(r, UnreconciledOutcome) for r in results if isinstance(r, Exception))
    assert len(open_store().unknown_entries(task.id)) == 1


def test_concurrent_approvals_requeue_once(open_store) -> None:
    store = open_store()
    task = _running(store, "sms.send")
    preview = Preview(task.id, "c", "sms.send", "+4915112345678", {"body": "hi"}, "sha256:s")
    store.request_approval(task.ticket, preview, T0 + 3)
    results = _race(8, open_store, lambda i, s: s.approve(task.id, "c", 1, preview.digest, T0 + 4))
    approved = [r for r in results if isinstance(r, TaskRecord)]
    assert len(approved) == 1 and approved[0].state is TaskState.QUEUED
    assert all(isinstance(r, ApprovalMismatch) for r in results if r not in approved)
    kinds = [e.state for e in store.events() if e.task_id == task.id]
    assert kinds.count("queued") == 2  # submitted, approved once


@pytest.mark.parametrize("round_", range(5))
def test_amend_and_complete_racing_never_both_win(open_store, round_: int) -> None:
    store = open_store()
    task = _running(store)

    def act(i: int, s: PostgresStore) -> TaskRecord:
        if i == round_ % 2:
            return s.amend(task.id, "c", {"mode": "alarms"}, T0 + 3)
        return s.complete(task.ticket, T0 + 3, "dnd.priority", ("ev:1",))

    results = _race(2, open_store, act)
    final = store.get(task.id)
    winners = [r for r in results if isinstance(r, TaskRecord)]
    losers = [r for r in results if isinstance(r, Exception)]
    if final.state is TaskState.COMPLETED:
        assert final.revision == 1
        assert all(isinstance(e, TaskTerminal) for e in losers)
    else:
        assert final.revision == 2
        assert all(isinstance(e, RevisionSuperseded) for e in losers)
    assert len(winners) + len(losers) == 2 and len(winners) >= 1
    assert len(losers) == 1  # complete and amend conflict whichever runs first


def test_concurrent_submits_with_one_key_make_one_task(open_store) -> None:
    spec = validate_task({"method": "dnd.get", "conversation_id": "c", "idempotency_key": "k"})
    results = _race(8, open_store, lambda i, s: s.submit(spec, T0))
    assert all(isinstance(r, TaskRecord) for r in results), results
    assert len({r.id for r in results}) == 1
    assert open_store().queue_status()["queued"] == 1


def test_claimers_skip_locked_rows_instead_of_waiting(open_store) -> None:
    store, other = open_store(), open_store()
    first = store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0)
    second = store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0 + 1)
    with store.pg.transaction():  # a claim in flight: the claim statement, not committed
        held = store.pg.one(
            "claim",
            owner="d/w0",
            device=None,
            task_id=None,
            now=T0 + 2,
            lease_until=T0 + 600,
            requires_decision=0,
        )
        assert held is not None and held["id"] == first.id
        started = time.monotonic()
        claimed = other.claim("d/w1", None, T0 + 2)
        assert time.monotonic() - started < 2.0
        assert claimed is not None and claimed.id == second.id


def test_lost_connection_is_store_unavailable_then_reconnects(open_store) -> None:
    store = open_store()
    with psycopg.connect(store.pg.url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (store.pg.backend_pid,))
    with pytest.raises(StoreUnavailable):
        store.queue_status()
    assert store.queue_status()["queued"] == 0


def test_batch_claims_of_racing_daemons_take_every_task_exactly_once(open_store) -> None:
    store = open_store()
    for i in range(60):
        store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0 + i)

    def claim_all(i: int, mine: PostgresStore) -> list[str]:
        owners = [(f"d{i}/S{n}", f"S{n}") for n in range(3)]
        taken: list[str] = []
        while batch := mine.claim_batch(owners, time.time(), lease_s=600):
            taken += [t.id for t in batch]
        return taken

    results = _race(4, open_store, claim_all)
    claimed = [task_id for ids in results for task_id in ids]
    assert len(claimed) == len(set(claimed)) == 60, results


def test_writers_do_not_queue_for_cursors_and_readers_skip_none(open_store) -> None:
    """An event writer holds its cursor to commit without blocking other writers; a reader
    waits for it, so a later cursor committed first never hides the earlier one."""
    slow, fast, reader = open_store(), open_store(), open_store()
    spec = validate_task({"method": "dnd.get", "conversation_id": "c"})
    seen: list[int] = []
    done = threading.Event()
    with slow.pg.transaction():
        slow.submit(spec, T0)  # takes cursor 1, not committed yet
        faster = threading.Thread(target=fast.submit, args=(spec, T0 + 1))
        faster.start()
        faster.join(timeout=10)
        assert not faster.is_alive()  # cursor 2 committed while cursor 1 is still open

        def read() -> None:
            seen.extend(e.cursor for e in reader.events(after=0))
            done.set()

        threading.Thread(target=read, daemon=True).start()
        with psycopg.connect(slow.pg.url, autocommit=True) as admin:
            for _ in range(200):  # the reader is queued on the cursor lock
                waiting = admin.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                ).fetchone()
                if waiting and waiting[0]:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the reader did not wait for the open cursor")
        assert not done.is_set()
    assert done.wait(10)
    assert seen == [1, 2]


def test_each_claim_picks_with_a_plan_it_can_keep(open_store) -> None:
    """Forced onto generic plans (what PL/pgSQL caches once a statement has run five
    times), every pick of phoned_claim on a queue of 600 still walks an index to its
    first row: the oldest queued task (tasks_queued) or the one asked for (tasks_pkey),
    never a scan and sort of every queued row. 0004's one pick for all cases had no such
    plan, so PostgreSQL planned it afresh on every claim (0005_claim_plans.sql)."""
    store = open_store()
    first, *_, last = [
        store.submit(
            validate_task({"method": "dnd.get", "conversation_id": "c", "device": device}), T0 + i
        )
        for i, device in enumerate([None, "S1", "S2"])
    ]
    plans: list[str] = []
    with psycopg.connect(store.pg.url, autocommit=True) as conn:
        conn.execute(  # 600 more queued tasks, a third each for any device, S1 and S2
            b"INSERT INTO tasks (id, conversation_id, method, params, spec, device, source,"
            b" wait_policy, max_attempts, dispatch_timeout_s, run_timeout_s, approval_ttl_s,"
            b" permission_ttl_s, state, state_version, revision, attempt, created_at,"
            b" updated_at)"
            b" SELECT md5(g::text), conversation_id, method, params, spec,"
            b" (ARRAY[NULL, 'S1', 'S2'])[g %% 3 + 1], source, wait_policy, max_attempts,"
            b" dispatch_timeout_s, run_timeout_s, approval_ttl_s, permission_ttl_s, state,"
            b" state_version, revision, attempt, created_at + 10 + g, updated_at"
            b" FROM tasks, generate_series(1, 600) AS g WHERE tasks.id = %s",
            (first.id,),
        )
        conn.execute(b"ANALYZE tasks")  # what autovacuum does on a live queue
        conn.add_notice_handler(lambda diag: plans.append(diag.message_primary or ""))
        for setting in (
            "plan_cache_mode = force_generic_plan",
            "client_min_messages = log",
            "auto_explain.log_min_duration = 0",
            "auto_explain.log_nested_statements = on",
        ):
            conn.execute(f"SET {setting}".encode())
        conn.execute(b"LOAD 'auto_explain'")
        for device, task_id in ((None, None), ("S1", None), (None, last.id)):
            conn.execute(
                "SELECT * FROM phoned_claim(ARRAY['d/w0'], ARRAY[%s::text], %s::text, 1, 2, 0)",
                (device, task_id),
            ).fetchall()
    picks = [p for p in plans if "FOR UPDATE OF t SKIP LOCKED" in p]
    assert len(picks) == 3, plans
    for plan, index in zip(picks, ("tasks_queued", "tasks_queued", "tasks_pkey"), strict=True):
        assert f"Index Scan using {index} on tasks t" in plan, plan
        assert "Seq Scan on tasks t" not in plan and "Sort" not in plan, plan


# phoned_lease_one is phoned_claim_one with exactly these differences (0011_lease_pre_image.sql):
# (text in phoned_claim_one's definition, times it occurs there, its text in phoned_lease_one)
OBSERVED_CLAIM = (
    (".phoned_claim_one(", 1, ".phoned_lease_one("),
    ("RETURNS tasks", 1, "RETURNS phoned_lease"),
    ("picked text;", 1, "picked tasks;"),
    ("SELECT t.id INTO picked", 3, "SELECT t.* INTO picked"),
    ("IF picked IS NULL THEN", 1, "IF picked.id IS NULL THEN"),
    ("WHERE t.id = picked\n", 1, "WHERE t.id = picked.id\n"),
    ("RETURN leased;", 1, "RETURN ROW(picked, leased)::phoned_lease;"),
)


def test_an_observed_claim_runs_the_claims_own_statements(open_store) -> None:
    """An observed claim (``claim_seen``: the metrics need the row before the lease) runs
    phoned_lease_one, a claim nobody observes phoned_claim_one. The claim rule is written in
    both, so the schema's two definitions must differ only where phoned_lease_one reads
    and returns the whole row: the same picks, move, workflow pin and event."""
    store = open_store()
    with psycopg.connect(store.pg.url, autocommit=True) as conn:
        definition = {
            name: conn.execute(
                b"SELECT pg_get_functiondef(p.oid) FROM pg_proc AS p"
                b" WHERE p.proname = %s AND p.pronamespace = current_schema()::regnamespace",
                (name,),
            ).fetchone()[0]
            for name in ("phoned_claim_one", "phoned_lease_one")
        }
    claim = definition["phoned_claim_one"]
    for text, times, observed in OBSERVED_CLAIM:
        assert claim.count(text) == times, (text, claim)
        claim = claim.replace(text, observed)
    assert claim == definition["phoned_lease_one"]


def test_an_idle_wait_sleeps_on_the_socket_and_wakes_on_notify_or_alarm(
    open_store: Callable[[], PostgresStore],
) -> None:
    """Issue #24: an idle dispatcher's wait (``stop`` an ``Alarm``) sleeps in one ``select``
    on the connection and the alarm: a submit's NOTIFY wakes it at once, and so does the
    alarm (a phone turning idle, stop); it does not look every 0.5 s in between."""
    waiter, planner = open_store(), open_store()
    assert waiter.claim_batch([("d/A", "A")], time.time()) == []  # subscribes (LISTEN)
    alarm = Alarm()
    looks = 0
    real = waiter.pg._conn.notifies

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal looks
        looks += 1
        return real(*args, **kwargs)

    waiter.pg._conn.notifies = counted  # type: ignore[method-assign]
    threading.Timer(1.5, lambda: planner.submit(validate_task(
        {"method": "dnd.get", "conversation_id": "c", "device": "A"}), time.time())).start()  # fmt: skip
    began = time.monotonic()
    waiter.wait_for_work(30, alarm)
    assert 1.2 < time.monotonic() - began < 10
    assert looks <= 2  # the kept-backlog look and the one after select (was one per 0.5 s)
    threading.Timer(0.5, alarm.set).start()
    began = time.monotonic()
    waiter.wait_for_work(30, alarm)
    assert time.monotonic() - began < 5, "the alarm did not end the wait"


def test_a_claims_record_is_the_record_the_queue_reads_back(
    open_store: Callable[[], PostgresStore],
) -> None:
    """A claim's row comes from its prepared statement as a tuple (issue #35); its record is
    the one a read of the same row through a dict gives, params, spec and failure too."""
    store = open_store()
    spec = {"method": "volume.set", "conversation_id": "c", "params": {"stream": "music",
            "level": 3}, "rationale": "quieter", "device": "S1"}  # fmt: skip
    queued = store.submit(validate_task(spec), T0)
    claimed = store.claim("d/S1", "S1", T0 + 1)
    assert claimed is not None and claimed.id == queued.id
    assert claimed == store.get(queued.id)
    assert claimed.params == {"stream": "music", "level": 3}
    assert claimed.spec["rationale"] == "quieter"
    assert (claimed.state, claimed.lease_owner, claimed.attempt) == (
        TaskState.DISPATCHED, "d/S1", 1)  # fmt: skip
    assert store.claim("d/S1", "S1", T0 + 2) is None  # a row of NULLs: no lease


def test_a_notify_read_during_a_claim_still_wakes_the_next_wait(
    open_store: Callable[[], PostgresStore],
) -> None:
    """A claim's statement runs on libpq directly; a NOTIFY that libpq reads during it is
    handed on to psycopg's queue, so the dispatcher's next wait wakes at once instead of
    sleeping to its timeout on a socket with nothing more to read."""
    waiter, planner = open_store(), open_store()
    assert waiter.claim_batch([("d/A", "A")], time.time()) == []  # subscribes (LISTEN)
    planner.submit(validate_task({"method": "dnd.get", "conversation_id": "c", "device": "B"}),
                   time.time())  # fmt: skip
    time.sleep(0.3)  # the NOTIFY is in the waiter's socket before its next statement
    assert waiter.claim_batch([("d/A", "A")], time.time()) == []  # not A's: nothing leased
    began = time.monotonic()
    waiter.wait_for_work(30, Alarm())
    assert time.monotonic() - began < 5, "the notification read during the claim was lost"


def test_a_failed_claim_is_store_unavailable_and_the_next_one_works(url: str) -> None:
    """An error of the claim's prepared statement (here its statement timeout, behind a
    table lock) is translated like any other; the connection is left idle and usable, and
    after the server dropped it the claim reconnects and prepares its statement again."""
    store = PostgresStore(url, statement_timeout_s=0.3)
    try:
        store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0)
        with psycopg.connect(url) as admin:
            admin.execute("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StoreUnavailable, match="claim: canceling statement"):
                store.claim("d/w0", None, T0 + 1)
        claimed = store.claim("d/w0", None, T0 + 2)
        assert claimed is not None and claimed.state is TaskState.DISPATCHED
        store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0 + 3)
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (store.pg.backend_pid,))
        with pytest.raises(StoreUnavailable):
            store.claim("d/w0", None, T0 + 4)
        again = store.claim("d/w0", None, T0 + 5)
        assert again is not None and again.id != claimed.id
    finally:
        store.close()


def test_a_claim_prepares_its_statement_again_after_psycopg_deallocates_all(
    open_store: Callable[[], PostgresStore],
) -> None:
    """psycopg sends DEALLOCATE ALL after a rollback once it has prepared statements of its
    own, which drops the claim's prepared statement too: the next claim prepares it again
    instead of failing (it did in the store contract suite's approval test)."""
    store = open_store()
    for i in range(3):
        store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0 + i)
    assert store.claim("d/w0", None, T0 + 3) is not None
    for _ in range(8):  # psycopg prepares a query it ran 5 times
        store.queue_status()
    with pytest.raises(ZeroDivisionError), store.pg.transaction():
        store.queue_status()
        _ = 1 / 0  # rolled back: psycopg deallocates every prepared statement
    claimed = store.claim("d/w0", None, T0 + 4)
    assert claimed is not None and claimed.state is TaskState.DISPATCHED
