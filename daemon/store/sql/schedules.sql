-- Named query blocks of the schedules (daemon/store/sql_schedules.py) for SQLite; loaded
-- beside queries.sql. PostgreSQL's are postgres/schedules.sql, same names and columns.

-- name: insert_schedule
INSERT INTO schedules (id, name, conversation_id, cron, tz, task, paused, created_at,
    updated_at, armed_at, last_due_at, missed_count)
VALUES (:id, :name, :conversation_id, :cron, :tz, :task, :paused, :now, :now, :now, NULL, 0);

-- name: list_schedules
-- Every schedule (of one conversation, or exactly :id when given) with its latest run and
-- the state of that run's task now.
SELECT s.*, r.due_at AS run_due_at, r.result AS run_result, r.task_id AS run_task_id,
    r.message AS run_message, r.recorded_at AS run_recorded_at, t.state AS run_task_state
FROM schedules AS s
LEFT JOIN schedule_runs AS r ON r.schedule_id = s.id
    AND r.due_at = (SELECT max(due_at) FROM schedule_runs WHERE schedule_id = s.id)
LEFT JOIN tasks AS t ON t.id = r.task_id
WHERE (:conversation_id IS NULL OR s.conversation_id = :conversation_id)
    AND (:id IS NULL OR s.id = :id)
ORDER BY s.created_at, s.id;

-- name: delete_schedule_runs
DELETE FROM schedule_runs WHERE schedule_id = :id;

-- name: delete_schedule
DELETE FROM schedules WHERE id = :id;

-- name: set_schedule_paused
-- Resuming arms the schedule at :now: due times while it was paused never fire.
UPDATE schedules SET paused = :paused, updated_at = :now,
    armed_at = CASE WHEN :paused = 0 AND paused = 1 THEN :now ELSE armed_at END
WHERE id = :id;

-- name: handle_due
-- The guard of a tick: only the tick that read :expect_last_due handles these due times.
UPDATE schedules SET last_due_at = :last_due_at, missed_count = missed_count + :missed,
    updated_at = :now
WHERE id = :id AND paused = 0
    AND coalesce(last_due_at, -1.0) = coalesce(:expect_last_due, -1.0);

-- name: insert_schedule_run
INSERT INTO schedule_runs (schedule_id, due_at, result, task_id, message, recorded_at)
VALUES (:schedule_id, :due_at, :result, :task_id, :message, :now)
ON CONFLICT (schedule_id, due_at) DO NOTHING;

-- name: prune_schedule_runs
-- Runs long past are dropped; the newest ones (and the count of missed) stay.
DELETE FROM schedule_runs WHERE schedule_id = :id AND due_at < :before;

-- name: runs_of_schedule
SELECT r.*, t.state AS task_state FROM schedule_runs AS r
LEFT JOIN tasks AS t ON t.id = r.task_id
WHERE r.schedule_id = :id ORDER BY r.due_at DESC LIMIT :limit;

-- name: set_run_task
UPDATE schedule_runs SET task_id = :task_id WHERE schedule_id = :schedule_id AND due_at = :due_at;
