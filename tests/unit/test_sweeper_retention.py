"""The sweeper applies retention: one bounded batch per sweep, after the expiries, whose
results stand even when the batch fails."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from phoned.daemon import config
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.lifecycle.records import Failure
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store import retention
from phoned.daemon.store.retention import RetentionRule
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.store.sweeper import sweep

T0 = 10_000.0


def _failed(store: SqliteStore, count: int) -> None:
    for i in range(count):
        store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0 + i)
        task = store.claim("d/w0", "S", T0 + i)
        assert task is not None
        store.fail(task.ticket, Failure(FailureReason.ACTION_ERROR, "x"), T0 + i)


def test_each_sweep_removes_one_batch(store: SqliteStore, caplog) -> None:
    _failed(store, 8)
    rule = RetentionRule(days=0, max_tasks=1, batch=3)
    with caplog.at_level(logging.INFO, logger="phoned.sweeper"):
        assert sweep(store, T0 + 100, rule) == []
    assert store.queue_status()["failed"] == 5
    assert "retention: removed 3 tasks with 9 events" in caplog.text
    sweep(store, T0 + 101, rule)
    sweep(store, T0 + 102, rule)
    assert store.queue_status()["failed"] == 1


def test_an_expiry_of_the_same_sweep_stands_when_the_batch_fails(
    store: SqliteStore, monkeypatch, caplog
) -> None:
    store.submit(validate_task({"method": "dnd.get", "conversation_id": "c"}), T0)
    store.claim("d/w0", "S", T0, lease_s=60)

    def busy(*args: object, **kwargs: object) -> retention.Pruned:
        raise StoreUnavailable("queue busy")

    monkeypatch.setattr("phoned.daemon.store.sweeper.prune_batch", busy)
    with caplog.at_level(logging.WARNING, logger="phoned.sweeper"):
        [expired] = sweep(store, T0 + 61, RetentionRule(days=0, max_tasks=1))
    assert expired.state is TaskState.QUEUED  # lease expired: requeued
    assert "retention batch failed: queue busy" in caplog.text


def test_without_a_rule_or_with_one_that_keeps_everything_nothing_goes(
    store: SqliteStore,
) -> None:
    _failed(store, 3)
    sweep(store, T0 + 100)
    sweep(store, T0 + 100, RetentionRule(days=0, max_tasks=0))
    assert store.queue_status()["failed"] == 3


def test_the_host_rule_comes_from_the_retention_section(tmp_path: Path) -> None:
    path = tmp_path / "phoned.yaml"
    path.write_text(f"queue: sqlite:///{tmp_path}/q.db\nretention:\n  days: 7\n")
    cfg = config.load(path, environ={"PHONED_RETENTION_MAX_TASKS": "500"})
    assert cfg.retention_rule == RetentionRule(7, 500, tmp_path / "q.db.artifacts")
    assert cfg.retention_rule.batch == retention.BATCH == 500
    assert config.load(environ={}).retention_rule.days == 30  # the shipped defaults
    with pytest.raises(config.ConfigError, match=r"retention\.max_tasks"):
        config.load(environ={"PHONED_RETENTION_MAX_TASKS": "-1"})
