"""What every ``phoned`` verb shares: the ``--queue/--json/--config`` options, opening the
store, translating errors into one line and an exit code, and ``k=v`` parameters.

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
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    from daemon.config import Config
    from daemon.store.protocol import PlannerStore

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

F = TypeVar("F", bound=Callable[..., Any])


class InputError(Exception):
    """The user's input (a file, an option value) cannot be used; exit 2."""


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print ``phoned: message`` on stderr (one line, escaped for the terminal) and exit
    with ``code``."""
    from daemon.terminal import terminal_text

    click.echo(f"phoned: {terminal_text(' '.join(message.split()))}", err=True)
    sys.exit(code)


def _device_message(exc: Exception) -> str:
    from device.errors import DeviceError

    hint = getattr(exc, "HINT", "")
    message = str(exc) or type(exc).__name__
    if isinstance(exc, DeviceError) and hint and hint not in message:
        message = f"{message}: {hint}"
    return message


def exit_code_of(exc: Exception) -> int | None:
    """The documented exit code of an error a verb may raise; None for a bug (re-raised)."""
    from daemon.config import ConfigError
    from daemon.lifecycle.errors import InvalidTask, LifecycleError
    from daemon.store.open import QueueUrlError
    from device.errors import DeviceError

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


def common_options(fn: F) -> F:
    """Add ``--queue URL``, ``--config FILE`` and ``--json`` to a verb."""
    fn = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(fn)
    fn = click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False),
        default=None,
        help="Config file (default: $PHONED_CONFIG, /etc/phoned/phoned.yaml, ./config/phoned.yaml).",
    )(fn)
    fn = click.option(
        "--queue",
        default=None,
        metavar="URL",
        help="Task queue URL (default: config queue, else the SQLite file in the state dir).",
    )(fn)
    return fn


def load_config(config_file: str | None, **flags: Any) -> Config:
    """The config from ``config_file`` (or the default path), env and ``flags``."""
    from daemon import config

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
    from daemon.store.open import open_planner_store

    cfg = load_config(config_file, queue=queue)
    store = open_planner_store(cfg.queue_url, create=create)
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
