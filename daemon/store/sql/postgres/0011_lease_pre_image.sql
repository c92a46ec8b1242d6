-- phoned task queue, PostgreSQL migration 0011: an observed claim also returns the row it
-- leased as it was before the lease, so a daemon on PostgreSQL counts its claims.
--
-- A daemon's metrics (daemon/runtime/metrics.py) count from the store's task writes
-- (SqlStore.on_write: the record before and after each write). SqlStore's claim reads the
-- queued row, then writes the lease; PostgreSQL's claim is one function that returns only
-- the leased row, so PostgresStore told nothing of its claims: phoned_claims_total, the
-- transitions into dispatched, the pickup latency (queued -> claimed, from the queued
-- row's updated_at) and each phone's last claim stayed empty on a PostgreSQL fleet.
--
-- phoned_lease_one is phoned_claim_one (0010_claim_one.sql) returning a phoned_lease: the
-- picked row as the pick read it under its row lock (queued) and the leased row (leased);
-- NULL when nothing is claimable. phoned_lease is the batch over it (0010's phoned_claim).
-- Its body is phoned_claim_one's with the pick reading the whole row instead of its id
-- and the pair returned; test_an_observed_claim_runs_the_claims_own_statements
-- (tests/integration/test_postgres_store.py) holds the two bodies to exactly that, so the
-- claim rule cannot drift between them.
--
-- Only a store with an observer calls these (phoned run --metrics, phoned serve): the
-- pair costs the claim 6-12 % of its throughput (1.06x-1.12x, PostgresStore.claim
-- through either, interleaved in blocks, fsync on, 1 and 4 claimers, 2026-12-07), so a
-- claim nobody observes keeps 0010's functions.

CREATE TYPE phoned_lease AS (queued tasks, leased tasks);

CREATE FUNCTION phoned_lease_one(in_owner text, dev text, in_task text,
                                 in_now double precision,
                                 in_lease_until double precision,
                                 in_decision integer)
RETURNS phoned_lease LANGUAGE plpgsql AS $$
DECLARE
    picked tasks;
    leased tasks;
BEGIN
    IF in_task IS NOT NULL THEN
        SELECT t.* INTO picked FROM tasks AS t
        WHERE t.id = in_task AND t.state = 'queued'
            AND (dev IS NULL OR coalesce(t.device, dev) = dev)
            AND (t.step_index IS NULL OR NOT EXISTS (
                SELECT 1 FROM tasks AS p
                WHERE p.workflow_id = t.workflow_id
                    AND p.step_index IS NOT NULL AND p.step_index < t.step_index
                    AND p.state <> 'completed'))
        FOR UPDATE OF t SKIP LOCKED;
    ELSIF dev IS NULL THEN
        SELECT t.* INTO picked FROM tasks AS t
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
        SELECT t.* INTO picked FROM tasks AS t
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
    IF picked.id IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE tasks AS t SET
        state = 'dispatched', state_version = t.state_version + 1,
        attempt = CASE WHEN t.resume <> 0 THEN t.attempt ELSE t.attempt + 1 END,
        resume = 0, lease_owner = in_owner, lease_until = in_lease_until,
        dispatched_at = in_now, device = coalesce(t.device, dev), updated_at = in_now
    WHERE t.id = picked.id
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
    RETURN ROW(picked, leased)::phoned_lease;
END
$$;

CREATE FUNCTION phoned_lease(in_owners text[], in_devices text[], in_task text,
                             in_now double precision,
                             in_lease_until double precision,
                             in_decision integer)
RETURNS SETOF phoned_lease LANGUAGE plpgsql AS $$
DECLARE
    got phoned_lease;
    leased tasks;
BEGIN
    FOR i IN 1 .. coalesce(array_length(in_owners, 1), 0) LOOP
        got := phoned_lease_one(in_owners[i], in_devices[i], in_task, in_now,
                                in_lease_until, in_decision);
        leased := got.leased;
        IF leased.id IS NOT NULL THEN
            RETURN NEXT got;
        END IF;
    END LOOP;
END
$$;
