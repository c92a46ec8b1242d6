"""``phoned doctor``: is adb there, does its server run, and what is each device's state.

Returns exit code 0 when at least one device is usable and nothing needs attention, 1 when
something does (no device, an unauthorized or offline device, a failed probe).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import click

from device.adb import AdbServer
from device.connection import Device, list_devices
from device.errors import DeviceError, DeviceUnauthorized

ADVICE = {
    "unauthorized": DeviceUnauthorized.HINT,
    "offline": "the phone stopped answering: reconnect the cable (or `adb reconnect offline`) "
    "and check that USB debugging is still on",
    "authorizing": "wait a moment: adb is checking the phone's authorisation",
    "connecting": "wait a moment: adb is connecting to the phone",
    "recovery": "the phone is in recovery mode; reboot it into Android",
    "bootloader": "the phone is in the bootloader; reboot it into Android",
    "sideload": "the phone is in sideload mode; reboot it into Android",
    "no permissions": "this user cannot open the USB device: install the udev rule from "
    "systemd/ and add the user to plugdev",
}


@dataclass
class DeviceReport:
    """What doctor learned about one device."""

    serial: str
    state: str
    advice: str = ""
    identity: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    @property
    def healthy(self) -> bool:
        return self.state == "device" and not self.error


def _probe(server: AdbServer, serial: str, state: str) -> DeviceReport:
    report = DeviceReport(serial=serial, state=state, advice=ADVICE.get(state, ""))
    if state != "device":
        return report
    device = Device(serial, server)
    try:
        report.identity = device.identity.to_json()
        report.capabilities = device.capabilities.to_json()
    except DeviceError as exc:
        report.error = f"{type(exc).__name__}: {exc}"
    return report


def collect(serial: str | None = None) -> dict[str, Any]:
    """Everything doctor checks, as one JSON-able document."""
    server = AdbServer()
    result: dict[str, Any] = {"adb": {"port": server.port}, "devices": []}
    try:
        result["adb"]["path"] = server.adb_path()
        server.ensure_running()
        result["adb"]["server_version"] = server.version()
        states = list_devices(server)
    except DeviceError as exc:
        result["adb"]["error"] = str(exc)
        return result
    if serial is not None:
        states = {serial: states.get(serial, "not found")}
    reports = [_probe(server, s, st) for s, st in sorted(states.items())]
    result["devices"] = [{**asdict(r), "healthy": r.healthy} for r in reports]
    return result


def _print_text(result: dict[str, Any]) -> None:
    adb = result["adb"]
    if "error" in adb:
        click.echo(f"adb      FAIL  {adb['error']}")
        return
    click.echo(f"adb      ok    {adb['path']}")
    click.echo(f"server   ok    port {adb['port']}, protocol version {adb['server_version']}")
    if not result["devices"]:
        click.echo(
            "devices  FAIL  none attached: plug in the phone with USB debugging on, "
            "or start `phoned sim --connect`"
        )
    for dev in result["devices"]:
        mark = "ok  " if dev["healthy"] else "FAIL"
        click.echo(f"device   {mark}  {dev['serial']}  {dev['state']}")
        if dev["advice"]:
            click.echo(f"           -> {dev['advice']}")
        if dev["error"]:
            click.echo(f"           -> probe failed: {dev['error']}")
        ident = dev["identity"]
        if ident:
            click.echo(
                f"           {ident['manufacturer']} {ident['model']}, Android "
                f"{ident['release']} (SDK {ident['sdk']})"
            )
            click.echo(f"           {ident['fingerprint']}")
        caps = dev["capabilities"]
        if caps:
            flags = ", ".join(
                f"{k}={'yes' if v is True else 'no' if v is False else v}" for k, v in caps.items()
            )
            click.echo(f"           {flags}")


def run_doctor(serial: str | None, as_json: bool) -> int:
    """Print the report; return the exit code."""
    result = collect(serial)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        _print_text(result)
    devices = result["devices"]
    healthy = "error" not in result["adb"] and bool(devices) and all(d["healthy"] for d in devices)
    return 0 if healthy else 1
