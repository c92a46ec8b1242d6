"""Verbs that put tasks in the queue and look at them: submit, workflow submit, tasks, show,
rerun. Each validates through the lifecycle contract (``parse_ingress``), so an invalid
task is refused with the field named, exit 2, and nothing is queued.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from daemon.verbs.common import (
    EXIT_USAGE,
    InputError,
    common_options,
    echo_json,
    fail,
    load_config,
    now,
    opened_store,
    user_errors,
)

if TYPE_CHECKING:
    from daemon.config import Config
    from daemon.lifecycle.records import Event, TaskRecord
    from daemon.store.protocol import PlannerStore

STATES = ("queued", "dispatched", "running", "waiting", "approval", "permission",
          "completed", "failed", "stopped")  # fmt: skip


def _task_from_options(
    method: str,
    params: tuple[str, ...],
    conversation: str | None,
    extra: dict[str, Any],
) -> dict[str, Any]:
    from daemon.verbs.inputs import parse_params

    raw: dict[str, Any] = {"method": method, "params": parse_params(method, params)}
    if conversation is not None:
        raw["conversation_id"] = conversation
    raw.update({k: v for k, v in extra.items() if v is not None})
    return raw


def _raw_input(file: str | None, method: str | None, raw_options: dict[str, Any]) -> Any:
    from daemon.verbs.inputs import read_document

    if file is not None and method is not None:
        raise InputError("give a FILE or --method, not both")
    if file is not None and (raw_options["params"] or raw_options["conversation"]):
        raise InputError("--param and --conversation go with --method; put them in FILE")
    if file is not None:
        return read_document(file)
    if method is None:
        raise InputError("give a task FILE ('-' for stdin) or --method METHOD")
    return _task_from_options(
        method, raw_options["params"], raw_options["conversation"], raw_options["extra"]
    )


def queue_spec(
    store: PlannerStore, raw: Any, cfg: Config, *, workflow_only: bool = False
) -> tuple[list[TaskRecord], bool]:
    """Validate ``raw`` (either ingress shape) and queue it: (queued tasks, is a workflow).

    Timeouts the task does not give come from the config's ``timeouts.*``.
    """
    from daemon.config import with_default_timeouts
    from daemon.lifecycle.contract import WorkflowSpec
    from daemon.lifecycle.errors import FieldError, InvalidTask
    from daemon.lifecycle.ingress import parse_ingress

    spec = with_default_timeouts(parse_ingress(raw), cfg)
    if isinstance(spec, WorkflowSpec):
        return store.submit_workflow(spec, now()), True
    if workflow_only:
        raise InvalidTask([FieldError(field="steps", message="a workflow needs a list of steps")])
    return [store.submit(spec, now())], False


def _print_queued(tasks: list[TaskRecord], as_json: bool, many: bool = False) -> None:
    from daemon.render import task_json

    if as_json:
        docs = [task_json(t) for t in tasks]
        echo_json(docs if many else docs[0])
        return
    for task in tasks:
        click.echo(task.id)


@click.command()
@click.argument("file", required=False)
@click.option("--method", default=None, help="Task method, e.g. dnd.set (instead of FILE).")
@click.option("--param", "params", multiple=True, metavar="K=V", help="Parameter (repeatable).")
@click.option("--conversation", default=None, help="Conversation (session) that owns the task.")
@click.option("--device", default=None, metavar="SERIAL", help="Only this device.")
@click.option("--source", default=None, type=click.Choice(["cloud", "voice", "cli", "schedule"]))
@click.option("--idempotency-key", default=None, help="Resubmitting it returns the first task.")
@common_options
@user_errors
def submit(
    file: str | None,
    method: str | None,
    params: tuple[str, ...],
    conversation: str | None,
    device: str | None,
    source: str | None,
    idempotency_key: str | None,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Queue a task from FILE (JSON or YAML, '-' = stdin) or from --method/--param.

    Prints the task id (every step's id for a workflow); --json prints the record.
    """
    extra = {"device": device, "source": source, "idempotency_key": idempotency_key}
    options = {"params": params, "conversation": conversation, "extra": extra}
    raw = _raw_input(file, method, options)
    if file is not None and isinstance(raw, dict):
        raw.update({k: v for k, v in extra.items() if v is not None})
    cfg = load_config(config_file, queue=queue)
    with opened_store(queue, config_file, create=True) as store:
        queued, many = queue_spec(store, raw, cfg)
        unserved = _unserved(store, cfg, queued)
    _print_queued(queued, as_json, many)
    warn_unknown_devices(queued, cfg)
    if unserved:
        click.echo(f"phoned: {unserved}", err=True)


