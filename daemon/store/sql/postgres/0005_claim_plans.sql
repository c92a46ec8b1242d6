-- phoned task queue, PostgreSQL migration 0005 (issue #16): phoned_claim plans each pick
-- once per connection instead of once per claim.
--
-- 0004's single pick statement served three cases through NULL parameters
-- (coalesce(t.device, dev, '') = coalesce(dev, t.device, ''), in_task IS NULL OR
-- t.id = in_task). Its generic plan cannot tell the cases apart, so it is a sequential
-- scan of tasks and a sort of every queued row (EXPLAIN with plan_cache_mode =
-- force_generic_plan); PL/pgSQL's plan cache therefore kept a custom plan and planned the
-- statement again on every call: about 0.2 ms of server CPU per claim, a third of the
-- whole claim (scripts/bench_claims_pg.py). Here each case is a statement of its own
-- whose generic plan is the good one, so the cached plan is reused:
--
--   * one task (in_task): its primary key, then the same checks;
--   * any device (dev NULL): tasks_queued oldest first, the first claimable row;
--   * one device: the same walk, keeping rows bound to dev or to no device
--     (coalesce(t.device, dev) = dev, which no device index matches, so the planner
--     walks tasks_queued in order and stops at the first match instead of sorting the
--     device's queued rows).
--
-- Any device and one device stay two statements: written as one, with
-- (dev IS NULL OR coalesce(t.device, dev) = dev), its generic plan is the same walk but
-- the custom plan for dev NULL is estimated far cheaper, so the plan cache keeps planning
-- custom plans and the any-device claim pays the planning again (0.79 vs 0.58 ms per
-- claim, fsync off, same server).
--
-- Claimable, the move, the workflow pin and the event are unchanged from 0004.

CREATE OR REPLACE FUNCTION phoned_claim(in_owners text[], in_devices text[], in_task text,
                                        in_now double precision,
                                        in_lease_until double precision,
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
