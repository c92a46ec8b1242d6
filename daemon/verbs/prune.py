"""``phoned prune``: apply the queue's retention now, and say what it removed.

The rule is the sweeper's (``phoned.daemon.store.retention``: ``retention.days``,
``retention.max_tasks``), applied to the whole queue at once in batches of
``retention.BATCH`` tasks, one transaction each, then this host's artifacts folders of
the removed tasks. ``--dry-run`` counts what would go and changes nothing. ``--vacuum``
(SQLite, once per older queue file) switches on incremental auto-vacuum and rewrites the
file, so that later prunes hand the freed space back. A control plane's queue is pruned
by the plane's own sweeper.
"""

from __future__ import annotations

from typing import Any

import click
from phoned.daemon.verbs.common import (
    EXIT_USAGE,
    common_options,
    echo_json,
    fail,
    load_config,
    now,
    user_errors,
)


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


@click.command()
@click.option("--dry-run", is_flag=True, help="Count what would be removed; remove nothing.")
@click.option(
    "--vacuum",
    is_flag=True,
    help="SQLite, once for a queue file made before retention: switch on incremental "
    "auto-vacuum and rewrite the file (stop the daemon first).",
)
@common_options
@user_errors
def prune(
    dry_run: bool, vacuum: bool, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """Remove finished tasks past the queue's retention now (retention.days, retention.max_tasks),
    with their evidence, events, journal, revisions and artifacts folders."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.store import retention
    from phoned.daemon.store.open import SQLITE_PREFIX, open_store, sqlite_path
    from phoned.daemon.store.sql_store import SqlStore

    cfg = load_config(config_file, queue=queue)
    url = cfg.queue_url
    if url.startswith(("http://", "https://")):
        fail(f"{url} is a control plane: its own sweeper applies its retention", EXIT_USAGE)
    if vacuum and (dry_run or not url.startswith(SQLITE_PREFIX)):
        fail("--vacuum rewrites a SQLite queue file; not with --dry-run", EXIT_USAGE)
    rule = cfg.retention_rule
    store = open_store(url, create=False)
    try:
        assert isinstance(store, SqlStore)  # open_store holds SQL queues directly
        size_before = retention.queue_bytes(store.db)
        pruned = retention.prune(store.db, rule, now(), dry_run=dry_run)
        kept, size_after = retention.kept_terminal(store.db), retention.queue_bytes(store.db)
    finally:
        store.close()
    rewritten = retention.make_incremental(str(sqlite_path(url))) if vacuum else None
    if rewritten is not None:
        size_after = rewritten[1]
    report: dict[str, Any] = {
        "queue": url, "dry_run": dry_run, "rule": rule.describe(),
        "removed": pruned.to_json(), "terminal_tasks_kept": kept,
        "queue_bytes_before": size_before, "queue_bytes_after": size_after,
    }  # fmt: skip
    if as_json:
        echo_json(report)
        return
    if rule.keeps_everything:
        click.echo("retention keeps every task (retention.days and retention.max_tasks are 0)")
    else:
        click.echo(f"retention: finished tasks that {rule.describe()}")
    if dry_run:
        click.echo(f"would remove {pruned.describe()}; would keep {kept - pruned.tasks} "
                   f"finished task(s); queue {_mib(size_before)}")  # fmt: skip
        return
    click.echo(f"removed {pruned.describe()}")
    click.echo(f"kept {kept} finished task(s); queue {_mib(size_before)} -> {_mib(size_after)}"
               + (" (rewritten by VACUUM)" if rewritten is not None else ""))  # fmt: skip
