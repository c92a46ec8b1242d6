"""``phoned run``: the daemon, or ``--once`` (one task, then exit); see ``phoned.daemon.runtime.run``."""

from __future__ import annotations

import sys

import click
from phoned.daemon.verbs.common import common_options, load_config, user_errors


@click.command()
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
@click.option(
    "--sim-port",
    type=click.IntRange(1, 65535),
    default=None,
    metavar="PORT",
    help="With --sim: the simulated phone listens on 127.0.0.1:PORT, the same address every "
    "run, and stays up while a task pinned to it is unfinished (a paused --once).",
)
@click.option(
    "--sim-scenario",
    default="",
    metavar="NAMES",
    help="With --sim: the simulated phone's faults and starting state, as `phoned sim "
    "--scenario` takes them (e.g. 'contact:Ivan Petrov=+79160000001:mobile').",
)
@click.option(
    "--no-prompt",
    is_flag=True,
    help="With --once at a terminal: do not ask for a pending approval inline; exit 4.",
)
@click.option(
    "--metrics",
    "metrics_listen",
    default=None,
    metavar="ADDR",
    help="Serve Prometheus /metrics on ADDR (127.0.0.1:PORT, :PORT or PORT: loopback; "
    "config metrics.listen; off by default). docs/deploy.md, Metrics.",
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
    sim_port: int | None,
    sim_scenario: str,
    no_prompt: bool,
    metrics_listen: str | None,
    poll_interval: float | None,
    grace_period: float | None,
    queue: str | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Run the daemon: one worker per attached device (or --once: one task, then exit).

    --once exit codes: 0 completed, 1 failed, 2 usage/config error, 3 no task within
    the wait, 4 paused (waiting/approval/permission), 5 stopped. At a terminal (stdin and
    stdout), --once shows a pending approval's preview and asks "Approve? [y/N]"; yes
    approves it as `phoned approve` would and runs the task on (not with --json or
    --no-prompt).
    """
    if sim_port is not None and sim_sdk is None:
        raise click.UsageError("--sim-port needs --sim", ctx=click.get_current_context())
    if sim_scenario and sim_sdk is None:
        raise click.UsageError("--sim-scenario needs --sim", ctx=click.get_current_context())
    if sim_scenario:
        # lazy: phoned --help start-up path (docs/structure.md, measured)
        from phoned.daemon.runtime.sim_phone import check_scenario

        try:
            check_scenario(int(sim_sdk or "34"), sim_scenario)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--sim-scenario") from exc
    metrics = None if metrics_listen is None else {"listen": metrics_listen}
    cfg = load_config(
        config_file,
        queue=queue,
        poll_interval=poll_interval,
        grace_period=grace_period,
        metrics=metrics,
    )
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.runtime.approval_prompt import at_a_terminal
    from phoned.daemon.runtime.run import run_daemon

    sys.exit(
        run_daemon(
            cfg,
            once=once,
            serial=serial,
            wait=wait,
            task_file=task_file,
            as_json=as_json,
            sim_sdk=int(sim_sdk) if sim_sdk else None,
            sim_port=sim_port,
            sim_scenario=sim_scenario,
            prompt=once and not no_prompt and not as_json and at_a_terminal(),
            queue=queue,
        )
    )
