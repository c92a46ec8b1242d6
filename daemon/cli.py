"""The ``phoned`` command line. Imports stay lazy so ``phoned --help`` starts instantly.

The verbs live in ``daemon.commands`` (one module per group; each imports only ``click``
at module level). Exit codes: 0 success, 1 failure, 2 usage or configuration error
(click's own usage errors are 2 as well); ``run --once`` adds 3 (no task), 4 (paused)
and 5 (stopped). User errors are one clear line on stderr, never a traceback. Every
verb and exit code is documented in ``docs/cli.md``.
"""

from __future__ import annotations

import sys

import click

from daemon.commands import context as context_commands
from daemon.commands import decisions, events, methods, tasks
from daemon.commands import mcp as mcp_command
from daemon.commands import serve as serve_command
from daemon.commands.common import EXIT_USAGE, common_options, fail, load_config, user_errors

__all__ = ["EXIT_USAGE", "fail", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="phoned", prog_name="phoned")
def main() -> None:
    """phoned: run structured tasks on an Android phone through ADB, with evidence."""


@main.command()
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=7401,
    show_default=True,
    help="TCP port to listen on (keep it outside 5555-5585, which adb probes).",
)
@click.option(
    "--sdk",
    type=click.Choice(["28", "30", "33", "34", "35"]),
    default="34",
    show_default=True,
    help="Android SDK level to behave as.",
)
@click.option(
    "--scenario",
    default="",
    metavar="NAMES",
    help="Comma-separated faults and states, e.g. locked,no-bluetooth,slow:200.",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Append every executed command to this file as JSON lines.",
)
@click.option(
    "--connect/--no-connect",
    default=False,
    help="Run `adb connect` to the simulator once it listens.",
)
def sim(port: int, sdk: str, scenario: str, log_path: str | None, connect: bool) -> None:
    """Run a simulated Android phone (on 127.0.0.1) that the real adb server connects to."""
    from daemon.sim_command import run_sim

    run_sim(port=port, sdk=int(sdk), scenario=scenario, log_path=log_path, connect=connect)


@main.command()
@click.option("--serial", default=None, help="Only this device (default: every device).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def doctor(serial: str | None, as_json: bool) -> None:
    """Check adb, its server and every attached device; say what to do about problems."""
    from daemon.doctor import run_doctor

    sys.exit(run_doctor(serial=serial, as_json=as_json))


@main.command()
@click.option("--once", is_flag=True, help="Claim at most one task, run it, print its evidence.")
@click.option("--serial", default=None, help="Serve only this device.")
@click.option(
    "--wait",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0),
    metavar="SECONDS",
    help="With --once: how long to wait for a task (0 = do not wait).",
)
@click.option(
    "--task",
    "task_file",
    default=None,
    type=click.Path(dir_okay=False),
    help="With --once: submit this task file first and run it.",
)
@click.option(
    "--sim",
    "sim_sdk",
    is_flag=False,
    flag_value="34",
    default=None,
    type=click.Choice(["28", "30", "33", "34", "35"]),
    help="When no phone is attached, start a simulated one (SDK 34, or --sim=N) and serve it.",
)
@click.option("--poll-interval", type=float, default=None, help="Seconds between claims when idle.")
@click.option("--grace-period", type=float, default=None, help="SIGTERM: time to a safe point.")
@common_options
@user_errors
def run(
    once: bool,
    serial: str | None,
    wait: float,
    task_file: str | None,
    sim_sdk: str | None,
    poll_interval: float | None,
    grace_period: float | None,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Run the daemon: one worker per attached device (or --once: one task, then exit).

    --once exit codes: 0 completed, 1 failed, 2 usage/config error, 3 no task within
    the wait, 4 paused (waiting/approval/permission), 5 stopped.
    """
    cfg = load_config(
        config_file, queue=queue, poll_interval=poll_interval, grace_period=grace_period
    )
    from daemon.runtime.run import run_daemon

    sys.exit(
        run_daemon(
            cfg,
            once=once,
            serial=serial,
            wait=wait,
            task_file=task_file,
            as_json=as_json,
            sim_sdk=int(sim_sdk) if sim_sdk else None,
        )
    )


for _command in (
    tasks.submit,
    tasks.workflow,
    tasks.tasks,
    tasks.show,
    tasks.rerun,
    decisions.approve,
    decisions.deny,
    decisions.amend,
    decisions.cancel,
    events.events,
    context_commands.context,
    context_commands.classify,
    serve_command.serve,
    methods.methods,
    mcp_command.mcp,
):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()
