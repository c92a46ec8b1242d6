-- Named query blocks for the SQLite store; loaded by daemon/store/sqlfile.py.
-- Every task write goes through write_task, guarded by expected state, state version,
-- lease owner, attempt and revision read in the same BEGIN IMMEDIATE transaction.

-- name: insert_task
INSERT INTO tasks (id, conversation_id, method, params, spec, device, source, workflow_id,
    step_id, step_index, plan_id, output_key, wait_policy, completion_target, idempotency_key,
    max_attempts, dispatch_timeout_s, run_timeout_s, approval_ttl_s, permission_ttl_s, state,
    state_version, revision, attempt, rerun_of, successor_of, created_at, updated_at)
VALUES (:id, :conversation_id, :method, :params, :spec, :device, :source, :workflow_id,
    :step_id, :step_index, :plan_id, :output_key, :wait_policy, :completion_target,
    :idempotency_key, :max_attempts, :dispatch_timeout_s, :run_timeout_s, :approval_ttl_s,
    :permission_ttl_s, :state, :state_version, :revision, :attempt, :rerun_of, :successor_of,
    :created_at, :updated_at)
RETURNING *;

-- name: write_task
UPDATE tasks SET
    params = :params, device = :device, state = :state, state_version = :state_version,
    revision = :revision, attempt = :attempt, resume = :resume,
    failure_reason = :failure_reason, failure_message = :failure_message,
    lease_owner = :lease_owner, lease_until = :lease_until,
    stop_requested = :stop_requested, pause_requested = :pause_requested,
    stop_summary = :stop_summary,
    waiting_for = :waiting_for, approval_digest = :approval_digest,
    approval_status = :approval_status, approval_revision = :approval_revision,
    approval_deadline = :approval_deadline, permission_deadline = :permission_deadline,
    dispatched_at = :dispatched_at, running_since = :running_since, active_s = :active_s,
    observed_target = :observed_target, evidence_refs = :evidence_refs,
    updated_at = :updated_at
WHERE id = :id AND state = :expect_state AND state_version = :expect_version
    AND lease_owner IS :expect_owner AND attempt = :expect_attempt
    AND revision = :expect_revision
RETURNING *;

-- name: task_by_id
SELECT * FROM tasks WHERE id = :id;

-- name: task_by_idempotency
SELECT * FROM tasks WHERE conversation_id = :conversation_id
    AND idempotency_key = :idempotency_key AND step_index IS NULL;

-- name: claim_candidate
-- Oldest queued task for this device (or for any device when :device is NULL), or
-- exactly :task_id when given; a workflow step only once every earlier step of its
-- workflow completed.
SELECT t.* FROM tasks AS t
WHERE t.state = 'queued'
    AND (:device IS NULL OR t.device IS NULL OR t.device = :device)
    AND (:task_id IS NULL OR t.id = :task_id)
    AND NOT EXISTS (
        SELECT 1 FROM tasks AS p
        WHERE t.step_index IS NOT NULL AND p.workflow_id = t.workflow_id
            AND p.step_index IS NOT NULL AND p.step_index < t.step_index
            AND p.state <> 'completed')
ORDER BY t.created_at, t.rowid
LIMIT 1;

-- name: pin_workflow_device
UPDATE tasks SET device = :device
WHERE workflow_id = :workflow_id AND step_index IS NOT NULL AND device IS NULL;

-- name: workflow_steps
SELECT * FROM tasks WHERE workflow_id = :workflow_id AND step_index IS NOT NULL
ORDER BY step_index;

-- name: insert_workflow
INSERT INTO workflows (id, conversation_id, plan_id, device, name, idempotency_key, state,
    version, step_count, created_at, updated_at)
VALUES (:id, :conversation_id, :plan_id, :device, :name, :idempotency_key, 'active', 1,
    :step_count, :now, :now);

-- name: workflow_by_id
SELECT * FROM workflows WHERE id = :id;

