"""The ``phoned`` command line: this module only assembles the click group.

The verbs live in ``phoned.daemon.verbs`` (one module per group; each imports only ``click``
at module level, so ``phoned --help`` starts instantly). Exit codes: 0 success, 1 failure,
2 usage or configuration error (click's own usage errors are 2 as well); ``run --once``
adds 3 (no task), 4 (paused) and 5 (stopped). User errors are one clear line on stderr,
never a traceback. Every verb and exit code is documented in ``docs/cli.md``.

Every verb that takes TASK reads it as ``phoned.daemon.verbs.common.resolve_task`` does: the full
id, a unique prefix of at least 6 hex characters, or ``last``. Shell completion is
click's: ``_PHONED_COMPLETE=bash_source phoned`` (``zsh_source``, ``fish_source``) prints
the script (``docs/cli.md``, "Shell completion").
"""

from __future__ import annotations

import click

from phoned.daemon.verbs import context as context_commands
from phoned.daemon.verbs import decisions, doctor, events, lifecycle, methods, run, sim, status, tasks
from phoned.daemon.verbs import mcp as mcp_command
from phoned.daemon.verbs import prune as prune_command
from phoned.daemon.verbs import schedule as schedule_command
from phoned.daemon.verbs import serve as serve_command
from phoned.daemon.verbs.common import EXIT_USAGE, SentenceHelpGroup, accept_task_reference, fail

__all__ = ["EXIT_USAGE", "fail", "main"]


@click.group(cls=SentenceHelpGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="phoned", prog_name="phoned")
def main() -> None:
    """phoned: run structured tasks on an Android phone through ADB, with evidence."""


for _command in (
    sim.sim,
    doctor.doctor,
    status.status,
    run.run,
    tasks.submit,
    tasks.workflow,
    tasks.tasks,
    tasks.show,
    tasks.rerun,
    decisions.approve,
    decisions.deny,
    decisions.amend,
    decisions.cancel,
    lifecycle.pause,
    lifecycle.resume,
    accept_task_reference(lifecycle.revisions),
    accept_task_reference(lifecycle.wait),
    events.events,
    context_commands.context,
    context_commands.classify,
    serve_command.serve,
    methods.methods,
    mcp_command.mcp,
    prune_command.prune,
    schedule_command.schedule,
):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()
