"""What every ``phoned`` verb shares: the ``--queue/--json/--config`` options, opening the
store, translating errors into one line and an exit code, naming a task (``TASK``: a full
id, a unique id prefix or ``last``) and the command list of ``--help``.

Only ``click`` is imported at module level so ``phoned --help`` stays instant; the store,
the lifecycle and the device layer are imported when a verb runs.

Exit codes (documented in ``docs/cli.md``):

* 0 success;
* 1 the request was understood but refused or failed (approval mismatch, unknown task,
  terminal task, conversation mismatch, guard errors, device errors, store failures);
* 2 usage or configuration error, or an invalid task (``InvalidTask``, ``ConfigError``,
  ``QueueUrlError``, unreadable input file; click's own usage errors are 2 as well).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from phoned.daemon.lifecycle.documents import InputError

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.daemon.lifecycle.records import TaskRecord
    from phoned.daemon.store.protocol import PlannerStore

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print ``phoned: message`` on stderr (one line, escaped for the terminal) and exit
    with ``code``."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.terminal import terminal_text

    click.echo(f"phoned: {terminal_text(' '.join(message.split()))}", err=True)
    sys.exit(code)


def _device_message(exc: Exception) -> str:
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.device.errors import DeviceError

    hint = getattr(exc, "HINT", "")
    message = str(exc) or type(exc).__name__
    if isinstance(exc, DeviceError) and hint and hint not in message:
        message = f"{message}: {hint}"
    return message


def exit_code_of(exc: Exception) -> int | None:
    """The documented exit code of an error a verb may raise; None for a bug (re-raised)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.config import ConfigError
    from phoned.daemon.lifecycle.errors import InvalidTask, LifecycleError
    from phoned.daemon.store.open import QueueUrlError
    from phoned.device.errors import DeviceError

    if isinstance(exc, InvalidTask | ConfigError | QueueUrlError | InputError):
        return EXIT_USAGE
    if isinstance(exc, LifecycleError | DeviceError):
        return EXIT_FAILURE
    return None


def user_errors(fn: F) -> F:
    """Wrap a verb so that user errors become one line on stderr and their exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            code = exit_code_of(exc)
            if code is None:
                raise
            fail(_device_message(exc), code)

    return wrapper  # type: ignore[return-value]


def json_option(help: str = "Print JSON for machines.") -> Callable[[F], F]:
    """``--json`` (``as_json``); a verb whose JSON is one particular document says which."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def config_option(
    help: str = "Config file (default: $PHONED_CONFIG, /etc/phoned/phoned.yaml, "
    "./config/phoned.yaml).",
) -> Callable[[F], F]:
    """``--config FILE`` (``config_file``), read by ``load_config``; a verb that reads only
    part of the config says which part."""
    return click.option(
        "--config", "config_file", type=click.Path(dir_okay=False), default=None, help=help
    )


queue_option = click.option(
    "--queue",
    default=None,
    metavar="URL",
    help="Task queue URL (default: config queue, else the SQLite file in the state dir).",
)


def common_options(fn: F) -> F:
    """Add ``--queue URL``, ``--config FILE`` and ``--json`` to a verb."""
    return queue_option(config_option()(json_option()(fn)))


def load_config(config_file: str | None, **flags: Any) -> Config:
    """The config from ``config_file`` (or the default path), env and ``flags``."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon import config

    path = Path(config_file) if config_file else config.default_config_path()
    return config.load(path, flags=flags)


@contextlib.contextmanager
def opened_store(
    queue: str | None, config_file: str | None, *, create: bool = False
) -> Iterator[PlannerStore]:
    """The store the queue URL names (flag, else config), closed on exit; for an
    ``http(s)://`` queue the plane's API with ``$PHONED_TOKEN``.

    Only verbs that queue work pass ``create=True``: a read or a decision on a mistyped
    SQLite path says that no queue is there instead of creating folders and an empty one.
    """
    cfg = load_config(config_file, queue=queue)
    with opened_queue(cfg.queue_url, create=create, busy_wait_s=cfg.queue_busy_wait) as store:
        yield store


@contextlib.contextmanager
def opened_queue(
    url: str, *, create: bool = True, busy_wait_s: float | None = None
) -> Iterator[PlannerStore]:
    """``open_planner_store(url, ...)``, closed on exit: for a verb that has read the config
    already (``opened_store`` reads it for the others)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.store.open import open_planner_store

    store = open_planner_store(url, create=create, busy_wait_s=busy_wait_s)
    try:
        yield store
    finally:
        store.close()


def now() -> float:
    """The wall clock in POSIX seconds, as every store verb expects it."""
    return time.time()


