-- phoned task queue, PostgreSQL migration 0004 (issue #16): event writers no longer queue
-- behind each other, and every claim (one task, or one per idle phone of a daemon) is one
-- function with one definition of what is claimable.
--
-- 1. 0001 took the per-schema advisory lock EXCLUSIVELY in every event insert and held it
--    to commit, so every writing transaction (each claim) waited for the previous one's
--    commit, WAL flush included: N concurrent claimers paid N flushes in a row instead of
--    one group commit (claim p99 at 4 claimers 2-3x the bare claim's). Now writers take
--    the lock SHARED (they never wait for each other) and a reader takes it EXCLUSIVELY
--    before it reads (the events_lock query), which waits until every transaction
--    holding a cursor from the sequence has committed or rolled back. A cursor is taken
--    only under the shared lock, so when the reader holds the exclusive one every cursor
--    handed out so far belongs to a finished transaction, and its next statement's
--    snapshot sees all the committed ones: a reader at cursor 11 still never skips a
--    cursor 10 that commits later.
--
-- 2. phoned_claim(in_owners, in_devices, ...): for each i, lease the oldest claimable
--    task for in_devices[i] (NULL = any device) to in_owners[i]: the oldest queued task
--    bound to that device or to none, or exactly in_task when given; a workflow step
--    only once every earlier step completed. SKIP LOCKED: a row another claimer holds
--    is passed over, so claimers never wait on each other and never take the same row;
--    a row this call already leased is no longer queued, so one call never hands a task
--    out twice. The move queued -> dispatched is an UPDATE of tasks.state, so
--    tasks_legal_transition still checks it; the rest of a workflow is pinned to the
--    device and the outbox event appended, as SqlStore.claim does. in_decision is the Python rule's requires_decision
--    for 'dispatched'. Returns the leased rows (lease_owner says for whom).

CREATE OR REPLACE FUNCTION phoned_assign_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext('phoned.events'),
                                         hashtext(coalesce(current_schema(), '')));
    NEW.cursor := nextval('events_cursor_seq');
    RETURN NEW;
END
$$;

CREATE FUNCTION phoned_claim(in_owners text[], in_devices text[], in_task text,
                             in_now double precision, in_lease_until double precision,
                             in_decision integer)
RETURNS SETOF tasks LANGUAGE plpgsql AS $$
DECLARE
    dev text;
    picked text;
    leased tasks;
BEGIN
    FOR i IN 1 .. coalesce(array_length(in_owners, 1), 0) LOOP
        dev := in_devices[i];
        picked := NULL;
        SELECT t.id INTO picked FROM tasks AS t
        WHERE t.state = 'queued'
            -- dev's or any device's task (any task when dev is NULL), written so that the
            -- planner walks tasks_queued oldest first and stops at the first match instead
            -- of collecting every queued task of the device index and sorting them
            AND coalesce(t.device, dev, '') = coalesce(dev, t.device, '')
            AND (in_task IS NULL OR t.id = in_task)
            AND (t.step_index IS NULL OR NOT EXISTS (
                SELECT 1 FROM tasks AS p
                WHERE p.workflow_id = t.workflow_id
                    AND p.step_index IS NOT NULL AND p.step_index < t.step_index
                    AND p.state <> 'completed'))
        ORDER BY t.created_at, t.seq
        LIMIT 1
        FOR UPDATE OF t SKIP LOCKED;
        CONTINUE WHEN picked IS NULL;
        UPDATE tasks AS t SET
            state = 'dispatched', state_version = t.state_version + 1,
            attempt = CASE WHEN t.resume <> 0 THEN t.attempt ELSE t.attempt + 1 END,
            resume = 0, lease_owner = in_owners[i], lease_until = in_lease_until,
            dispatched_at = in_now, device = coalesce(t.device, dev), updated_at = in_now
        WHERE t.id = picked
        RETURNING t.* INTO leased;
        IF dev IS NOT NULL AND leased.step_index IS NOT NULL THEN
            UPDATE tasks AS w SET device = dev
            WHERE w.workflow_id = leased.workflow_id AND w.step_index IS NOT NULL
                AND w.device IS NULL;
        END IF;
        INSERT INTO events (kind, task_id, workflow_id, step_id, plan_id, conversation_id,
            state, state_version, revision, attempt, reason, requires_decision,
            stop_requested, evidence_refs, ts)
        VALUES ('task', leased.id, leased.workflow_id, leased.step_id, leased.plan_id,
            leased.conversation_id, leased.state, leased.state_version, leased.revision,
            leased.attempt, leased.failure_reason, in_decision, leased.stop_requested,
            leased.evidence_refs, leased.updated_at);
        RETURN NEXT leased;
    END LOOP;
END
$$;