@click.group()
def workflow() -> None:
    """Workflows: ordered steps that run strictly in order on one device."""


@workflow.command("submit")
@click.argument("file")
@common_options
@user_errors
def workflow_submit(file: str, queue: str | None, config_file: str | None, as_json: bool) -> None:
    """Queue the workflow in FILE (canonical ``steps`` or seed-004 ``subTasks``)."""
    from daemon.verbs.inputs import read_document

    raw = read_document(file)
    cfg = load_config(config_file, queue=queue)
    with opened_store(queue, config_file, create=True) as store:
        queued, _ = queue_spec(store, raw, cfg, workflow_only=True)
        unserved = _unserved(store, cfg, queued)
    _print_queued(queued, as_json, many=True)
    warn_unknown_devices(queued, cfg)
    if unserved:
        click.echo(f"phoned: {unserved}", err=True)


def _unserved(store: PlannerStore, cfg: Config, queued: list[TaskRecord]) -> str | None:
    """The warning to give at once when no daemon serves the queue (or the phone) the
    tasks wait in (``daemon.verbs.status``); None when one does."""
    from daemon.verbs.status import unserved_warning

    for device in dict.fromkeys(t.device for t in queued if not t.terminal):
        warning = unserved_warning(store, cfg.queue_url, device)
        if warning is not None:
            return warning
    return None


def warn_unknown_devices(queued: list[TaskRecord], cfg: Config) -> None:
    """Say on stderr when a task names a phone this host's adb server does not list ready.

    Such a task is still queued (a daemon on another host of a shared queue may serve the
    phone, or it may be plugged in later); the warning says it waits, and for how long at
    most. A control-plane queue is not checked here (its daemons are on other hosts).
    """
    wanted = sorted({t.device for t in queued if t.device and not t.terminal})
    if not wanted or cfg.queue_url.startswith(("http://", "https://")):
        return
    from daemon.verbs.context import adb_server
    from device.connection import list_devices
    from device.errors import DeviceError

    server = adb_server(cfg)
    where = f"{server.host}:{server.port}"
    try:
        attached = list_devices(server) if server.is_running() else None
    except DeviceError:
        attached = None
    for serial in wanted:
        task = next(t for t in queued if t.device == serial)
        limit = (task.spec.get("timeouts") or {}).get("queued_s")
        waits = f"fails after timeouts.queued ({limit:g} s)" if limit else "waits with no limit"
        if attached is not None and attached.get(serial) == "device":
            continue
        seen = "no adb server answers" if attached is None else (
            f"the adb server lists it as {attached[serial]}" if serial in attached
            else "the adb server does not list it")  # fmt: skip
        click.echo(
            f"phoned: warning: device {serial} is not attached to this host ({seen} at "
            f"{where}); the task stays queued until a daemon serving it claims it, and {waits}",
            err=True,
        )


def _table_row(task: TaskRecord) -> tuple[str, ...]:
    """One row of ``phoned tasks``; every cell escaped for the terminal (``daemon.terminal``)."""
    from daemon.render import iso
    from daemon.terminal import terminal_text

    note = task.failure.reason.value if task.failure is not None else ""
    if task.stop_requested and not task.terminal:
        note = "stop requested"
    cells = (
        task.id, task.state.value, task.method, task.device or "-", task.conversation_id,
        str(task.revision), f"{task.attempt}/{task.max_attempts}", iso(task.updated_at) or "",
        note,
    )  # fmt: skip
    return tuple(terminal_text(cell) for cell in cells)


def format_table(rows: list[tuple[str, ...]]) -> str:
    """Rows under a header, columns padded to their widest cell."""
    header = ("ID", "STATE", "METHOD", "DEVICE", "CONVERSATION", "REV", "ATTEMPT", "UPDATED",
              "NOTE")  # fmt: skip
    table = [header, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in table
    )


