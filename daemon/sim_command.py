"""``phoned sim``: run one simulated phone in the foreground until SIGINT or SIGTERM."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from pathlib import Path

import click


def run_sim(*, port: int, sdk: int, scenario: str, log_path: str | None, connect: bool) -> None:
    """Serve the phone on 127.0.0.1:port; with ``connect``, attach it to the adb server."""
    from device.errors import DeviceError
    from device.sim import scenarios
    from device.sim.server import Simulator

    sim = Simulator(sdk=sdk, port=port, log_path=Path(log_path) if log_path else None)
    try:
        scenarios.apply(sim.phone, scenario)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scenario") from exc
    try:
        sim.start()
    except OSError as exc:
        click.echo(f"phoned: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}", err=True)
        sys.exit(1)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    ident = sim.phone.props
    click.echo(
        f"phoned sim: {ident['ro.product.model']} (Android {ident['ro.build.version.release']}, "
        f"SDK {sdk}) listening on {sim.serial}"
    )
    server = None
    if connect:
        from device.adb import AdbServer

        server = AdbServer()
        try:
            server.ensure_running()
            click.echo(f"adb connect {sim.serial}: {server.client.connect(sim.serial, timeout=10)}")
        except (DeviceError, Exception) as exc:  # adbutils raises its own AdbError here
            click.echo(f"phoned: adb connect {sim.serial} failed: {exc}", err=True)
    else:
        click.echo(f"attach it with: adb connect {sim.serial}")
    sys.stdout.flush()
    stop.wait()
    if server is not None:
        # the adb server may be gone already; then there is nothing left to detach
        with contextlib.suppress(Exception):
            server.client.disconnect(sim.serial)
    sim.stop()
