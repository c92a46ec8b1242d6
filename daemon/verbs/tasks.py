"""Verbs that put tasks in the queue and look at them: submit, workflow submit, tasks, show,
rerun. Each validates through the lifecycle contract (``parse_ingress``), so an invalid
task is refused with the field named, exit 2, and nothing is queued. TASK is a full id, a
unique id prefix or ``last`` (``phoned.daemon.verbs.common.resolve_task``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.planning.queueing import queue_spec
from phoned.daemon.verbs.common import (
    InputError,
    SentenceHelpGroup,
    common_options,
    echo_json,
    load_config,
    now,
    opened_store,
    task_reference,
    user_errors,
)

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.daemon.lifecycle.errors import InvalidTask
    from phoned.daemon.lifecycle.records import Event, TaskRecord
    from phoned.daemon.store.protocol import PlannerStore

STATES = tuple(state.value for state in TaskState)


def _task_from_options(
    method: str,
    params: tuple[str, ...],
    conversation: str | None,
    extra: dict[str, Any],
) -> dict[str, Any]:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.verbs.inputs import parse_params

    raw: dict[str, Any] = {"method": method, "params": parse_params(method, params)}
    if conversation is not None:
        raw["conversation_id"] = conversation
    raw.update({k: v for k, v in extra.items() if v is not None})
    return raw


def _raw_input(file: str | None, method: str | None, raw_options: dict[str, Any]) -> Any:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.documents import read_document

    if file is not None and method is not None:
        raise InputError("give a FILE or --method, not both")
    if file is not None and (raw_options["params"] or raw_options["conversation"]):
        raise InputError(
            "--param and --conversation go with --method; put them in FILE "
            "(as params and conversation_id)"
        )
    if file is not None:
        return read_document(file)
    if method is None:
        raise InputError("give a task FILE ('-' for stdin) or --method METHOD")
    return _task_from_options(
        method, raw_options["params"], raw_options["conversation"], raw_options["extra"]
    )


def _print_queued(tasks: list[TaskRecord], as_json: bool, many: bool = False) -> None:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.render import task_json

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
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.errors import InvalidTask

    extra = {"device": device, "source": source, "idempotency_key": idempotency_key}
    options = {"params": params, "conversation": conversation, "extra": extra}
    raw = _raw_input(file, method, options)
    if file is not None and isinstance(raw, dict):
        raw.update({k: v for k, v in extra.items() if v is not None})
    cfg = load_config(config_file, queue=queue)
    with opened_store(queue, config_file, create=True) as store:
        try:
            queued, many = queue_spec(store, raw, cfg)
        except InvalidTask as exc:
            if method is None:
                raise
            raise _named_as_options(exc) from None
        unserved = _unserved(store, cfg, queued)
    _print_queued(queued, as_json, many)
    warn_unknown_devices(queued, cfg)
    if unserved:
        click.echo(f"phoned: {unserved}", err=True)


def _named_as_options(exc: InvalidTask) -> InvalidTask:
    """``exc`` for a task given as options: a missing ``conversation_id`` names
    ``--conversation``, which is how it is given there."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.errors import FieldError, InvalidTask

    hint = ": give --conversation C, the conversation that owns the task"
    return InvalidTask(
        [
            FieldError(field=e["field"], message=e["message"] + hint)
            if e["field"] == "conversation_id" and e["message"] == "Field required"
            else e
            for e in exc.errors
        ]
    )


@click.group(cls=SentenceHelpGroup)
def workflow() -> None:
    """Workflows: ordered steps that run strictly in order on one device."""


