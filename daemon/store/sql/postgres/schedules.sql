-- Named query blocks of the schedules (daemon/store/sql_schedules.py) for PostgreSQL
-- (psycopg %(name)s placeholders); loaded beside queries.sql. Same names and result
-- columns as ../schedules.sql (SQLite).

-- name: insert_schedule
INSERT INTO schedules (id, name, conversation_id, cron, tz, task, paused, created_at,
    updated_at, armed_at, last_due_at, missed_count)
VALUES (%(id)s, %(name)s, %(conversation_id)s, %(cron)s, %(tz)s, %(task)s, %(paused)s,
    %(now)s, %(now)s, %(now)s, NULL, 0);

-- name: list_schedules
-- Every schedule (of one conversation, or exactly one id when given) with its latest run
-- and the state of that run's task now.
SELECT s.*, r.due_at AS run_due_at, r.result AS run_result, r.task_id AS run_task_id,
    r.message AS run_message, r.recorded_at AS run_recorded_at, t.state AS run_task_state
FROM schedules AS s
LEFT JOIN schedule_runs AS r ON r.schedule_id = s.id
    AND r.due_at = (SELECT max(due_at) FROM schedule_runs WHERE schedule_id = s.id)
LEFT JOIN tasks AS t ON t.id = r.task_id
WHERE (%(conversation_id)s::text IS NULL OR s.conversation_id = %(conversation_id)s::text)
    AND (%(id)s::text IS NULL OR s.id = %(id)s::text)
ORDER BY s.created_at, s.id;

-- name: delete_schedule_runs
DELETE FROM schedule_runs WHERE schedule_id = %(id)s;

-- name: delete_schedule
DELETE FROM schedules WHERE id = %(id)s;

-- name: set_schedule_paused
-- Resuming arms the schedule at now: due times while it was paused never fire.
UPDATE schedules SET paused = %(paused)s::integer, updated_at = %(now)s,
    armed_at = CASE WHEN %(paused)s::integer = 0 AND paused = 1 THEN %(now)s ELSE armed_at END
WHERE id = %(id)s;

-- name: handle_due
-- The guard of a tick: only the tick that read expect_last_due handles these due times
-- (a concurrent tick's UPDATE waits for this row lock, then finds the row changed).
UPDATE schedules SET last_due_at = %(last_due_at)s, missed_count = missed_count + %(missed)s,
    updated_at = %(now)s
WHERE id = %(id)s AND paused = 0
    AND coalesce(last_due_at, -1.0) = coalesce(%(expect_last_due)s::double precision, -1.0);

-- name: insert_schedule_run
INSERT INTO schedule_runs (schedule_id, due_at, result, task_id, message, recorded_at)
VALUES (%(schedule_id)s, %(due_at)s, %(result)s, %(task_id)s, %(message)s, %(now)s)
ON CONFLICT (schedule_id, due_at) DO NOTHING;

-- name: prune_schedule_runs
-- Runs long past are dropped; the newest ones (and the count of missed) stay.
DELETE FROM schedule_runs WHERE schedule_id = %(id)s AND due_at < %(before)s;

-- name: runs_of_schedule
SELECT r.*, t.state AS task_state FROM schedule_runs AS r
LEFT JOIN tasks AS t ON t.id = r.task_id
WHERE r.schedule_id = %(id)s ORDER BY r.due_at DESC LIMIT %(limit)s;

-- name: set_run_task
UPDATE schedule_runs SET task_id = %(task_id)s
WHERE schedule_id = %(schedule_id)s AND due_at = %(due_at)s;