-- name: workflow_by_idempotency
SELECT * FROM workflows WHERE conversation_id = :conversation_id
    AND idempotency_key = :idempotency_key;

-- name: finish_workflow
UPDATE workflows SET state = :state, version = version + 1, halted_reason = :reason,
    device = COALESCE(device, :device), updated_at = :now
WHERE id = :id AND state = 'active';

-- name: insert_event
INSERT INTO events (kind, task_id, workflow_id, step_id, plan_id, conversation_id, state,
    state_version, revision, attempt, reason, requires_decision, stop_requested,
    evidence_refs, ts)
VALUES (:kind, :task_id, :workflow_id, :step_id, :plan_id, :conversation_id, :state,
    :state_version, :revision, :attempt, :reason, :requires_decision, :stop_requested,
    :evidence_refs, :ts);

-- name: events_after
SELECT * FROM events WHERE cursor > :cursor ORDER BY cursor LIMIT :limit;

-- name: insert_journal
INSERT INTO journal (op_id, task_id, attempt, revision, action, target, input_digest,
    started_at)
VALUES (:op_id, :task_id, :attempt, :revision, :action, :target, :input_digest, :now);

-- name: finish_journal
UPDATE journal SET outcome = :outcome, detail = :detail, finished_at = :now
WHERE op_id = :op_id AND (outcome IS NULL OR outcome = 'unknown');

-- name: journal_by_op
SELECT * FROM journal WHERE op_id = :op_id;

-- name: journal_of_task
SELECT * FROM journal WHERE task_id = :task_id ORDER BY started_at, rowid;

-- name: open_journal_count
SELECT count(*) FROM journal
WHERE task_id = :task_id AND (outcome IS NULL OR outcome = 'unknown');

-- name: due_for_sweep
-- Candidates only; daemon/store/sweeper.py decides with the pure rule in sweep_verdict.
SELECT * FROM tasks
WHERE (state IN ('dispatched', 'running') AND (
        lease_until < :now
        OR (state = 'dispatched' AND dispatched_at + dispatch_timeout_s < :now)
        OR (state = 'running' AND active_s + (:now - running_since) > run_timeout_s)))
    OR (state = 'approval' AND approval_deadline < :now)
    OR (state = 'permission' AND permission_deadline < :now)
    -- a step handed to the person (ui.handoff): its TTL's end is in waiting_for
    OR (state = 'waiting' AND waiting_for LIKE 'person:%')
ORDER BY updated_at;

-- name: owned_by_daemon
SELECT * FROM tasks
WHERE state IN ('dispatched', 'running') AND substr(lease_owner, 1, length(:prefix)) = :prefix;

-- name: count_by_state
SELECT state, count(*) AS n FROM tasks
WHERE (:device IS NULL OR device = :device)
    AND (:conversation_id IS NULL OR conversation_id = :conversation_id) GROUP BY state;

