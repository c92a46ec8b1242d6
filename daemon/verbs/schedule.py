"""``phoned schedule add|list|show|remove|pause|resume``: schedules (seed 002's autopilot).

A schedule is a cron expression (five fields) in an IANA time zone (``--tz``, default the
host's), the task it creates at each due time (``--method``/``--param`` as ``phoned
submit`` takes it, or ``--task FILE``) and the conversation that owns it. It is stored in
the queue (``sqlite:///``, ``postgresql://`` or a plane's ``http(s)://``) and fired by the
queue's host: the daemon of an embedded queue or ``phoned serve``. Each due time creates
one task of ``source: schedule``; one missed while nothing ran is reported, not fired
late. Refusals name the field (``cron``, ``tz``, ``task.params.mode``), exit 2.
SCHEDULE is a full id or a unique prefix of at least 6 characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from phoned.daemon.verbs.common import (
    InputError,
    SentenceHelpGroup,
    common_options,
    echo_json,
    load_config,
    now,
    opened_store,
    user_errors,
)

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.schedules import ScheduleRecord

PREFIX_MIN = 6


@click.group(cls=SentenceHelpGroup)
def schedule() -> None:
    """Schedules: a task created at each due time of a cron expression (autopilot)."""


def _task_raw(
    task_file: str | None, method: str | None, params: tuple[str, ...], device: str | None
) -> dict[str, Any]:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.documents import read_document
    from phoned.daemon.verbs.inputs import parse_params

    if task_file is not None and method is not None:
        raise InputError("give --task FILE or --method, not both")
    if task_file is not None:
        if params:
            raise InputError("--param goes with --method; put params in the --task FILE")
        raw = read_document(task_file)
        if not isinstance(raw, dict):
            raise InputError(f"--task {task_file}: expected one task (a mapping)")
    elif method is not None:
        raw = {"method": method, "params": parse_params(method, params)}
    else:
        raise InputError("give the task to create: --method METHOD [--param K=V] or --task FILE")
    if device is not None:
        raw["device"] = device
    return raw


@schedule.command()
@click.option("--cron", required=True, help="Five fields: minute hour day month weekday.")
@click.option("--tz", default=None, help="IANA time zone (default: the host's).")
@click.option("--conversation", required=True, help="Conversation that owns it and its tasks.")
@click.option("--name", default=None, help="A name to recognise it by.")
@click.option("--method", default=None, help="Method of the task to create, e.g. dnd.set.")
@click.option("--param", "params", multiple=True, metavar="K=V", help="Parameter (repeatable).")
@click.option("--device", default=None, metavar="SERIAL", help="Only this device.")
@click.option("--task", "task_file", default=None, metavar="FILE",
              help="The task to create as a document (JSON or YAML, '-' = stdin).")  # fmt: skip
@click.option("--paused", is_flag=True, help="Add it paused (phoned schedule resume).")
@common_options
@user_errors
def add(
    cron: str,
    tz: str | None,
    conversation: str,
    name: str | None,
    method: str | None,
    params: tuple[str, ...],
    device: str | None,
    task_file: str | None,
    paused: bool,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Add a schedule; prints its id and next due time (--json: the record)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.config import with_default_timeouts
    from phoned.daemon.lifecycle.schedule_ops import AddSchedule
    from phoned.daemon.lifecycle.schedules import host_zone, validate_schedule
    from phoned.daemon.planning.queueing import unserved_warning

    raw: dict[str, Any] = {
        "cron": cron,
        "tz": tz or host_zone(),
        "conversation_id": conversation,
        "task": _task_raw(task_file, method, params, device),
        "paused": paused,
    }
    if name is not None:
        raw["name"] = name
    cfg = load_config(config_file, queue=queue)
    spec = validate_schedule(raw)
    spec = spec.model_copy(update={"task": with_default_timeouts(spec.task, cfg)})
    with opened_store(queue, config_file, create=True) as store:
        added = store.apply(AddSchedule(spec, now()))
        unserved = unserved_warning(store, cfg.queue_url, spec.task.device)
    if as_json:
        echo_json(_json(added))
    else:
        click.echo(f"{added.id} next due {_local(added.next_due_at, added.tz)}")
    if unserved:
        fires = (
            "the plane fires the schedule; its tasks wait for a daemon"
            if cfg.queue_url.startswith(("http://", "https://"))
            else "the schedule fires only while a daemon runs on this queue"
        )
        click.echo(f"phoned: {unserved}; {fires}", err=True)


def _json(record: ScheduleRecord) -> dict[str, Any]:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.wire import plain

    doc: dict[str, Any] = plain(record)
    return doc


def _local(ts: float | None, tz: str) -> str:
    """``ts`` in the schedule's zone, with its offset (``-`` for None)."""
    from datetime import datetime  # lazy: phoned --help start-up path (docs/structure.md, measured)
    from zoneinfo import ZoneInfo  # lazy: phoned --help start-up path (docs/structure.md, measured)

    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M %z")


