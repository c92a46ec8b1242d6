-- Named query blocks for the PostgreSQL store (psycopg %(name)s placeholders); loaded by
-- daemon/store/postgres_db.py. Same names and result columns as ../queries.sql (SQLite)
-- so the verbs in daemon/store/sqlite_store.py run unchanged on both. Every task write
-- goes through write_task, guarded by state, state version, lease owner, attempt and
-- revision; rows a verb will write are read with task_for_update (row lock held to commit).

-- name: insert_task
INSERT INTO tasks (id, conversation_id, method, params, spec, device, source, workflow_id,
    step_id, step_index, plan_id, output_key, wait_policy, completion_target, idempotency_key,
    max_attempts, dispatch_timeout_s, run_timeout_s, approval_ttl_s, permission_ttl_s, state,
    state_version, revision, attempt, rerun_of, successor_of, created_at, updated_at)
VALUES (%(id)s, %(conversation_id)s, %(method)s, %(params)s, %(spec)s, %(device)s, %(source)s,
    %(workflow_id)s, %(step_id)s, %(step_index)s, %(plan_id)s, %(output_key)s,
    %(wait_policy)s, %(completion_target)s, %(idempotency_key)s, %(max_attempts)s,
    %(dispatch_timeout_s)s, %(run_timeout_s)s, %(approval_ttl_s)s, %(permission_ttl_s)s,
    %(state)s, %(state_version)s, %(revision)s, %(attempt)s, %(rerun_of)s, %(successor_of)s,
    %(created_at)s, %(updated_at)s)
RETURNING *;

-- name: write_task
UPDATE tasks SET
    params = %(params)s, device = %(device)s, state = %(state)s,
    state_version = %(state_version)s, revision = %(revision)s, attempt = %(attempt)s,
    resume = %(resume)s, failure_reason = %(failure_reason)s,
    failure_message = %(failure_message)s, lease_owner = %(lease_owner)s,
    lease_until = %(lease_until)s, stop_requested = %(stop_requested)s,
    pause_requested = %(pause_requested)s,
    stop_summary = %(stop_summary)s, waiting_for = %(waiting_for)s,
    approval_digest = %(approval_digest)s, approval_status = %(approval_status)s,
    approval_revision = %(approval_revision)s, approval_deadline = %(approval_deadline)s,
    permission_deadline = %(permission_deadline)s, dispatched_at = %(dispatched_at)s,
    running_since = %(running_since)s, active_s = %(active_s)s,
    observed_target = %(observed_target)s, evidence_refs = %(evidence_refs)s,
    updated_at = %(updated_at)s
WHERE id = %(id)s AND state = %(expect_state)s AND state_version = %(expect_version)s
    AND lease_owner IS NOT DISTINCT FROM %(expect_owner)s::text
    AND attempt = %(expect_attempt)s AND revision = %(expect_revision)s
RETURNING *;

-- name: task_by_id
SELECT * FROM tasks WHERE id = %(id)s;

-- name: task_for_update
-- The row a verb is about to write: concurrent writers of the same task queue up here,
-- so each one's rule check sees the row the previous one committed.
SELECT * FROM tasks WHERE id = %(id)s FOR UPDATE;

-- name: task_by_idempotency
SELECT * FROM tasks WHERE conversation_id = %(conversation_id)s
    AND idempotency_key = %(idempotency_key)s AND step_index IS NULL;

-- name: claim
-- A worker's own claim, in one statement and one round trip (issue #16):
-- phoned_claim_one (0010_claim_one.sql; its picks planned once per connection since
-- 0005_claim_plans.sql) leases the oldest claimable task for the device to the owner
-- (SKIP LOCKED; the transition trigger still checks the move) and appends the event. One
-- row: the leased task, or every column NULL when there was none.
SELECT * FROM phoned_claim_one(%(owner)s::text, %(device)s::text, %(task_id)s::text,
    %(now)s, %(lease_until)s, %(requires_decision)s);

-- name: claim_seen
-- claim for a store whose task writes are observed (SqlStore.on_write: the metrics):
-- phoned_lease_one (0011_lease_pre_image.sql) is phoned_claim_one that also returns the
-- task as its pick read it before the lease (queued, a JSON object of its columns).
SELECT (l.leased).*, row_to_json(l.queued) AS queued
FROM phoned_lease_one(%(owner)s::text, %(device)s::text, %(task_id)s::text, %(now)s,
    %(lease_until)s, %(requires_decision)s) AS l;

-- name: claim_batch
-- A daemon's claim for each of its idle phones (owners[i] on devices[i]): phoned_claim
-- runs phoned_claim_one for each pair and returns the rows leased.
SELECT * FROM phoned_claim(%(owners)s::text[], %(devices)s::text[], NULL::text,
    %(now)s, %(lease_until)s, %(requires_decision)s);

