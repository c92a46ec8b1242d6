"""``phoned run --once`` at a terminal: a task that reaches approval is decided inline.

The person reads the pending preview exactly as ``phoned show`` presents it
(``phoned.daemon.rendering.approval_view.approval_lines``, each line escaped for the terminal) and answers
``Approve? [y/N]``. A yes is the store call ``phoned approve TASK --revision R --digest D
--conversation C`` makes (``PlannerStore.approve``), quoting the revision, digest and
conversation of the preview that was shown, so the approval is bound to exactly that; the
run then carries on with the same task. Anything else (``n``, an empty line, end of input,
Ctrl-C) decides nothing: the task stays in approval, and the run exits 4 with the
``phoned approve`` command in its report, as without a terminal. Denying stays the
``phoned deny`` verb's (its command is printed with the preview).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

import click
from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.rendering.approval_view import approval_lines, pending_approval
from phoned.daemon.rendering.render import approval_preview, state_line
from phoned.daemon.rendering.terminal import terminal_text

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord
    from phoned.daemon.store.protocol import PlannerStore

QUESTION = "Approve? [y/N] "
YES = frozenset({"y", "yes"})


def at_a_terminal() -> bool:
    """Both stdin and stdout are a terminal: a person can read the preview and answer."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def pending_of(store: PlannerStore, task: TaskRecord, queue: str | None) -> dict[str, Any] | None:
    """The task's pending approval as ``phoned show`` gathers it, when its preview can be
    shown in clear (rebuilt and matching the approval digest); else None."""

    if task.state is not TaskState.APPROVAL:
        return None
    evidence = store.evidence(task.id)
    preview = approval_preview(task, evidence)
    if preview is None:  # nothing to show that the digest vouches for: no blind approval
        return None
    return pending_approval(task, preview, evidence, queue)


def ask_approval(store: PlannerStore, task: TaskRecord, queue: str | None) -> TaskRecord | None:
    """Show ``task``'s pending preview and ask; the approved (requeued) task on yes, None
    when nothing was approved (the task stays in approval)."""

    pending = pending_of(store, task, queue)
    if pending is None:
        return None
    for line in approval_lines(pending):
        click.echo(terminal_text(line))
    if not _answered_yes():
        return None
    try:
        approved = store.approve(
            task.id, pending["conversation_id"], pending["revision"], pending["digest"], time.time()
        )
    except LifecycleError as exc:  # expired, amended or decided elsewhere meanwhile
        click.echo(f"phoned: {exc}", err=True)
        return None
    click.echo(state_line(approved))  # what `phoned approve` prints
    return approved


def _answered_yes() -> bool:
    click.echo("")
    click.echo(QUESTION, nl=False)
    try:
        with _interruptible():
            answer = sys.stdin.readline()
    except KeyboardInterrupt:
        click.echo("")
        return False
    if not answer:  # end of input
        click.echo("")
    return answer.strip().lower() in YES


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C or SIGTERM while the question waits ends the wait (an answer of no); the
    run's own handlers (stop the worker at a safe point) are back afterwards."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    saved = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
