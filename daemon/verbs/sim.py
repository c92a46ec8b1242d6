"""``phoned sim``: run one simulated phone in the foreground until SIGINT or SIGTERM."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from pathlib import Path

import click


@click.command()
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
    run_sim(port=port, sdk=int(sdk), scenario=scenario, log_path=log_path, connect=connect)


def run_sim(*, port: int, sdk: int, scenario: str, log_path: str | None, connect: bool) -> None:
    """Serve the phone on 127.0.0.1:port; with ``connect``, attach it to the adb server."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.device.errors import DeviceError
    from phoned.sim import scenarios
    from phoned.sim.server import Simulator

    simulator = Simulator(sdk=sdk, port=port, log_path=Path(log_path) if log_path else None)
    try:
        scenarios.apply(simulator.phone, scenario)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scenario") from exc
    try:
        simulator.start()
    except OSError as exc:
        click.echo(f"phoned: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}", err=True)
        sys.exit(1)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    ident = simulator.phone.props
    click.echo(
        f"phoned sim: {ident['ro.product.model']} (Android {ident['ro.build.version.release']}, "
        f"SDK {sdk}) listening on {simulator.serial}"
    )
    server = None
    if connect:
        # lazy: phoned --help start-up path (docs/structure.md, measured)
        from phoned.device.adb import AdbServer

        server = AdbServer()
        try:
            server.ensure_running()
            answer = server.client.connect(simulator.serial, timeout=10)
            click.echo(f"adb connect {simulator.serial}: {answer}")
        except (DeviceError, Exception) as exc:  # adbutils raises its own AdbError here
            click.echo(f"phoned: adb connect {simulator.serial} failed: {exc}", err=True)
    else:
        click.echo(f"attach it with: adb connect {simulator.serial}")
    sys.stdout.flush()
    stop.wait()
    if server is not None:
        # the adb server may be gone already; then there is nothing left to detach
        with contextlib.suppress(Exception):
            server.client.disconnect(simulator.serial)
    simulator.stop()
