-- One driver per phone (issue #24); the same table as the SQLite schema's ``phone_hold``:
-- one row per phone naming the daemon (or ``run --once``) that drives it, taken before the
-- first command and renewed every heartbeat; free for anyone once ``expires_at`` passed.
CREATE TABLE phone_hold (
    serial      text PRIMARY KEY,
    holder      text NOT NULL,
    host        text NOT NULL,
    pid         integer NOT NULL,
    command     text NOT NULL,
    since       double precision NOT NULL,
    expires_at  double precision NOT NULL
);