-- name: state_summary
-- /metrics: one bounded aggregate per scrape (issue #36): per state its count, its oldest
-- task's last change and, for approvals, how many are past their deadline
SELECT state, count(*) AS n, min(updated_at) AS oldest,
    sum(CASE WHEN approval_deadline < :now THEN 1 ELSE 0 END) AS overdue
FROM tasks GROUP BY state;

-- name: list_tasks
SELECT * FROM tasks
WHERE (:states IS NULL OR state IN (SELECT value FROM json_each(:states)))
    AND (:device IS NULL OR device = :device)
    AND (:conversation_id IS NULL OR conversation_id = :conversation_id)
    AND (:workflow_id IS NULL OR workflow_id = :workflow_id)
ORDER BY created_at, rowid
LIMIT :limit;

-- name: list_tasks_newest
SELECT * FROM tasks
WHERE (:states IS NULL OR state IN (SELECT value FROM json_each(:states)))
    AND (:device IS NULL OR device = :device)
    AND (:conversation_id IS NULL OR conversation_id = :conversation_id)
    AND (:workflow_id IS NULL OR workflow_id = :workflow_id)
ORDER BY created_at DESC, rowid DESC
LIMIT :limit;

-- name: insert_evidence
INSERT INTO evidence (ref, task_id, attempt, revision, kind, body, created_at)
VALUES (:ref, :task_id, :attempt, :revision, :kind, :body, :now);

-- name: evidence_of_task
SELECT * FROM evidence WHERE task_id = :task_id ORDER BY created_at, rowid;

-- name: evidence_by_ref
SELECT * FROM evidence WHERE ref = :ref;

-- name: insert_revision
INSERT INTO task_revisions (task_id, revision, params, conversation_id, created_at)
VALUES (:task_id, :revision, :params, :conversation_id, :now);

-- name: checkpoint_revision
UPDATE task_revisions SET checkpoint = :checkpoint
WHERE task_id = :task_id AND revision = :revision;

-- name: revisions_of_task
SELECT * FROM task_revisions WHERE task_id = :task_id ORDER BY revision;

-- name: tasks_of_workflow
-- Who already uses a workflow id (correlation ids are never shared across conversations).
SELECT id, conversation_id, step_id FROM tasks WHERE workflow_id = :workflow_id
UNION ALL
SELECT id, conversation_id, NULL FROM workflows WHERE id = :workflow_id;

-- name: upsert_presence
INSERT INTO presence (daemon_id, serial, host, pid, looked_at, claimed_at)
VALUES (:daemon_id, :serial, :host, :pid, :looked_at, :claimed_at)
ON CONFLICT (daemon_id, serial) DO UPDATE SET host = excluded.host, pid = excluded.pid,
    looked_at = excluded.looked_at,
    claimed_at = coalesce(excluded.claimed_at, presence.claimed_at);

-- name: drop_presence
-- A daemon's phones it no longer serves (every one when :keep is '[]').
DELETE FROM presence WHERE daemon_id = :daemon_id
    AND serial NOT IN (SELECT value FROM json_each(:keep));

-- name: all_presence
SELECT * FROM presence ORDER BY looked_at DESC, daemon_id, serial;

-- name: take_phone_hold
-- Take or renew the hold on a phone: granted when nobody holds it, when the hold expired,
-- or when it is this holder's on this host already (a renewal, or a restart of the same
-- daemon); ``since`` moves only when another holder (or another process) takes it.
INSERT INTO phone_hold (serial, holder, host, pid, command, since, expires_at)
VALUES (:serial, :holder, :host, :pid, :command, :now, :expires_at)
ON CONFLICT (serial) DO UPDATE SET holder = excluded.holder, host = excluded.host,
    pid = excluded.pid, command = excluded.command, expires_at = excluded.expires_at,
    since = CASE WHEN phone_hold.holder = excluded.holder AND phone_hold.host = excluded.host
                  AND phone_hold.pid = excluded.pid THEN phone_hold.since ELSE excluded.since END
WHERE phone_hold.expires_at < :now
    OR (phone_hold.holder = excluded.holder AND phone_hold.host = excluded.host);

-- name: phone_hold
SELECT * FROM phone_hold WHERE serial = :serial;

-- name: release_phone_hold
DELETE FROM phone_hold
WHERE serial = :serial AND holder = :holder AND host = :host AND pid = :pid;

-- name: all_phone_holds
SELECT * FROM phone_hold ORDER BY serial;

-- name: retention_lock
-- Retention (daemon/store/retention.py): one pruner at a time; on SQLite the batch's
-- BEGIN IMMEDIATE serialises writers already.
SELECT 1 AS got;

-- name: retention_terminal_count
SELECT count(*) AS n FROM tasks WHERE state IN ('completed', 'failed', 'stopped');

