"""Retention (``phoned.daemon.store.retention``) on every SQL store: what goes, what always stays.

A finished task past ``retention.days`` or beyond the newest ``retention.max_tasks`` goes
with its evidence, events, journal, revisions and artifacts folder; a task still active,
one with an unreconciled journal entry and a step of a workflow still running stay; a batch
removes at most its limit; a dry run removes nothing and counts what a real run removes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from contract_specs import spec

from phoned.daemon.lifecycle.contract import validate_workflow
from phoned.daemon.lifecycle.errors import TaskNotFound
from phoned.daemon.lifecycle.records import Failure, JournalOutcome, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store.postgres_store import PostgresStore
from phoned.daemon.store.protocol import Store
from phoned.daemon.store.retention import RetentionRule, kept_terminal, prune, prune_batch
from phoned.daemon.store.sql_store import SqlStore

T0 = 1_000_000.0
DAY = 86_400.0
BROKEN = Failure(FailureReason.ACTION_ERROR, "broken")  # not retried: failed at once


def _db(store: Store):
    assert isinstance(store, SqlStore)
    return store.db


def _ended(store: Store, at: float, *, effect: JournalOutcome | None = None) -> TaskRecord:
    """A task that ran at ``at`` and failed there; with ``effect`` after one journaled
    effect whose outcome is ``effect`` (``unknown``: never reconciled)."""
    store.submit(spec(), at)
    task = store.claim("daemon-1/w0", "SERIAL1", at)
    assert task is not None
    task = store.start(task.ticket, at)
    store.put_evidence(task.ticket, "outcome", {"observed": "off"}, at)
    if effect is not None:
        op = f"op-{task.id}"
        store.journal_before(task.ticket, op, "dnd.set", "zen_mode=1", "sha256:x", at)
        store.journal_after(op, effect, "", at)
    return store.fail(task.ticket, BROKEN, at)


def _gone(store: Store, task_id: str) -> bool:
    try:
        store.get(task_id)
    except TaskNotFound:
        return True
    return False


def _folder(artifacts: Path, task_id: str) -> Path:
    folder = artifacts / task_id
    folder.mkdir(parents=True)
    (folder / "snapshot_screenshot.png").write_bytes(b"\x89PNG")
    return folder


def test_the_cap_removes_the_first_ended_with_all_they_kept(store: Store, tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    tasks = [_ended(store, T0 + i, effect=JournalOutcome.CONFIRMED_SUCCESS) for i in range(5)]
    folders = [_folder(artifacts, t.id) for t in tasks]
    queued = store.submit(spec(), T0 + 10)
    rule = RetentionRule(days=0, max_tasks=2, artifacts_dir=artifacts)
    pruned = prune(_db(store), rule, T0 + 20)
    assert (pruned.tasks, pruned.evidence, pruned.journal, pruned.revisions) == (3, 3, 3, 3)
    assert pruned.events == 3 * 4 and pruned.artifacts == 3  # queued, dispatched, running, failed
    assert [_gone(store, t.id) for t in tasks] == [True, True, True, False, False]
    assert [f.exists() for f in folders] == [False, False, False, True, True]
    assert store.get(queued.id).state is TaskState.QUEUED
    assert {e.task_id for e in store.events(limit=1000)} == {tasks[3].id, tasks[4].id, queued.id}
    assert len(store.evidence(tasks[4].id)) == 1 and len(store.journal(tasks[4].id)) == 1
    assert kept_terminal(_db(store)) == 2
    assert prune(_db(store), rule, T0 + 30).tasks == 0  # nothing more to do


def test_days_remove_only_tasks_that_ended_longer_ago(store: Store) -> None:
    old = _ended(store, T0)
    recent = _ended(store, T0 + 29 * DAY)
    rule = RetentionRule(days=30, max_tasks=0)
    assert prune(_db(store), rule, T0 + 30 * DAY + 1).tasks == 1
    assert _gone(store, old.id) and not _gone(store, recent.id)
    assert prune(_db(store), RetentionRule(days=0, max_tasks=0), T0 + 999 * DAY).tasks == 0


def test_active_and_unreconciled_tasks_are_never_removed(store: Store) -> None:
    unknown = _ended(store, T0, effect=JournalOutcome.UNKNOWN)
    assert unknown.state is TaskState.FAILED and store.unknown_entries(unknown.id)
    queued = store.submit(spec(conversation="conv-q"), T0)
    store.submit(spec(conversation="conv-r"), T0)
    running = store.claim("daemon-1/w0", "SERIAL1", T0)
    assert running is not None
    store.start(running.ticket, T0)
    pruned = prune(_db(store), RetentionRule(days=1, max_tasks=1), T0 + 100 * DAY)
    assert pruned.tasks == 0
    for task_id in (unknown.id, queued.id, running.id):
        assert not _gone(store, task_id)
    assert store.unknown_entries(unknown.id)  # left for a reconcile to settle


def test_a_running_workflow_keeps_its_finished_steps_until_it_ends(store: Store) -> None:
    raw = {"conversation_id": "conv-a", "steps": [
        {"method": "dnd.set", "params": {"mode": "priority"}},
        {"method": "dnd.set", "params": {"mode": "off"}}]}  # fmt: skip
    first, second = store.submit_workflow(validate_workflow(raw), T0)
    rule = RetentionRule(days=1, max_tasks=0)
    for step in (first, second):
        claimed = store.claim("daemon-1/w0", "SERIAL1", T0)
        assert claimed is not None and claimed.id == step.id
        ticket = store.start(claimed.ticket, T0).ticket
        ref = store.put_evidence(ticket, "outcome", {"observed": "dnd"}, T0)
        store.complete(ticket, T0, observed_target="dnd.mode", evidence_refs=(ref,))
        if step is first:  # the workflow still runs: its finished step stays
            assert prune(_db(store), rule, T0 + 10 * DAY).tasks == 0
    workflow_id = first.workflow_id or ""
    assert store.workflow(workflow_id).state == "completed"
    pruned = prune(_db(store), rule, T0 + 10 * DAY)
    assert (pruned.tasks, pruned.workflows) == (2, 1)
    with pytest.raises(TaskNotFound):
        store.workflow(workflow_id)
    assert store.events(limit=1000) == []  # the steps' events and the workflow's own


def test_a_batch_removes_at_most_its_limit(store: Store) -> None:
    tasks = [_ended(store, T0 + i) for i in range(7)]
    rule = RetentionRule(days=0, max_tasks=1)
    assert prune_batch(_db(store), rule, T0 + 10, limit=4).tasks == 4
    assert [_gone(store, t.id) for t in tasks] == [True] * 4 + [False] * 3
    assert prune_batch(_db(store), rule, T0 + 10, limit=4).tasks == 2
    assert prune_batch(_db(store), rule, T0 + 10, limit=4).tasks == 0
    assert not _gone(store, tasks[-1].id)


def test_a_dry_run_removes_nothing_and_counts_what_a_run_removes(
    store: Store, tmp_path: Path
) -> None:
    artifacts = tmp_path / "artifacts"
    tasks = [_ended(store, T0 + i, effect=JournalOutcome.CONFIRMED_FAILURE) for i in range(4)]
    folders = [_folder(artifacts, t.id) for t in tasks]
    events = len(store.events(limit=1000))
    rule = RetentionRule(days=0, max_tasks=1, artifacts_dir=artifacts)
    counted = prune(_db(store), rule, T0 + 10, dry_run=True)
    assert all(not _gone(store, t.id) for t in tasks) and all(f.exists() for f in folders)
    assert len(store.events(limit=1000)) == events
    removed = prune(_db(store), rule, T0 + 10)
    assert counted.to_json() == dict(removed.to_json(), reclaimed_bytes=0)
    assert (removed.tasks, removed.artifacts) == (3, 3)


def test_a_link_in_the_artifacts_folder_is_removed_not_followed(
    store: Store, tmp_path: Path
) -> None:
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not phoned's")
    task = _ended(store, T0)
    os.symlink(elsewhere, artifacts / task.id)
    _ended(store, T0 + 1)
    pruned = prune(_db(store), RetentionRule(days=0, max_tasks=1, artifacts_dir=artifacts), T0 + 9)
    assert (pruned.tasks, pruned.artifacts) == (1, 1)
    assert not (artifacts / task.id).is_symlink() and (elsewhere / "keep.txt").exists()


def test_the_server_refuses_to_delete_an_active_task_or_an_open_entry(store: Store) -> None:
    """PostgreSQL's guards (0008_retention.sql): whoever deletes, with any statement."""
    if not isinstance(store, PostgresStore):
        pytest.skip("a server-side guard: PostgreSQL only")
    import psycopg

    unknown = _ended(store, T0, effect=JournalOutcome.UNKNOWN)
    active = store.submit(spec(), T0)
    with psycopg.connect(store.pg.url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.CheckViolation, match="it is not terminal"):
            conn.execute("DELETE FROM tasks WHERE id = %s", (active.id,))
        with pytest.raises(psycopg.errors.CheckViolation, match="never reconciled"):
            conn.execute("DELETE FROM journal WHERE task_id = %s", (unknown.id,))
    assert not _gone(store, active.id) and store.unknown_entries(unknown.id)
