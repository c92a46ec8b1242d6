-- Which daemons serve this queue (issue #23); the same table as the SQLite schema's
-- ``presence``: one row per daemon and phone ('' when it has none), written by the daemon
-- every presence interval while it runs and removed when it stops.
CREATE TABLE presence (
    daemon_id   text NOT NULL,
    serial      text NOT NULL,
    host        text NOT NULL,
    pid         integer NOT NULL,
    looked_at   double precision NOT NULL,
    claimed_at  double precision,
    PRIMARY KEY (daemon_id, serial)
);