-- name: retention_candidates
-- The terminal tasks that ended (updated_at) before :before, first ended first, walking
-- index tasks_ended (without statistics the planner would sort the queue's terminal tasks
-- from tasks_claim instead). Never one with an unreconciled journal entry, nor a step of a
-- workflow that is still active.
SELECT t.id FROM tasks AS t INDEXED BY tasks_ended
WHERE t.state IN ('completed', 'failed', 'stopped') AND t.updated_at < :before
    AND NOT EXISTS (SELECT 1 FROM journal AS j WHERE j.task_id = t.id
        AND (j.outcome IS NULL OR j.outcome = 'unknown'))
    AND NOT EXISTS (SELECT 1 FROM workflows AS w WHERE w.id = t.workflow_id
        AND w.state = 'active')
ORDER BY t.updated_at, t.rowid
LIMIT :limit;

-- name: retention_finished_workflows
-- The finished workflows of the tasks in :ids (a JSON array) that have no other task.
SELECT w.id FROM workflows AS w
WHERE w.state <> 'active'
    AND w.id IN (SELECT t.workflow_id FROM tasks AS t
        WHERE t.id IN (SELECT value FROM json_each(:ids)))
    AND NOT EXISTS (SELECT 1 FROM tasks AS o WHERE o.workflow_id = w.id
        AND o.id NOT IN (SELECT value FROM json_each(:ids)));

-- name: retention_count
-- What the retention_delete_* statements would remove for the tasks in :ids (dry run).
SELECT
    (SELECT count(*) FROM tasks WHERE id IN (SELECT value FROM json_each(:ids))) AS tasks,
    (SELECT count(*) FROM events WHERE task_id IN (SELECT value FROM json_each(:ids)))
        AS events,
    (SELECT count(*) FROM evidence WHERE task_id IN (SELECT value FROM json_each(:ids)))
        AS evidence,
    (SELECT count(*) FROM journal WHERE task_id IN (SELECT value FROM json_each(:ids)))
        AS journal,
    (SELECT count(*) FROM task_revisions WHERE task_id IN (SELECT value FROM json_each(:ids)))
        AS revisions;

-- name: retention_count_workflow_events
SELECT count(*) AS n FROM events
WHERE kind = 'workflow' AND workflow_id IN (SELECT value FROM json_each(:ids));

-- name: retention_delete_evidence
DELETE FROM evidence WHERE task_id IN (SELECT value FROM json_each(:ids));

-- name: retention_delete_journal
-- Reconciled entries only: a task with an open one is never a candidate.
DELETE FROM journal WHERE task_id IN (SELECT value FROM json_each(:ids))
    AND outcome IN ('confirmed_success', 'confirmed_failure');

-- name: retention_delete_revisions
DELETE FROM task_revisions WHERE task_id IN (SELECT value FROM json_each(:ids));

-- name: retention_delete_events
DELETE FROM events WHERE task_id IN (SELECT value FROM json_each(:ids));

-- name: retention_delete_tasks
DELETE FROM tasks WHERE id IN (SELECT value FROM json_each(:ids))
    AND state IN ('completed', 'failed', 'stopped');

-- name: retention_delete_workflow_events
DELETE FROM events
WHERE kind = 'workflow' AND workflow_id IN (SELECT value FROM json_each(:ids));

-- name: retention_delete_workflows
DELETE FROM workflows WHERE id IN (SELECT value FROM json_each(:ids)) AND state <> 'active'
    AND NOT EXISTS (SELECT 1 FROM tasks WHERE tasks.workflow_id = workflows.id);

-- name: retention_free_pages
SELECT f.freelist_count AS pages, s.page_size AS page_size FROM pragma_freelist_count() AS f,
    pragma_page_size() AS s;

-- name: retention_reclaim
-- Hand free pages back to the file system; each step of the statement frees one page, and
-- Python's sqlite3 steps a statement without result columns once per call (the caller calls
-- it once per page). A file without incremental auto-vacuum ignores it (and reuses them).
PRAGMA incremental_vacuum;

-- name: retention_queue_bytes
SELECT c.page_count * s.page_size AS n FROM pragma_page_count() AS c,
    pragma_page_size() AS s;