-- name: claim_batch_seen
-- claim_batch, observed: each leased row with the row before its lease, as claim_seen.
SELECT (l.leased).*, row_to_json(l.queued) AS queued
FROM phoned_lease(%(owners)s::text[], %(devices)s::text[], NULL::text, %(now)s,
    %(lease_until)s, %(requires_decision)s) AS l;

-- name: pin_workflow_device
UPDATE tasks SET device = %(device)s
WHERE workflow_id = %(workflow_id)s AND step_index IS NOT NULL AND device IS NULL;

-- name: workflow_steps
SELECT * FROM tasks WHERE workflow_id = %(workflow_id)s AND step_index IS NOT NULL
ORDER BY step_index;

-- name: insert_workflow
INSERT INTO workflows (id, conversation_id, plan_id, device, name, idempotency_key, state,
    version, step_count, created_at, updated_at)
VALUES (%(id)s, %(conversation_id)s, %(plan_id)s, %(device)s, %(name)s, %(idempotency_key)s,
    'active', 1, %(step_count)s, %(now)s, %(now)s);

-- name: workflow_by_id
SELECT * FROM workflows WHERE id = %(id)s;

-- name: workflow_by_idempotency
SELECT * FROM workflows WHERE conversation_id = %(conversation_id)s
    AND idempotency_key = %(idempotency_key)s;

-- name: finish_workflow
UPDATE workflows SET state = %(state)s, version = version + 1, halted_reason = %(reason)s,
    device = COALESCE(device, %(device)s), updated_at = %(now)s
WHERE id = %(id)s AND state = 'active';

-- name: insert_event
-- cursor is assigned by the events_assign_cursor trigger (0001_initial.sql).
INSERT INTO events (kind, task_id, workflow_id, step_id, plan_id, conversation_id, state,
    state_version, revision, attempt, reason, requires_decision, stop_requested,
    evidence_refs, ts)
VALUES (%(kind)s, %(task_id)s, %(workflow_id)s, %(step_id)s, %(plan_id)s,
    %(conversation_id)s, %(state)s, %(state_version)s, %(revision)s, %(attempt)s,
    %(reason)s, %(requires_decision)s, %(stop_requested)s, %(evidence_refs)s, %(ts)s);

-- name: events_lock
-- Taken (exclusively) before events_after, in the same transaction: it waits for every
-- writer holding a cursor to finish, so the read that follows skips none
-- (0004_shared_cursor_lock.sql).
SELECT pg_advisory_xact_lock(hashtext('phoned.events'), hashtext(coalesce(current_schema(), '')));

-- name: events_after
SELECT * FROM events WHERE cursor > %(cursor)s ORDER BY cursor LIMIT %(limit)s;

-- name: insert_journal
INSERT INTO journal (op_id, task_id, attempt, revision, action, target, input_digest,
    started_at)
VALUES (%(op_id)s, %(task_id)s, %(attempt)s, %(revision)s, %(action)s, %(target)s,
    %(input_digest)s, %(now)s);

-- name: finish_journal
UPDATE journal SET outcome = %(outcome)s, detail = %(detail)s, finished_at = %(now)s
WHERE op_id = %(op_id)s AND (outcome IS NULL OR outcome = 'unknown');

-- name: journal_by_op
SELECT * FROM journal WHERE op_id = %(op_id)s;

-- name: journal_of_task
SELECT * FROM journal WHERE task_id = %(task_id)s ORDER BY started_at, seq;

-- name: open_journal_count
SELECT count(*) AS n FROM journal
WHERE task_id = %(task_id)s AND (outcome IS NULL OR outcome = 'unknown');

-- name: due_for_sweep
-- Candidates only; daemon/store/sweeper.py decides with the pure rule in sweep_verdict.
SELECT * FROM tasks
WHERE (state IN ('dispatched', 'running') AND (
        lease_until < %(now)s
        OR (state = 'dispatched' AND dispatched_at + dispatch_timeout_s < %(now)s)
        OR (state = 'running' AND active_s + (%(now)s - running_since) > run_timeout_s)))
    OR (state = 'approval' AND approval_deadline < %(now)s)
    OR (state = 'permission' AND permission_deadline < %(now)s)
    -- a step handed to the person (ui.handoff): its TTL's end is in waiting_for
    OR (state = 'waiting' AND waiting_for LIKE 'person:%%')
ORDER BY updated_at;

-- name: owned_by_daemon
SELECT * FROM tasks
WHERE state IN ('dispatched', 'running')
    AND left(lease_owner, length(%(prefix)s::text)) = %(prefix)s::text
