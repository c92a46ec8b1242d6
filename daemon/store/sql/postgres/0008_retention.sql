-- Retention (daemon/store/retention.py): the sweeper removes terminal tasks that ended more
-- than retention.days ago or lie beyond the newest retention.max_tasks, with their
-- evidence, events, journal entries and revisions, in batches (the retention_* blocks of
-- queries.sql). What the server adds to that rule:

-- the oldest terminal tasks by their end, read without the rest of the queue
CREATE INDEX tasks_ended ON tasks (updated_at, seq)
    WHERE state IN ('completed', 'failed', 'stopped');
-- a removed task's events, and a removed workflow's (events had no index but the cursor)
CREATE INDEX events_task ON events (task_id) WHERE task_id IS NOT NULL;
CREATE INDEX events_workflow ON events (workflow_id) WHERE workflow_id IS NOT NULL;

-- Whoever deletes: a task that is not terminal, and a journal entry without a confirmed
-- outcome (an effect nobody reconciled yet), are never deleted.
CREATE FUNCTION phoned_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%: % is kept (%)', TG_TABLE_NAME, TG_ARGV[0], TG_ARGV[1]
        USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER tasks_keep_active
    BEFORE DELETE ON tasks
    FOR EACH ROW WHEN (OLD.state NOT IN ('completed', 'failed', 'stopped'))
    EXECUTE FUNCTION phoned_refuse_delete('a task', 'it is not terminal');

CREATE TRIGGER journal_keep_open
    BEFORE DELETE ON journal
    FOR EACH ROW WHEN (OLD.outcome IS NULL OR OLD.outcome = 'unknown')
    EXECUTE FUNCTION phoned_refuse_delete('an entry', 'its outcome was never reconciled');
