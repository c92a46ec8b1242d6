-- phoned task queue, PostgreSQL migration 0001: the schema of sql/schema.sql (SQLite)
-- in PostgreSQL types, plus what only the server can enforce:
--   * task_transitions + trigger: an UPDATE that changes tasks.state must follow the
--     table of daemon/lifecycle/states.py (tests/integration/test_postgres_store.py
--     compares the two);
--   * events.cursor is assigned under a per-schema advisory lock held to commit, so
--     cursors become visible in increasing order and a reader never skips one;
--   * NOTIFY phoned_work whenever a task becomes queued (Store.wait_for_work).
-- Applied once by daemon/store/postgres_migrations.py; never edit an applied
-- migration: add 0002_*.sql instead.

CREATE TABLE tasks (
    id                  text PRIMARY KEY,
    seq                 bigint GENERATED ALWAYS AS IDENTITY,  -- insertion order (SQLite rowid)
    conversation_id     text NOT NULL,
    method              text NOT NULL,
    params              text NOT NULL,           -- canonical JSON, current revision
    spec                text NOT NULL,           -- canonical JSON of the submitted spec
    device              text,                    -- NULL = any device
    source              text NOT NULL,
    workflow_id         text,
    step_id             text,
    step_index          integer,                 -- set only for workflow steps
    plan_id             text,
    output_key          text,
    wait_policy         text NOT NULL,
    completion_target   text,
    idempotency_key     text,
    max_attempts        integer NOT NULL,
    dispatch_timeout_s  double precision NOT NULL,
    run_timeout_s       double precision NOT NULL,
    approval_ttl_s      double precision NOT NULL,
    permission_ttl_s    double precision NOT NULL,
    state               text NOT NULL CHECK (state IN ('queued', 'dispatched', 'running',
                            'waiting', 'approval', 'permission', 'completed', 'failed',
                            'stopped')),
    state_version       integer NOT NULL CHECK (state_version >= 1),
    revision            integer NOT NULL CHECK (revision >= 1),
    attempt             integer NOT NULL CHECK (attempt >= 0),
    resume              integer NOT NULL DEFAULT 0 CHECK (resume IN (0, 1)),
    failure_reason      text,
    failure_message     text,
    lease_owner         text,
    lease_until         double precision,
    stop_requested      integer NOT NULL DEFAULT 0 CHECK (stop_requested IN (0, 1)),
    stop_summary        text,
    waiting_for         text,
    approval_digest     text,
    approval_status     text CHECK (approval_status IN ('pending', 'approved', 'denied',
                            'expired', 'void')),
    approval_revision   integer,
    approval_deadline   double precision,
    permission_deadline double precision,
    dispatched_at       double precision,
    running_since       double precision,
    active_s            double precision NOT NULL DEFAULT 0,
    observed_target     text,
    evidence_refs       text NOT NULL DEFAULT '[]',
    rerun_of            text,
    successor_of        text,
    created_at          double precision NOT NULL,
    updated_at          double precision NOT NULL,
    CONSTRAINT tasks_lease_iff_leased
        CHECK ((lease_owner IS NULL) = (state NOT IN ('dispatched', 'running')))
);

CREATE UNIQUE INDEX tasks_idempotency
    ON tasks (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX tasks_workflow_step
    ON tasks (workflow_id, step_index) WHERE step_index IS NOT NULL;
-- the claim scans only queued rows, oldest first
CREATE INDEX tasks_queued ON tasks (created_at, seq) WHERE state = 'queued';
CREATE INDEX tasks_state_device ON tasks (state, device);
CREATE INDEX tasks_conversation ON tasks (conversation_id, created_at);
CREATE INDEX tasks_workflow ON tasks (workflow_id) WHERE workflow_id IS NOT NULL;

CREATE TABLE task_transitions (
    src text NOT NULL,
    dst text NOT NULL,
    PRIMARY KEY (src, dst)
);

-- daemon/lifecycle/states.py TRANSITIONS, row for row
INSERT INTO task_transitions (src, dst) VALUES
    ('queued', 'dispatched'), ('queued', 'stopped'),
    ('dispatched', 'running'), ('dispatched', 'queued'), ('dispatched', 'failed'),
    ('dispatched', 'stopped'),
    ('running', 'waiting'), ('running', 'approval'), ('running', 'permission'),
    ('running', 'completed'), ('running', 'failed'), ('running', 'stopped'),
    ('running', 'queued'),
    ('waiting', 'queued'), ('waiting', 'failed'), ('waiting', 'stopped'),
    ('approval', 'queued'), ('approval', 'failed'), ('approval', 'stopped'),
    ('permission', 'queued'), ('permission', 'failed'), ('permission', 'stopped');

CREATE FUNCTION phoned_check_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM task_transitions WHERE src = OLD.state AND dst = NEW.state)
    THEN
        RAISE EXCEPTION 'task %: % -> % is not a legal transition', OLD.id, OLD.state, NEW.state
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.state_version <= OLD.state_version THEN
        RAISE EXCEPTION 'task %: state changed without a new state_version', OLD.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER tasks_legal_transition
    BEFORE UPDATE OF state ON tasks
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION phoned_check_transition();

