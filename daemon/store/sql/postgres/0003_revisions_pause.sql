-- phoned task queue, PostgreSQL migration 0003 (SQLite: schema version 2 in
-- daemon/store/sqlite_db.py): revisions kept in order, the user pause request, and the
-- lifecycle rules they add, enforced by the server as well:
--   * task_revisions: one row per revision (params, when, by which conversation), the
--     checkpoint written when the next revision supersedes it (seed 003 steps 1 and 5);
--   * tasks.pause_requested: a person asked to pause (no new effect after the current
--     safe point);
--   * task_transitions gains queued -> waiting (a queued task paused by a person);
--   * a trigger refuses a revision that is not the next one, a revision change of a
--     terminal task, and a revision change without its task_revisions row.

ALTER TABLE tasks ADD COLUMN pause_requested integer NOT NULL DEFAULT 0
    CHECK (pause_requested IN (0, 1));

CREATE TABLE task_revisions (
    task_id          text NOT NULL REFERENCES tasks (id),
    revision         integer NOT NULL CHECK (revision >= 1),
    params           text NOT NULL,
    conversation_id  text NOT NULL,
    created_at       double precision NOT NULL,
    checkpoint       text,
    PRIMARY KEY (task_id, revision)
);

INSERT INTO task_revisions (task_id, revision, params, conversation_id, created_at)
SELECT id, revision, params, conversation_id, updated_at FROM tasks;

-- daemon/lifecycle/states.py TRANSITIONS: a person pauses a queued task
INSERT INTO task_transitions (src, dst) VALUES ('queued', 'waiting');

CREATE FUNCTION phoned_check_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.revision <> OLD.revision + 1 THEN
        RAISE EXCEPTION 'task %: revision % cannot follow %', OLD.id, NEW.revision, OLD.revision
            USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.state IN ('completed', 'failed', 'stopped') THEN
        RAISE EXCEPTION 'task %: a % task is never amended', OLD.id, OLD.state
            USING ERRCODE = 'check_violation';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM task_revisions
                   WHERE task_id = NEW.id AND revision = NEW.revision) THEN
        RAISE EXCEPTION 'task %: revision % is not recorded', OLD.id, NEW.revision
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER tasks_next_revision
    BEFORE UPDATE OF revision ON tasks
    FOR EACH ROW WHEN (OLD.revision IS DISTINCT FROM NEW.revision)
    EXECUTE FUNCTION phoned_check_revision();
