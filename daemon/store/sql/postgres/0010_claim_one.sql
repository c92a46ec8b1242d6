-- phoned task queue, PostgreSQL migration 0010 (issue #35): a worker's own claim without
-- the batch's arrays, loop and row set.
--
-- phoned_claim_one(owner, device, task, ...) is one pair of phoned_claim: the same three
-- picks (0005_claim_plans.sql, each planned once per connection), the same move that
-- tasks_legal_transition checks, the same workflow pin and outbox event. It returns the
-- leased row, or NULL when nothing is claimable for that device (``SELECT * FROM`` it is
-- then one row of NULLs, which PostgresStore reads as no task). A single composite
-- instead of 0005's SETOF skips building arrays and a tuplestore per claim: 20 us, 5 % of
-- the server's CPU per claim (399/410 against 417/432 us, the backend's own CPU over 30
-- interleaved blocks of 200 claims, fsync off, 2026-12-06). phoned_claim keeps its
-- signature and calls it for each (owner, device) pair, so the claim rule is written once;
-- each call's statements see the rows the previous ones leased (a VOLATILE function takes
-- a new command id per statement), so a batch still never hands a task out twice.

CREATE FUNCTION phoned_claim_one(in_owner text, dev text, in_task text,
                                 in_now double precision,
                                 in_lease_until double precision,
                                 in_decision integer)
RETURNS tasks LANGUAGE plpgsql AS $$
DECLARE
    picked text;
    leased tasks;
BEGIN
    IF in_task IS NOT NULL THEN
        SELECT t.id INTO picked FROM tasks AS t
        WHERE t.id = in_task AND t.state = 'queued'
            AND (dev IS NULL OR coalesce(t.device, dev) = dev)
            AND (t.step_index IS NULL OR NOT EXISTS (
                SELECT 1 FROM tasks AS p
                WHERE p.workflow_id = t.workflow_id
                    AND p.step_index IS NOT NULL AND p.step_index < t.step_index
                    AND p.state <> 'completed'))
        FOR UPDATE OF t SKIP LOCKED;
    ELSIF dev IS NULL THEN
        SELECT t.id INTO picked FROM tasks AS t
        WHERE t.state = 'queued'
            AND (t.step_index IS NULL OR NOT EXISTS (
                SELECT 1 FROM tasks AS p
                WHERE p.workflow_id = t.workflow_id
                    AND p.step_index IS NOT NULL AND p.step_index < t.step_index
                    AND p.state <> 'completed'))
        ORDER BY t.created_at, t.seq
        LIMIT 1
        FOR UPDATE OF t SKIP LOCKED;
    ELSE
        SELECT t.id INTO picked FROM tasks AS t
        WHERE t.state = 'queued'
            AND coalesce(t.device, dev) = dev
            AND (t.step_index IS NULL OR NOT EXISTS (
                SELECT 1 FROM tasks AS p
                WHERE p.workflow_id = t.workflow_id
                    AND p.step_index IS NOT NULL AND p.step_index < t.step_index
                    AND p.state <> 'completed'))
        ORDER BY t.created_at, t.seq
        LIMIT 1
        FOR UPDATE OF t SKIP LOCKED;
    END IF;
    IF picked IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE tasks AS t SET
        state = 'dispatched', state_version = t.state_version + 1,
        attempt = CASE WHEN t.resume <> 0 THEN t.attempt ELSE t.attempt + 1 END,
        resume = 0, lease_owner = in_owner, lease_until = in_lease_until,
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
    RETURN leased;
END
$$;

CREATE OR REPLACE FUNCTION phoned_claim(in_owners text[], in_devices text[], in_task text,
                                        in_now double precision,
                                        in_lease_until double precision,
                                        in_decision integer)
RETURNS SETOF tasks LANGUAGE plpgsql AS $$
DECLARE
    leased tasks;
BEGIN
    FOR i IN 1 .. coalesce(array_length(in_owners, 1), 0) LOOP
        leased := phoned_claim_one(in_owners[i], in_devices[i], in_task, in_now,
                                   in_lease_until, in_decision);
        IF leased.id IS NOT NULL THEN
            RETURN NEXT leased;
        END IF;
    END LOOP;
END
$$;
