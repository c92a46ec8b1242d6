-- Schedules (seed 002's autopilot, daemon/lifecycle/schedules.py); the same tables as the
-- SQLite schema's ``schedules`` and ``schedule_runs``. The primary key of schedule_runs
-- is what makes a due time create one task however many daemons or plane replicas tick:
-- the run row is inserted in the transaction that creates the task.
CREATE TABLE schedules (
    id               text PRIMARY KEY,
    name             text,
    conversation_id  text NOT NULL,
    cron             text NOT NULL,
    tz               text NOT NULL,
    task             text NOT NULL,
    paused           integer NOT NULL DEFAULT 0,
    created_at       double precision NOT NULL,
    updated_at       double precision NOT NULL,
    armed_at         double precision NOT NULL,
    last_due_at      double precision,
    missed_count     integer NOT NULL DEFAULT 0
);
CREATE INDEX schedules_conversation ON schedules (conversation_id, created_at);

CREATE TABLE schedule_runs (
    schedule_id  text NOT NULL,
    due_at       double precision NOT NULL,
    result       text NOT NULL CHECK (result IN ('fired', 'missed', 'refused')),
    task_id      text,
    message      text,
    recorded_at  double precision NOT NULL,
    PRIMARY KEY (schedule_id, due_at)
);