def _row(s: ScheduleRecord) -> tuple[str, ...]:
    run = s.last_run
    if run is None:
        last, task, result = "-", "-", "-"
    else:
        last = _local(run.due_at, s.tz)
        task = run.task_id[:12] if run.task_id else "-"
        result = (run.task_state or "removed") if run.result == "fired" else run.result
    return (
        s.id[:12],
        s.name or "-",
        s.cron,
        s.tz,
        s.method,
        "paused" if s.paused else _local(s.next_due_at, s.tz),
        last,
        task,
        result,
        str(s.missed_count),
        s.conversation_id,
    )


_HEADER = ("ID", "NAME", "CRON", "TZ", "METHOD", "NEXT DUE", "LAST RUN", "TASK", "RESULT",
           "MISSED", "CONVERSATION")  # fmt: skip


@schedule.command(name="list")
@click.option("--conversation", default=None, help="Only this conversation's schedules.")
@common_options
@user_errors
def list_(
    conversation: str | None, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """List schedules: next due time, last run, its task and result, missed count."""
    with opened_store(queue, config_file) as store:
        found = store.schedules(now(), conversation)  # type: ignore[attr-defined]
    if as_json:
        echo_json([_json(s) for s in found])
        return
    if not found:
        click.echo("no schedules (phoned schedule add --cron ... --method ...)")
        return
    table = [_HEADER, *(_row(s) for s in found)]
    widths = [max(len(r[i]) for r in table) for i in range(len(_HEADER))]
    for r in table:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _resolve(store: Any, reference: str) -> ScheduleRecord:
    """The schedule a full id or a unique prefix names."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.errors import TaskNotFound

    found = [s for s in store.schedules(now()) if s.id == reference]
    if found:
        return found[0]
    if len(reference) < PREFIX_MIN:
        raise TaskNotFound(f"no schedule {reference} (give the id, or {PREFIX_MIN}+ characters)")
    matches = [s for s in store.schedules(now()) if s.id.startswith(reference)]
    if len(matches) != 1:
        many = "several schedules" if matches else "no schedule"
        raise TaskNotFound(f"{many} start with {reference}")
    return matches[0]


@schedule.command()
@click.argument("schedule_id", metavar="SCHEDULE")
@common_options
@user_errors
def show(schedule_id: str, queue: str | None, config_file: str | None, as_json: bool) -> None:
    """Show SCHEDULE and its newest runs (fired with the task's state, missed, refused)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.wire import plain

    with opened_store(queue, config_file) as store:
        found = _resolve(store, schedule_id)
        runs = store.schedule_runs(found.id)  # type: ignore[attr-defined]
    if as_json:
        echo_json({"schedule": _json(found), "runs": plain(runs)})
        return
    click.echo(f"schedule {found.id} {found.name or ''}".rstrip())
    click.echo(f"  cron {found.cron} in {found.tz}; conversation {found.conversation_id}")
    click.echo(f"  task {found.method} {found.task.get('params') or {}}")
    state = "paused" if found.paused else f"next due {_local(found.next_due_at, found.tz)}"
    click.echo(f"  {state}; missed {found.missed_count}")
    for run in runs:
        what = run.result
        if run.task_id:
            what += f" task {run.task_id} ({run.task_state or 'removed'})"
        if run.message:
            what += f": {run.message}"
        click.echo(f"  {_local(run.due_at, found.tz)}  {what}")


def _changed(record: ScheduleRecord, verb: str, as_json: bool) -> None:
    if as_json:
        echo_json(_json(record))
    else:
        click.echo(f"{record.id} {verb}")


@schedule.command()
@click.argument("schedule_id", metavar="SCHEDULE")
@click.option("--conversation", required=True, help="Conversation that owns it.")
@common_options
@user_errors
def remove(
    schedule_id: str, conversation: str, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """Remove SCHEDULE (the tasks it created stay)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.schedule_ops import RemoveSchedule

    with opened_store(queue, config_file) as store:
        found = _resolve(store, schedule_id)
        removed = store.apply(RemoveSchedule(found.id, conversation, now()))
    _changed(removed, "removed", as_json)


def _pause_verb(name: str, paused: bool, help: str) -> click.Command:
    @schedule.command(name=name, help=help)
    @click.argument("schedule_id", metavar="SCHEDULE")
    @click.option("--conversation", required=True, help="Conversation that owns it.")
    @common_options
    @user_errors
    def verb(
        schedule_id: str,
        conversation: str,
        queue: str | None,
        config_file: str | None,
        as_json: bool,
    ) -> None:
        # lazy: phoned --help start-up path (docs/structure.md, measured)
        from phoned.daemon.lifecycle.schedule_ops import PauseSchedule

        with opened_store(queue, config_file) as store:
            found = _resolve(store, schedule_id)
            changed = store.apply(PauseSchedule(found.id, conversation, paused, now()))
        _changed(changed, "paused" if paused else "resumed", as_json)

    return verb


pause = _pause_verb("pause", True, "Pause SCHEDULE: nothing fires until it is resumed.")
resume = _pause_verb(
    "resume", False, "Resume SCHEDULE: it fires from its next due time (none missed meanwhile)."
)