def echo_json(value: Any) -> None:
    """Print ``value`` as one indented, key-sorted JSON document."""
    click.echo(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str))


class SentenceHelpGroup(click.Group):
    """A group whose ``--help`` lists each command with its first sentence whole, wrapped
    in the column (click's own list cuts it at the terminal width with ``...``)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=sys.maxsize)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# Task ids are 32 hex characters, uuid4 (``daemon.store.rows.new_task_row``).
_HEX = re.compile(r"[0-9a-fA-F]+")
TASK_PREFIX_MIN = 6  # shortest id prefix TASK may be
TASK_PREFIX_SCAN = 1000  # newest tasks a prefix is looked for in: one control-plane page
_CANDIDATES_SHOWN = 5


def resolve_task(store: PlannerStore, ref: str, conversation: str | None = None) -> str:
    """The full id of the task ``ref`` names, for every verb that takes TASK.

    ``ref`` is one of:

    * a full id: returned (lower-cased) without a read; the verb's own read says whether
      the task exists. So is anything that is neither hex nor ``last`` (``nope``);
    * ``last``: the newest task, of ``conversation`` when given; one ``list_tasks`` of one;
    * a prefix of 6 to 31 hex characters, either case: one ``list_tasks`` of the newest
      ``TASK_PREFIX_SCAN`` tasks (of ``conversation`` when given), matched here, so a task
      older than those is found only by its full id.

    A shorter prefix, or one several tasks start with, is an ``InputError`` (exit 2; the
    candidates are named); a prefix no task starts with is ``TaskNotFound`` (exit 1).
    """
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.errors import TaskNotFound

    of = f" of conversation {conversation}" if conversation else ""
    if ref == "last":
        newest = store.list_tasks(conversation_id=conversation, limit=1, newest_first=True)
        if not newest:
            raise TaskNotFound(f"no task{of} yet: `last` names the newest one")
        return newest[0].id
    if not _needs_lookup(ref):
        return _as_given(ref)
    if len(ref) < TASK_PREFIX_MIN:
        raise InputError(
            f"task id prefix {ref!r} is too short: give at least {TASK_PREFIX_MIN} characters "
            "of the id, the whole id, or `last`"
        )
    listed = store.list_tasks(
        conversation_id=conversation, limit=TASK_PREFIX_SCAN, newest_first=True
    )
    prefix = ref.lower()
    found = [t for t in listed if t.id.startswith(prefix)]
    if len(found) == 1:
        return found[0].id
    if not found:
        among = f" among the newest {len(listed)}" if len(listed) == TASK_PREFIX_SCAN else ""
        raise TaskNotFound(f"no task{of}{among} has an id starting with {ref}")
    raise InputError(f"task id prefix {ref} is ambiguous: {_candidates(found)}")


def _needs_lookup(ref: str) -> bool:
    """True when ``ref`` is ``last`` or an id prefix (hex, shorter than a whole id)."""
    return ref == "last" or (_HEX.fullmatch(ref) is not None and len(ref) < 32)


def _as_given(ref: str) -> str:
    """``ref`` that needs no lookup: a whole id lower-cased (ids are), anything else as is."""
    return ref.lower() if _HEX.fullmatch(ref) else ref


def _candidates(found: list[TaskRecord]) -> str:
    shown = "; ".join(
        f"{t.id} ({t.method}, {t.state.value}, {t.conversation_id})"
        for t in found[:_CANDIDATES_SHOWN]
    )
    more = f"; and {len(found) - _CANDIDATES_SHOWN} more" if len(found) > _CANDIDATES_SHOWN else ""
    return f"{shown}{more}; give more characters"


def task_reference(fn: F) -> F:
    """Let the verb's ``task_id`` (TASK) be any reference ``resolve_task`` reads: the verb
    receives the full id. A full id costs nothing more; a prefix or ``last`` opens the
    store the verb's ``--queue``/``--config`` name once more to resolve it (with the verb's
    ``--conversation``, if it has one). Goes under ``user_errors``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ref = kwargs["task_id"]
        if _needs_lookup(ref):
            with opened_store(kwargs.get("queue"), kwargs.get("config_file")) as store:
                kwargs["task_id"] = resolve_task(store, ref, kwargs.get("conversation"))
        else:
            kwargs["task_id"] = _as_given(ref)
        return fn(*args, **kwargs)

    wrapper.resolves_task_reference = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def accept_task_reference(command: click.Command) -> click.Command:
    """``command`` (a verb taking TASK) with ``task_reference`` applied, errors included;
    unchanged when its callback already resolves references."""
    callback = command.callback
    if callback is not None and not getattr(callback, "resolves_task_reference", False):
        command.callback = user_errors(task_reference(callback))
    return command
