-- phoned task queue, SQLite schema. SCHEMA_VERSION is in daemon/store/sqlite_db.py;
-- bump it (and add a migration block there) for any change here.

CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS tasks (
    id                  TEXT PRIMARY KEY,
    conversation_id     TEXT NOT NULL,
    method              TEXT NOT NULL,
    params              TEXT NOT NULL,           -- canonical JSON, current revision
    spec                TEXT NOT NULL,           -- canonical JSON of the submitted spec
    device              TEXT,                    -- NULL = any device
    source              TEXT NOT NULL,
    workflow_id         TEXT,
    step_id             TEXT,
    step_index          INTEGER,                 -- set only for workflow steps
    plan_id             TEXT,
    output_key          TEXT,
    wait_policy         TEXT NOT NULL,
    completion_target   TEXT,
    idempotency_key     TEXT,
    max_attempts        INTEGER NOT NULL,
    dispatch_timeout_s  REAL NOT NULL,
    run_timeout_s       REAL NOT NULL,
    approval_ttl_s      REAL NOT NULL,
    permission_ttl_s    REAL NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('queued', 'dispatched', 'running',
                            'waiting', 'approval', 'permission', 'completed', 'failed',
                            'stopped')),
    state_version       INTEGER NOT NULL,
    revision            INTEGER NOT NULL,
    attempt             INTEGER NOT NULL,
    resume              INTEGER NOT NULL DEFAULT 0,  -- 1: next claim continues this attempt
    failure_reason      TEXT,
    failure_message     TEXT,
    lease_owner         TEXT,
    lease_until         REAL,
    stop_requested      INTEGER NOT NULL DEFAULT 0,
    pause_requested     INTEGER NOT NULL DEFAULT 0,  -- a person asked to pause (seed 003)
    stop_summary        TEXT,
    waiting_for         TEXT,
    approval_digest     TEXT,
    approval_status     TEXT,                    -- pending, approved, denied, expired
    approval_revision   INTEGER,
    approval_deadline   REAL,
    permission_deadline REAL,
    dispatched_at       REAL,
    running_since       REAL,
    active_s            REAL NOT NULL DEFAULT 0,
    observed_target     TEXT,
    evidence_refs       TEXT NOT NULL DEFAULT '[]',
    rerun_of            TEXT,
    successor_of        TEXT,
    created_at          REAL NOT NULL,
    updated_at          REAL NOT NULL,
    CHECK ((lease_owner IS NULL) = (state NOT IN ('dispatched', 'running')))
);

