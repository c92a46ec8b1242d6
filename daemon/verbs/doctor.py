"""``phoned doctor``: check adb, its server and every attached device (``daemon.doctor``)."""

from __future__ import annotations

import sys

import click


@click.command()
@click.option("--serial", default=None, help="Only this device (default: every device).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def doctor(serial: str | None, as_json: bool) -> None:
    """Check adb, its server and every attached device; say what to do about problems."""
    from daemon.doctor import run_doctor

    sys.exit(run_doctor(serial=serial, as_json=as_json))
