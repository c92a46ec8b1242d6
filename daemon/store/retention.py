"""Retention: which finished tasks a queue forgets, and forgetting them in small batches.

The rule (``RetentionRule``): a task goes, with everything the queue keeps of it (its
evidence, events, journal entries, revisions, and its artifacts folder
``<artifacts dir>/<task id>``), when it is terminal (completed, failed, stopped) and it
either ended (``updated_at``) more than ``days`` ago or is older than the newest
``max_tasks`` terminal tasks. Never removed: a task that is not terminal, a task with an
unreconciled journal entry (no outcome, or ``unknown``), a step of a workflow that is still
active. A finished workflow (its row and its events) goes with its last task.

``prune_batch`` applies the rule to at most ``batch`` tasks in one write transaction: the
sweeper's call, once per sweep (``phoned.daemon.store.sweeper``). ``prune`` repeats batches until none
is left (``phoned prune``); ``dry_run`` counts what would go and removes nothing. The
statements are the named ``retention_*`` blocks of both query files; PostgreSQL's indexes
and its guard triggers (a non-terminal task or an open journal entry is never deleted,
whoever asks) are ``sql/postgres/0008_retention.sql``, autovacuum reclaims its space.
SQLite hands freed pages back to the file system after each batch
(``PRAGMA incremental_vacuum``): new queue files are created with
``auto_vacuum = INCREMENTAL`` (``phoned.daemon.store.sqlite_db``); an older file keeps reusing
its free pages until ``make_incremental`` (``phoned prune --vacuum``, once) rewrites it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import re
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.store.sql_database import SqlDatabase

log = logging.getLogger("phoned.retention")

BATCH = 500  # tasks per sweep, one transaction: short enough not to hold up the workers
RECLAIM_PAGES = 4096  # per batch (16 MiB at 4 KiB): more than a batch of tasks frees
_EVERY = 2**31 - 1  # "no limit" for a dry run's one pass, in both SQL dialects
_DAY_S = 86_400.0
_FOLDER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")  # a task id; never a path that leaves the dir


@dataclass(frozen=True)
class RetentionRule:
    """How long a queue keeps finished tasks, and where this host keeps their artifacts."""

    days: float = 30.0  # terminal tasks that ended longer ago go; 0 = no age limit
    max_tasks: int = 100_000  # terminal tasks kept at most (the newest); 0 = no cap
    artifacts_dir: Path | None = None  # folders <dir>/<task id> go with their task
    batch: int = BATCH  # tasks per transaction (per sweep)

    @property
    def keeps_everything(self) -> bool:
        """Neither an age limit nor a cap: nothing is ever removed."""
        return not self.days and not self.max_tasks

    def cutoff(self, now: float) -> float | None:
        """Terminal tasks that ended before this time go; None without an age limit."""
        return now - self.days * _DAY_S if self.days else None

    def describe(self) -> str:
        """The rule in words, as ``phoned prune`` prints it."""
        age = f"ended more than {self.days:g} days ago" if self.days else ""
        cap = f"beyond the newest {self.max_tasks}" if self.max_tasks else ""
        return " or ".join(p for p in (age, cap) if p) or "never (every task is kept)"


@dataclass(frozen=True)
class Pruned:
    """What retention removed (or, in a dry run, would remove)."""

    tasks: int = 0
    events: int = 0
    evidence: int = 0
    journal: int = 0
    revisions: int = 0
    workflows: int = 0
    artifacts: int = 0  # artifacts folders
    reclaimed_bytes: int = 0  # handed back to the file system (SQLite incremental vacuum)

    def __add__(self, other: Pruned) -> Pruned:
        return Pruned(
            *(getattr(self, f.name) + getattr(other, f.name) for f in dataclasses.fields(self))
        )

    def to_json(self) -> dict[str, int]:
        """The counts, by name (``phoned prune --json``, the bench's results)."""
        return dataclasses.asdict(self)

    def describe(self) -> str:
        """One line: the tasks and what went with them."""
        return (
            f"{_n(self.tasks, 'task')} with {_n(self.events, 'event')}, "
            f"{_n(self.evidence, 'evidence document')}, "
            f"{_n(self.journal, 'journal entry', 'journal entries')}, "
            f"{_n(self.revisions, 'revision')}, {_n(self.workflows, 'workflow')} and "
            f"{_n(self.artifacts, 'artifacts folder')}"
        )


def _n(count: int, one: str, many: str = "") -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def prune_batch(
    db: SqlDatabase,
    rule: RetentionRule,
    now: float,
    *,
    limit: int | None = None,
    dry_run: bool = False,
) -> Pruned:
    """Remove at most ``limit`` (default ``rule.batch``) tasks the rule lets go, first ended
    first, in one transaction;
    then their artifacts folders, then (SQLite) the freed pages. With ``dry_run`` count
    them instead: nothing is removed. Another pruner at work on the same queue
    (PostgreSQL) makes this one return at once, having removed nothing."""
    if rule.keeps_everything:
        return Pruned()
    with db.transaction():
        if not _first(db, "retention_lock"):
            return Pruned()
        ids = _candidates(db, rule, now, rule.batch if limit is None else limit)
        if not ids:
            return Pruned()
        batch = json.dumps(ids)
        counts = _counted(db, batch) if dry_run else _deleted(db, batch)
    folders = _artifacts(rule.artifacts_dir, ids, remove=not dry_run)
    if dry_run:
        return dataclasses.replace(counts, artifacts=folders)
    return dataclasses.replace(counts, artifacts=folders, reclaimed_bytes=reclaim(db))


def prune(db: SqlDatabase, rule: RetentionRule, now: float, *, dry_run: bool = False) -> Pruned:
    """Apply the rule to the whole queue now: batches of ``rule.batch`` until none is left
    (a dry run counts everything in one pass)."""
    if dry_run:
        return prune_batch(db, rule, now, limit=_EVERY, dry_run=True)
    total = Pruned()
    while (batch := prune_batch(db, rule, now)).tasks:
        total += batch
    return total


def kept_terminal(db: SqlDatabase) -> int:
    """How many terminal tasks the queue holds."""
    return _first(db, "retention_terminal_count")


def queue_bytes(db: SqlDatabase) -> int:
    """The queue's size: the SQLite file's pages, or PostgreSQL's tables with their indexes."""
    return _first(db, "retention_queue_bytes")


def reclaim(db: SqlDatabase) -> int:
    """Hand free pages back to the file system (SQLite with incremental auto-vacuum, at
    most ``RECLAIM_PAGES``); the bytes given back (0 on PostgreSQL, whose autovacuum makes
    the space reusable, and on an older SQLite file, which reuses its free pages)."""
    with db.transaction():
        free = db.one("retention_free_pages") or {}
        pages, page_size = int(free.get("pages", 0)), int(free.get("page_size", 0))
        for _ in range(min(pages, RECLAIM_PAGES)):
            db.all("retention_reclaim")  # one page per call (queries.sql says why)
        left = int((db.one("retention_free_pages") or {}).get("pages", 0))
    return max(0, pages - left) * page_size


def make_incremental(path: str) -> tuple[int, int]:
    """Once, for a queue file created before incremental auto-vacuum: switch it on and
    rewrite the file (``VACUUM``; it needs the file to itself for a moment). The file's
    size before and after, in bytes."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"cannot open queue {path}: {exc}") from exc
    try:
        before = _file_bytes(conn)
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")
        return before, _file_bytes(conn)
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"VACUUM of {path} failed: {exc}") from exc
    finally:
        conn.close()


# --- inside the batch's transaction ---------------------------------------------------------


def _first(db: SqlDatabase, name: str, **params: Any) -> int:
    """The one number named query ``name`` answers."""
    row = db.one(name, **params)
    return int(next(iter(row.values()))) if row else 0


def _candidates(db: SqlDatabase, rule: RetentionRule, now: float, limit: int) -> list[str]:
    """The ids the rule lets go, first ended first: those that ended before the cutoff and
    the oldest ones beyond the cap (terminal tasks that must stay count toward it). Both are
    beginnings of the same list, the candidates by end: the longer one is their union."""
    cutoff = rule.cutoff(now)
    over = max(0, kept_terminal(db) - rule.max_tasks) if rule.max_tasks else 0
    expired = [] if cutoff is None else db.all("retention_candidates", before=cutoff, limit=limit)
    oldest = db.all("retention_candidates", before=math.inf, limit=min(limit, over)) if over else []
    return [r["id"] for r in max(expired, oldest, key=len)]


def _deleted(db: SqlDatabase, batch: str) -> Pruned:
    """Delete the batch's rows (children before the tasks, workflows last)."""
    counts = {
        "evidence": db.run("retention_delete_evidence", ids=batch),
        "journal": db.run("retention_delete_journal", ids=batch),
        "revisions": db.run("retention_delete_revisions", ids=batch),
        "events": db.run("retention_delete_events", ids=batch),
    }
    workflows = [r["id"] for r in db.all("retention_finished_workflows", ids=batch)]
    tasks = db.run("retention_delete_tasks", ids=batch)
    if workflows:
        done = json.dumps(workflows)
        counts["events"] += db.run("retention_delete_workflow_events", ids=done)
        counts["workflows"] = db.run("retention_delete_workflows", ids=done)
    return Pruned(tasks=tasks, **counts)


def _counted(db: SqlDatabase, batch: str) -> Pruned:
    """What ``_deleted`` would delete, counted."""
    row = db.one("retention_count", ids=batch) or {}
    workflows = [r["id"] for r in db.all("retention_finished_workflows", ids=batch)]
    events = int(row.get("events", 0))
    if workflows:
        events += _first(db, "retention_count_workflow_events", ids=json.dumps(workflows))
    return Pruned(
        tasks=int(row.get("tasks", 0)),
        events=events,
        evidence=int(row.get("evidence", 0)),
        journal=int(row.get("journal", 0)),
        revisions=int(row.get("revisions", 0)),
        workflows=len(workflows),
    )


# --- artifacts ------------------------------------------------------------------------------


def _artifacts(top: Path | None, ids: list[str], *, remove: bool) -> int:
    """How many of ``ids`` have an artifacts folder in ``top`` (a link there counts: it is
    removed itself, never followed); with ``remove`` each is removed, walked through a
    descriptor of ``top`` opened without following a link. A folder that cannot be
    removed is logged and left: its rows are gone already."""
    fd = _open_artifacts(top) if top is not None and ids else None
    if top is None or fd is None:
        return 0
    found = 0
    try:
        for name in filter(_FOLDER_NAME.match, ids):
            try:
                if remove:
                    _remove_tree(name, fd)
                else:
                    os.lstat(name, dir_fd=fd)
                found += 1
            except FileNotFoundError:
                continue
            except OSError as exc:
                log.warning("retention: cannot remove %s: %s", top / name, exc.strerror or exc)
    finally:
        os.close(fd)
    return found


def _open_artifacts(top: Path) -> int | None:
    """A descriptor of the artifacts folder, or None when there is none (or it is a link:
    nothing is removed through one)."""
    try:
        return os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("retention: artifacts folder %s not used: %s", top, exc.strerror or exc)
        return None


def _remove_tree(name: str, dir_fd: int) -> None:
    """Remove ``name`` in ``dir_fd`` and all below it, never through a link (what
    ``shutil.rmtree(dir_fd=...)`` does from Python 3.11 on)."""
    if not stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        for entry in os.scandir(fd):
            _remove_tree(entry.name, fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)


def _file_bytes(conn: sqlite3.Connection) -> int:
    count = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int(count) * int(size)