ORDER BY created_at, seq
FOR UPDATE;

-- name: state_summary
-- /metrics: one bounded aggregate per scrape (issue #36): per state its count, its oldest
-- task's last change and, for approvals, how many are past their deadline
SELECT state, count(*)::integer AS n, min(updated_at) AS oldest,
    sum(CASE WHEN approval_deadline < %(now)s THEN 1 ELSE 0 END)::integer AS overdue
FROM tasks GROUP BY state;

-- name: count_by_state
SELECT state, count(*)::integer AS n FROM tasks
WHERE (%(device)s::text IS NULL OR device = %(device)s::text)
    AND (%(conversation_id)s::text IS NULL OR conversation_id = %(conversation_id)s::text)
GROUP BY state;

-- name: list_tasks
SELECT * FROM tasks
WHERE (%(states)s::jsonb IS NULL
        OR state IN (SELECT jsonb_array_elements_text(%(states)s::jsonb)))
    AND (%(device)s::text IS NULL OR device = %(device)s::text)
    AND (%(conversation_id)s::text IS NULL OR conversation_id = %(conversation_id)s::text)
    AND (%(workflow_id)s::text IS NULL OR workflow_id = %(workflow_id)s::text)
ORDER BY created_at, seq
LIMIT %(limit)s;

-- name: list_tasks_newest
SELECT * FROM tasks
WHERE (%(states)s::jsonb IS NULL
        OR state IN (SELECT jsonb_array_elements_text(%(states)s::jsonb)))
    AND (%(device)s::text IS NULL OR device = %(device)s::text)
    AND (%(conversation_id)s::text IS NULL OR conversation_id = %(conversation_id)s::text)
    AND (%(workflow_id)s::text IS NULL OR workflow_id = %(workflow_id)s::text)
ORDER BY created_at DESC, seq DESC
LIMIT %(limit)s;

-- name: insert_evidence
INSERT INTO evidence (ref, task_id, attempt, revision, kind, body, created_at)
VALUES (%(ref)s, %(task_id)s, %(attempt)s, %(revision)s, %(kind)s, %(body)s, %(now)s);

-- name: evidence_of_task
SELECT * FROM evidence WHERE task_id = %(task_id)s ORDER BY created_at, seq;

-- name: evidence_by_ref
SELECT * FROM evidence WHERE ref = %(ref)s;

-- name: insert_revision
INSERT INTO task_revisions (task_id, revision, params, conversation_id, created_at)
VALUES (%(task_id)s, %(revision)s, %(params)s, %(conversation_id)s, %(now)s);

-- name: checkpoint_revision
UPDATE task_revisions SET checkpoint = %(checkpoint)s
WHERE task_id = %(task_id)s AND revision = %(revision)s;

-- name: revisions_of_task
SELECT * FROM task_revisions WHERE task_id = %(task_id)s ORDER BY revision;

-- name: tasks_of_workflow
-- Who already uses a workflow id (correlation ids are never shared across conversations).
SELECT id, conversation_id, step_id FROM tasks WHERE workflow_id = %(workflow_id)s
UNION ALL
SELECT id, conversation_id, NULL FROM workflows WHERE id = %(workflow_id)s;

-- name: upsert_presence
INSERT INTO presence (daemon_id, serial, host, pid, looked_at, claimed_at)
VALUES (%(daemon_id)s, %(serial)s, %(host)s, %(pid)s, %(looked_at)s, %(claimed_at)s)
ON CONFLICT (daemon_id, serial) DO UPDATE SET host = excluded.host, pid = excluded.pid,
    looked_at = excluded.looked_at,
    claimed_at = coalesce(excluded.claimed_at, presence.claimed_at);

-- name: drop_presence
-- A daemon's phones it no longer serves (every one when :keep is '[]').
DELETE FROM presence WHERE daemon_id = %(daemon_id)s
    AND NOT (serial = ANY (ARRAY(SELECT jsonb_array_elements_text(%(keep)s::jsonb))));

-- name: all_presence
SELECT * FROM presence ORDER BY looked_at DESC, daemon_id, serial;

-- name: take_phone_hold
-- Take or renew the hold on a phone: granted when nobody holds it, when the hold expired,
-- or when it is this holder's on this host already (a renewal, or a restart of the same
-- daemon); ``since`` moves only when another holder (or another process) takes it.
INSERT INTO phone_hold (serial, holder, host, pid, command, since, expires_at)
VALUES (%(serial)s, %(holder)s, %(host)s, %(pid)s, %(command)s, %(now)s, %(expires_at)s)
ON CONFLICT (serial) DO UPDATE SET holder = excluded.holder, host = excluded.host,
    pid = excluded.pid, command = excluded.command, expires_at = excluded.expires_at,
    since = CASE WHEN phone_hold.holder = excluded.holder AND phone_hold.host = excluded.host
                  AND phone_hold.pid = excluded.pid THEN phone_hold.since ELSE excluded.since END