@click.command()
@click.option("--state", "states", multiple=True, type=click.Choice(STATES), help="Repeatable.")
@click.option("--device", default=None, metavar="SERIAL")
@click.option("--conversation", default=None)
@click.option("--workflow", "workflow_id", default=None)
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10000))
@common_options
@user_errors
def tasks(
    states: tuple[str, ...],
    device: str | None,
    conversation: str | None,
    workflow_id: str | None,
    limit: int,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """List tasks, newest first, as a table (--json: a list of records).

    When more tasks match than --limit, a last line says how many more there are.
    """
    from daemon.lifecycle.states import TaskState
    from daemon.render import task_json

    wanted = tuple(TaskState(s) for s in states)
    with opened_store(queue, config_file) as store:
        found = store.list_tasks(
            states=wanted,
            device=device,
            conversation_id=conversation,
            workflow_id=workflow_id,
            limit=limit + 1,
            newest_first=True,
        )
        more = _more_than_shown(store, found, limit, wanted, device, conversation or workflow_id)
        if any(not t.terminal for t in found):
            from daemon.verbs.status import warn_unserved

            warn_unserved(store, load_config(config_file, queue=queue).queue_url, device)
    found = found[:limit]
    if as_json:
        echo_json([task_json(t) for t in found])
    elif found:
        click.echo(format_table([_table_row(t) for t in found]))
    else:
        click.echo("no tasks")
    if more and not as_json:
        click.echo(f"... {more} older not shown (--limit {limit}; narrow with --state/--device)")


def _more_than_shown(
    store: PlannerStore,
    found: list[TaskRecord],
    limit: int,
    states: tuple[Any, ...],
    device: str | None,
    other_filter: str | None,
) -> str:
    """How many matching tasks lie beyond ``limit`` ("" when none): exact from the queue's
    counts when only --state/--device filter, else "more"."""
    if len(found) <= limit:
        return ""
    if other_filter:
        return "more"
    counts = store.queue_status(device)
    total = sum(
        n for state, n in counts.items() if not states or state in {s.value for s in states}
    )
    return str(max(total - limit, 1))


def all_events(store: PlannerStore, page: int = 1000) -> list[Event]:
    """Every event in the outbox, in cursor order."""
    out: list[Event] = []
    cursor = 0
    while True:
        batch = store.events(after=cursor, limit=page)
        out.extend(batch)
        if len(batch) < page:
            return out
        cursor = batch[-1].cursor


@click.command()
@click.argument("task_id", metavar="TASK")
@click.option("--html", "html_file", default=None, type=click.Path(dir_okay=False),
              help="Write a self-contained HTML report (screenshots inlined) to this file.")  # fmt: skip
@common_options
@user_errors
def show(
    task_id: str, html_file: str | None, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """A task with its transitions, journal and evidence (text, --json or --html FILE).

    A pending approval is shown with its preview (effect, recipient, text, app, screenshot)
    and the exact ``phoned approve`` / ``phoned deny`` commands to copy.
    """
    from daemon import render
    from daemon.verbs.lifecycle import revision_json, revision_lines

    with opened_store(queue, config_file) as store:
        record = store.get(task_id)
        inputs = (record, store.evidence(task_id), store.journal(task_id), all_events(store))
        kept = store.revisions(task_id)
    if html_file is not None:
        state = load_config(config_file, queue=queue).state_path
        roots = (state / "artifacts", state / "serve" / "artifacts")  # daemon's, plane's
        try:
            page = render.render_html(*inputs, artifact_roots=roots)
            # a new report file is 0600: its screenshots show the messages
            opener = lambda path, flags: os.open(path, flags, 0o600)  # noqa: E731
            with open(html_file, "w", encoding="utf-8", opener=opener) as out:
                out.write(page)
        except OSError as exc:
            fail(f"cannot write {html_file}: {exc.strerror}", EXIT_USAGE)
        click.echo(html_file)
    elif as_json:
        echo_json({**render.render_json(*inputs, queue=queue),
                   "revisions": [revision_json(r) for r in kept]})  # fmt: skip
    else:
        click.echo(render.render_text(*inputs, queue=queue), nl=False)
        click.echo("\n".join(revision_lines(kept)))


@click.command()
@click.argument("task_id", metavar="TASK")
@common_options
@user_errors
def rerun(task_id: str, queue: str | None, config_file: str | None, as_json: bool) -> None:
    """Queue a new task from a terminal one (rerun_of set, fresh attempts); print its id."""
    with opened_store(queue, config_file) as store:
        task = store.rerun(task_id, now())
    _print_queued([task], as_json)