CREATE FUNCTION phoned_notify_work() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('phoned_work', coalesce(NEW.device, ''));
    RETURN NULL;
END
$$;

CREATE TRIGGER tasks_notify_work
    AFTER INSERT OR UPDATE OF state ON tasks
    FOR EACH ROW WHEN (NEW.state = 'queued')
    EXECUTE FUNCTION phoned_notify_work();

CREATE TABLE workflows (
    id               text PRIMARY KEY,
    conversation_id  text NOT NULL,
    plan_id          text,
    device           text,
    name             text,
    idempotency_key  text,
    state            text NOT NULL CHECK (state IN ('active', 'completed', 'halted')),
    version          integer NOT NULL,
    step_count       integer NOT NULL,
    halted_reason    text,
    created_at       double precision NOT NULL,
    updated_at       double precision NOT NULL
);

CREATE UNIQUE INDEX workflows_idempotency
    ON workflows (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE SEQUENCE events_cursor_seq AS bigint;

CREATE TABLE events (
    cursor             bigint PRIMARY KEY,      -- set by events_assign_cursor, never by callers
    kind               text NOT NULL CHECK (kind IN ('task', 'workflow')),
    task_id            text,
    workflow_id        text,
    step_id            text,
    plan_id            text,
    conversation_id    text NOT NULL,
    state              text NOT NULL,
    state_version      integer NOT NULL,
    revision           integer NOT NULL,
    attempt            integer NOT NULL,
    reason             text,
    requires_decision  integer NOT NULL,
    stop_requested     integer NOT NULL,
    evidence_refs      text NOT NULL,
    ts                 double precision NOT NULL
);

-- A sequence alone hands out cursors in nextval order but they commit in any order: a
-- reader at cursor 11 would never see a cursor 10 committed later. Taking a
-- transaction-scoped advisory lock (per schema) before nextval makes cursor order equal
-- commit order; the lock is held only from the event insert to the commit.
CREATE FUNCTION phoned_assign_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('phoned.events'),
                                  hashtext(coalesce(current_schema(), '')));
    NEW.cursor := nextval('events_cursor_seq');
    RETURN NEW;
END
$$;

CREATE TRIGGER events_assign_cursor
    BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION phoned_assign_cursor();

CREATE TABLE journal (
    op_id         text PRIMARY KEY,
    seq           bigint GENERATED ALWAYS AS IDENTITY,
    task_id       text NOT NULL REFERENCES tasks (id),
    attempt       integer NOT NULL,
    revision      integer NOT NULL,
    action        text NOT NULL,
    target        text NOT NULL,
    input_digest  text NOT NULL,
    started_at    double precision NOT NULL,
    outcome       text CHECK (outcome IN ('confirmed_success', 'confirmed_failure', 'unknown')),
    detail        text NOT NULL DEFAULT '',
    finished_at   double precision
);

CREATE INDEX journal_task ON journal (task_id, started_at, seq);

-- Evidence documents (device actions' stable JSON) referenced from tasks and events.
CREATE TABLE evidence (
    ref         text PRIMARY KEY,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    task_id     text NOT NULL REFERENCES tasks (id),
    attempt     integer NOT NULL,
    revision    integer NOT NULL,
    kind        text NOT NULL,                   -- outcome, snapshot, recovery, ...
    body        text NOT NULL,                   -- canonical JSON
    created_at  double precision NOT NULL
);

CREATE INDEX evidence_task ON evidence (task_id, created_at, seq);
