-- A task nobody claimed within its timeouts.queued_s is failed by the sweeper
-- (daemon/store/sweeper.py queued_verdict): queued -> failed becomes a legal transition.
INSERT INTO task_transitions (src, dst) VALUES ('queued', 'failed');
