"""The ``phoned`` command line. Imports stay lazy so ``phoned --help`` starts instantly.

Exit codes: 0 success, 1 failure, 2 usage or configuration error (click's own usage errors
are 2 as well). User errors are one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

EXIT_USAGE = 2


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one clear line to stderr and exit with ``code``."""
    click.echo(f"phoned: {message}", err=True)
    sys.exit(code)


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


if __name__ == "__main__":  # pragma: no cover
    main()