CREATE UNIQUE INDEX IF NOT EXISTS tasks_idempotency
    ON tasks (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_claim ON tasks (state, device, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS tasks_workflow_step
    ON tasks (workflow_id, step_index) WHERE step_index IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_workflow ON tasks (workflow_id) WHERE workflow_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS workflows (
    id               TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL,
    plan_id          TEXT,
    device           TEXT,
    name             TEXT,
    idempotency_key  TEXT,
    state            TEXT NOT NULL CHECK (state IN ('active', 'completed', 'halted')),
    version          INTEGER NOT NULL,
    step_count       INTEGER NOT NULL,
    halted_reason    TEXT,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS workflows_idempotency
    ON workflows (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE IF NOT EXISTS events (
    cursor             INTEGER PRIMARY KEY AUTOINCREMENT,
    kind               TEXT NOT NULL,            -- task, workflow
    task_id            TEXT,
    workflow_id        TEXT,
    step_id            TEXT,
    plan_id            TEXT,
    conversation_id    TEXT NOT NULL,
    state              TEXT NOT NULL,
    state_version      INTEGER NOT NULL,
    revision           INTEGER NOT NULL,
    attempt            INTEGER NOT NULL,
    reason             TEXT,
    requires_decision  INTEGER NOT NULL,
    stop_requested     INTEGER NOT NULL,
    evidence_refs      TEXT NOT NULL,
    ts                 REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS journal (
    op_id         TEXT PRIMARY KEY,
    task_id       TEXT NOT NULL REFERENCES tasks (id),
    attempt       INTEGER NOT NULL,
    revision      INTEGER NOT NULL,
    action        TEXT NOT NULL,
    target        TEXT NOT NULL,
    input_digest  TEXT NOT NULL,
    started_at    REAL NOT NULL,
    outcome       TEXT CHECK (outcome IN ('confirmed_success', 'confirmed_failure', 'unknown')),
    detail        TEXT NOT NULL DEFAULT '',
    finished_at   REAL
);

CREATE INDEX IF NOT EXISTS journal_task ON journal (task_id, started_at);

-- Evidence documents (device actions' stable JSON) referenced from tasks and events.
CREATE TABLE IF NOT EXISTS evidence (
    ref         TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL REFERENCES tasks (id),
    attempt     INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    kind        TEXT NOT NULL,                   -- outcome, snapshot, recovery, ...
    body        TEXT NOT NULL,                   -- JSON
    created_at  REAL NOT NULL
);

CREATE INDEX IF NOT EXISTS evidence_task ON evidence (task_id, created_at);

-- Every revision of a task, in order (seed 003): its params, when and by which
-- conversation; ``checkpoint`` (JSON: done, pending ops, remaining, budget) is written
-- when the next revision supersedes it.
CREATE TABLE IF NOT EXISTS task_revisions (
    task_id          TEXT NOT NULL REFERENCES tasks (id),
    revision         INTEGER NOT NULL,
    params           TEXT NOT NULL,
    conversation_id  TEXT NOT NULL,
    created_at       REAL NOT NULL,
    checkpoint       TEXT,
    PRIMARY KEY (task_id, revision)
);

-- Which daemons serve this queue (issue #23): one row per daemon and phone ('' when it has
-- none), written by the daemon every presence interval while it runs and removed when it
-- stops. ``looked_at``: when it last looked for work; ``claimed_at``: its last claim for
-- that phone. ``phoned status`` lists them; submit and the MCP tools warn when none is
-- recent.
CREATE TABLE IF NOT EXISTS presence (
    daemon_id   TEXT NOT NULL,
    serial      TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    looked_at   REAL NOT NULL,
    claimed_at  REAL,
    PRIMARY KEY (daemon_id, serial)
);

-- One driver per phone (issue #24): who drives each phone now, for daemons on several
-- hosts (or with separate state folders) sharing this queue. Taken before the first
-- command to the phone and renewed every heartbeat while held; a row whose ``expires_at``
-- passed is free for anyone (``daemon.store.holds``). ``holder`` is the daemon id
-- (``<id>/once`` for a ``run --once``).
CREATE TABLE IF NOT EXISTS phone_hold (
    serial      TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    command     TEXT NOT NULL,
    since       REAL NOT NULL,
    expires_at  REAL NOT NULL
);

-- Retention (daemon/store/retention.py, PostgreSQL's 0008_retention.sql): the terminal
-- tasks that ended first, and a removed task's (or workflow's) events, found by index.
CREATE INDEX IF NOT EXISTS tasks_ended ON tasks (updated_at)
    WHERE state IN ('completed', 'failed', 'stopped');
CREATE INDEX IF NOT EXISTS events_task ON events (task_id) WHERE task_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_workflow ON events (workflow_id) WHERE workflow_id IS NOT NULL;

-- Schedules (seed 002's autopilot, daemon/lifecycle/schedules.py; PostgreSQL's
-- 0009_schedules.sql): a cron expression in a time zone and the task (JSON of the
-- checked TaskSpec) each due time creates. ``armed_at``: due times before it never fire
-- (created or resumed then); ``last_due_at``: the latest due time handled.
CREATE TABLE IF NOT EXISTS schedules (
    id               TEXT PRIMARY KEY,
    name             TEXT,
    conversation_id  TEXT NOT NULL,
    cron             TEXT NOT NULL,
    tz               TEXT NOT NULL,
    task             TEXT NOT NULL,
    paused           INTEGER NOT NULL DEFAULT 0,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    armed_at         REAL NOT NULL,
    last_due_at      REAL,
    missed_count     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS schedules_conversation ON schedules (conversation_id, created_at);

-- One row per due time handled: exactly one per (schedule, due time), whoever ticks; a
-- fired run names its task (created in the same transaction).
CREATE TABLE IF NOT EXISTS schedule_runs (
    schedule_id  TEXT NOT NULL,
    due_at       REAL NOT NULL,
    result       TEXT NOT NULL CHECK (result IN ('fired', 'missed', 'refused')),
    task_id      TEXT,
    message      TEXT,
    recorded_at  REAL NOT NULL,
    PRIMARY KEY (schedule_id, due_at)
);