WHERE phone_hold.expires_at < %(now)s
    OR (phone_hold.holder = excluded.holder AND phone_hold.host = excluded.host);

-- name: phone_hold
SELECT * FROM phone_hold WHERE serial = %(serial)s;

-- name: release_phone_hold
DELETE FROM phone_hold
WHERE serial = %(serial)s AND holder = %(holder)s AND host = %(host)s AND pid = %(pid)s;

-- name: all_phone_holds
SELECT * FROM phone_hold ORDER BY serial;

-- name: retention_lock
-- Retention (daemon/store/retention.py): one pruner at a time per schema (every daemon on
-- the queue sweeps); a batch that does not get the lock removes nothing this sweep.
SELECT pg_try_advisory_xact_lock(hashtext('phoned.retention'),
    hashtext(coalesce(current_schema(), ''))) AS got;

-- name: retention_terminal_count
SELECT count(*)::integer AS n FROM tasks WHERE state IN ('completed', 'failed', 'stopped');

-- name: retention_candidates
-- The terminal tasks that ended (updated_at) before :before, first ended first (index
-- tasks_ended, 0008_retention.sql). Never one with an unreconciled journal entry, nor a
-- step of a workflow that is still active.
SELECT t.id FROM tasks AS t
WHERE t.state IN ('completed', 'failed', 'stopped') AND t.updated_at < %(before)s
    AND NOT EXISTS (SELECT 1 FROM journal AS j WHERE j.task_id = t.id
        AND (j.outcome IS NULL OR j.outcome = 'unknown'))
    AND NOT EXISTS (SELECT 1 FROM workflows AS w WHERE w.id = t.workflow_id
        AND w.state = 'active')
ORDER BY t.updated_at, t.seq
LIMIT %(limit)s;

-- name: retention_finished_workflows
-- The finished workflows of the tasks in :ids (a JSON array) that have no other task.
SELECT w.id FROM workflows AS w
WHERE w.state <> 'active'
    AND w.id IN (SELECT t.workflow_id FROM tasks AS t
        WHERE t.id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb))))
    AND NOT EXISTS (SELECT 1 FROM tasks AS o WHERE o.workflow_id = w.id
        AND NOT (o.id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))));

-- name: retention_count
-- What the retention_delete_* statements would remove for the tasks in :ids (dry run).
SELECT
    (SELECT count(*) FROM tasks
        WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb))))::integer
        AS tasks,
    (SELECT count(*) FROM events
        WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb))))::integer
        AS events,
    (SELECT count(*) FROM evidence
        WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb))))::integer
        AS evidence,
    (SELECT count(*) FROM journal
        WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb))))::integer
        AS journal,
    (SELECT count(*) FROM task_revisions
        WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb))))::integer
        AS revisions;

-- name: retention_count_workflow_events
SELECT count(*)::integer AS n FROM events
WHERE kind = 'workflow'
    AND workflow_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)));

-- name: retention_delete_evidence
DELETE FROM evidence
WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)));

-- name: retention_delete_journal
-- Reconciled entries only: the journal_keep_open trigger (0008) refuses an open one.
DELETE FROM journal
WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
    AND outcome IN ('confirmed_success', 'confirmed_failure');

-- name: retention_delete_revisions
DELETE FROM task_revisions
WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)));

-- name: retention_delete_events
DELETE FROM events
WHERE task_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)));

-- name: retention_delete_tasks
-- The tasks_keep_active trigger (0008) refuses a task that is not terminal.
DELETE FROM tasks
WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
    AND state IN ('completed', 'failed', 'stopped');

-- name: retention_delete_workflow_events
DELETE FROM events
WHERE kind = 'workflow'
    AND workflow_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)));

-- name: retention_delete_workflows
DELETE FROM workflows
WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
    AND state <> 'active'
    AND NOT EXISTS (SELECT 1 FROM tasks WHERE tasks.workflow_id = workflows.id);

-- name: retention_free_pages
-- Nothing to hand back by hand: autovacuum makes PostgreSQL's dead rows reusable.
SELECT 0 AS pages, current_setting('block_size')::integer AS page_size;

-- name: retention_reclaim
SELECT 0 AS pages;

-- name: retention_queue_bytes
SELECT (pg_total_relation_size('tasks') + pg_total_relation_size('events')
    + pg_total_relation_size('evidence') + pg_total_relation_size('journal')
    + pg_total_relation_size('task_revisions') + pg_total_relation_size('workflows'))::bigint
    AS n;
