"""``phoned doctor``: check adb, its server and every attached device (``phoned.daemon.verbs.doctor_checks``)."""

from __future__ import annotations

import functools
import sys

import click
from phoned.daemon.verbs.common import config_option, json_option, load_config, user_errors
from phoned.daemon.verbs.context import adb_server


@click.command()
@click.option("--serial", default=None, help="Only this device (default: every device).")
@json_option("Print one JSON document.")
@config_option(
    "Config file for adb_host, adb_port and adb_path (default: the one every verb reads)."
)
@user_errors
def doctor(serial: str | None, as_json: bool, config_file: str | None) -> None:
    """Check adb (can this machine run it?), its server and every attached device; say
    what to do about problems and who holds each phone (the daemon driving it). An adb
    server doctor starts is stopped again."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.runtime.phone_hold import describe_holder
    from phoned.daemon.verbs.doctor_checks import run_doctor

    cfg = load_config(config_file)
    server = adb_server(cfg)
    holder = functools.partial(describe_holder, cfg)  # who holds each phone
    sys.exit(run_doctor(serial=serial, as_json=as_json, server=server, holder=holder))
