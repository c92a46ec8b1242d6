"""Control queries answered directly, never queued: ``context`` (the device planning
context) and ``classify`` (would this task be accepted, without executing anything)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click
from phoned.daemon.rendering.terminal import terminal_lines
from phoned.daemon.verbs.common import (
    EXIT_FAILURE,
    common_options,
    echo_json,
    load_config,
    now,
    opened_store,
    user_errors,
)

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.daemon.planning.classify import Classification
    from phoned.daemon.planning.context import PlanningContext
    from phoned.device.adb import AdbServer


def adb_server(cfg: Config) -> AdbServer:
    """The adb server the config names (``adb_host``, ``adb_port``, ``adb_path``)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.device.adb import AdbServer

    return AdbServer(cfg.adb_host, cfg.adb_port, adb_path=cfg.adb_path)


def _value_text(value: Any) -> str:
    if isinstance(value, frozenset | set):
        return ", ".join(sorted(value))
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in sorted(value.items()))
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def context_text(planning: PlanningContext) -> str:
    """The planning context as aligned lines: each value, its command and when it was read."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.rendering.render import iso

    ctx = planning.device
    lines = [f"device {ctx.serial}  (context at {iso(planning.at)})"]
    for name in type(ctx).__dataclass_fields__:
        if name == "serial":
            continue
        item = getattr(ctx, name)
        if item is None:
            lines.append(f"  {name:<18} (not observed)")
            continue
        stale = "  STALE" if name in planning.stale else ""
        lines.append(
            f"  {name:<18} {_value_text(item.value)}  [{item.source} at {iso(item.observed_at)}]"
            f"{stale}"
        )
    queue = ", ".join(f"{state} {n}" for state, n in planning.queue.items() if n)
    lines.append(f"  {'queue':<18} {queue or 'empty'}")
    return "\n".join(lines)


@click.command()
@click.option("--serial", default=None, help="Device serial (default: the only attached one).")
@click.option("--apps", is_flag=True, help="Also list the launchable apps.")
@common_options
@user_errors
def context(
    serial: str | None, apps: bool, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """The device planning context: model, SDK, battery, screen, foreground app and its
    label, DND, Bluetooth, volumes, default SMS app, supported methods, queue (with --apps
    the launchable apps); each value with when and by which command it was observed."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.planning.context import planning_context
    from phoned.daemon.planning.device_context import AdbContextProvider, context_json
    from phoned.device.connection import connect

    cfg = load_config(config_file, queue=queue)
    server = adb_server(cfg)
    serial = connect(serial, server).serial
    with opened_store(queue, config_file, create=True) as store:
        planning = planning_context(AdbContextProvider(server, apps=apps), store, serial, now())
    if as_json:
        echo_json(
            {
                "device": context_json(planning.device),
                "queue": planning.queue,
                "stale": list(planning.stale),
                "missing": list(planning.missing),
                "at": planning.at,
            }
        )
    else:
        click.echo(terminal_lines(context_text(planning), indent=""))


def classification_text(verdict: Classification, serial: str | None) -> str:
    """The verdict as lines: accepted, kind, methods, approval, support, refused fields."""
    lines = [
        f"accepted: {'yes' if verdict.accepted else 'no'}",
        f"kind: {verdict.kind}",
    ]
    if verdict.methods:
        lines.append(f"methods: {', '.join(verdict.methods)}")
        lines.append(f"needs approval: {'yes' if verdict.needs_approval else 'no'}")
    if verdict.supported is None:
        lines.append("supported: not checked (give --serial)")
    elif verdict.kind != "invalid":
        missing = f" (not: {', '.join(verdict.unsupported)})" if verdict.unsupported else ""
        lines.append(f"supported on {serial}: {'yes' if verdict.supported else 'no'}{missing}")
    lines += [f"error: {e['field']}: {e['message']}" for e in verdict.errors]
    return "\n".join(lines)


@click.command()
@click.argument("file")
@click.option("--serial", default=None, help="Also check support on this device's capabilities.")
@common_options
@user_errors
def classify(
    file: str, serial: str | None, queue: str | None, config_file: str | None, as_json: bool
) -> None:
    """Would the task in FILE ('-' = stdin) be accepted? Which method, needs approval,
    supported on --serial. Nothing is queued or executed. Exit 0 accepted, 1 refused."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.documents import read_document
    from phoned.daemon.planning.classify import classify_ingress
    from phoned.daemon.planning.device_context import supported_methods
    from phoned.device.connection import connect

    raw = read_document(file)
    capabilities = None
    if serial is not None:
        cfg = load_config(config_file, queue=queue)
        device = connect(serial, adb_server(cfg))
        capabilities = supported_methods(device.capabilities)
    verdict = classify_ingress(raw, capabilities)
    if as_json:
        echo_json({**asdict(verdict), "serial": serial})
    else:
        click.echo(terminal_lines(classification_text(verdict, serial), indent=""))
    if not verdict.accepted:
        raise SystemExit(EXIT_FAILURE)