@workflow.command("submit")
@click.argument("file")
@common_options
@user_errors
def workflow_submit(file: str, queue: str | None, config_file: str | None, as_json: bool) -> None:
    """Queue the workflow in FILE (canonical ``steps`` or seed-004 ``subTasks``)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.documents import read_document

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
    tasks wait in (``phoned.daemon.verbs.status``); None when one does."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.verbs.status import unserved_warning

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
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.verbs.context import adb_server
    from phoned.device.connection import list_devices
    from phoned.device.errors import DeviceError

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


def task_note(task: TaskRecord) -> str:
    """The NOTE of ``phoned tasks``: ``stop requested`` for a live task asked to stop, else
    what a paused task waits for (``approval: phoned approve ...`` with the id and digest
    shortened, ``permission: <permission> (<package>)``, ``waiting: <condition>``), else
    the failure reason; "" when there is nothing to say. Not escaped (the row is)."""
    if task.stop_requested and not task.terminal:
        return "stop requested"
    waits = _wait_note(task)
    if waits:
        return waits
    return task.failure.reason.value if task.failure is not None else ""


def _wait_note(task: TaskRecord) -> str:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.states import TaskState
    from phoned.daemon.lifecycle.waiting import WaitKind

    if task.state is TaskState.APPROVAL:
        if task.approval_status != "pending" or not task.approval_digest:
            return f"approval {task.approval_status or ''}".rstrip()
        algorithm, _, value = task.approval_digest.partition(":")
        digest = f"{algorithm}:{value[:8]}…" if value else f"{algorithm[:8]}…"
        revision = task.approval_revision or task.revision
        return f"approval: phoned approve {task.id[:8]} --revision {revision} --digest {digest}"
    wait = task.waiting
    if task.state not in (TaskState.PERMISSION, TaskState.WAITING) or wait is None:
        return ""
    if wait.kind is WaitKind.PERMISSION:
        return f"permission: {wait.permission} ({wait.package})"
    if wait.kind is WaitKind.PERMISSION_DIALOG:
        missing = f" ({', '.join(wait.missing)})" if wait.missing else ""
        return f"permission: a dialog over {wait.package or 'the screen'}{missing}"
    if wait.kind is WaitKind.USER:
        return f"waiting: user (phoned resume {task.id[:8]})"
    if wait.kind is WaitKind.PERSON:
        return f"waiting for you: {task.params.get('instruction', '')} (in {wait.package})"
    if wait.kind is WaitKind.CHOICE:
        return (
            f"choice: {wait.choice_of} (phoned show {task.id[:8]}: the candidates and "
            f"the phoned amend line to answer)"
        )
    return f"waiting: {wait.condition}"


def _table_row(task: TaskRecord) -> tuple[str, ...]:
    """One row of ``phoned tasks``; every cell escaped for the terminal (``phoned.daemon.rendering.terminal``)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.render import iso
    from phoned.daemon.rendering.terminal import terminal_text

    note = task_note(task)
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
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.states import TaskState
    from phoned.daemon.rendering.render import task_json

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
            # lazy: phoned --help start-up path (docs/structure.md, measured)
            from phoned.daemon.verbs.status import warn_unserved

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


def write_report(path: str, page: str, force: bool) -> Path:
    """Write ``page`` to ``path`` and return its absolute path; ``InputError`` when it cannot.

    The file is created 0600 (its screenshots show the messages) and never through a
    symbolic link: a link at ``path`` is refused, an existing file too unless ``force``,
    which replaces it whole (a new 0600 file renamed over it, so a link put there meanwhile
    is replaced, not followed).
    """
    target = Path(path).absolute()
    if target.is_symlink():
        raise InputError(f"{target} is a symbolic link; a report is never written through one")
    try:
        if force:
            _replace_file(target, page)
            return target
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(target, flags, 0o600), "w", encoding="utf-8") as out:
            out.write(page)
    except FileExistsError:
        raise InputError(f"{target} exists; --force replaces it") from None
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror}") from exc
    return target


def _replace_file(target: Path, page: str) -> None:
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:  # mkstemp creates it 0600
            out.write(page)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@click.command()
@click.argument("task_id", metavar="TASK")
@click.option("--conversation", default=None,
              help="With TASK `last` or an id prefix: look among this conversation's tasks.")  # fmt: skip
@click.option("--html", "html_file", default=None, type=click.Path(dir_okay=False),
              help="Write a self-contained HTML report (screenshots inlined) to this new file.")  # fmt: skip
@click.option("--force", is_flag=True, help="With --html: replace the file if it exists.")
@common_options
@user_errors
@task_reference
def show(
    task_id: str,
    conversation: str | None,
    html_file: str | None,
    force: bool,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """A task with its transitions, journal and evidence (text, --json or --html FILE).

    TASK is the task id, a unique prefix of it (at least 6 characters) or `last`, the
    newest task. A pending approval is shown with its preview (effect, recipient, text,
    app, screenshot) and the exact ``phoned approve`` / ``phoned deny`` commands to copy.
    --html writes a new file (0600; --force replaces one, a symbolic link is refused) and
    says on stderr where.
    """
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering import render
    from phoned.daemon.verbs.lifecycle import revision_json, revision_lines

    with opened_store(queue, config_file) as store:
        record = store.get(task_id)
        inputs = (record, store.evidence(task_id), store.journal(task_id), all_events(store))
        kept = store.revisions(task_id)
    if html_file is not None:
        state = load_config(config_file, queue=queue).state_path
        roots = (state / "artifacts", state / "serve" / "artifacts")  # daemon's, plane's
        # lazy: phoned --help start-up path (docs/structure.md, measured)
        from phoned.daemon.rendering.terminal import terminal_text

        page = render.render_html(*inputs, artifact_roots=roots, queue=queue)
        written = write_report(html_file, page, force)
        click.echo(f"phoned: report written to {terminal_text(written)}", err=True)
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
@task_reference
def rerun(task_id: str, queue: str | None, config_file: str | None, as_json: bool) -> None:
    """Queue a new task from a terminal one (rerun_of set, fresh attempts); print its id."""
    with opened_store(queue, config_file) as store:
        task = store.rerun(task_id, now())
    _print_queued([task], as_json)
