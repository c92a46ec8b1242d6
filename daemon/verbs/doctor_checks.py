"""``phoned doctor``: is adb there and can this machine run it, does its server run, and what
is each device's state.

The adb binary is checked before it is run: it must exist, and its ELF header must name an
architecture this machine executes (the x86-64 adb adbutils ships cannot run on an arm64
Raspberry Pi, where exec() only says "No such file or directory"). An adb server doctor
had to start is stopped again before it returns: a check leaves nothing running.

Returns exit code 0 when at least one device is usable and nothing needs attention, 1 when
something does (an unusable adb, no device, an unauthorized or offline device, a failed
probe).
"""

from __future__ import annotations

import errno
import json
import os
import platform
import struct
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import click

from phoned.device.adb import ADB_INSTALL_HINT, AdbServer, bundled_adb_path
from phoned.device.connection import Device, list_devices
from phoned.device.errors import AdbServerError, DeviceError, DeviceUnauthorized

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

# ELF e_machine values (System V ABI, glibc elf.h) of the architectures adb is built for
ELF_MACHINES = {
    3: "x86 (32-bit)",
    8: "MIPS",
    20: "PowerPC",
    21: "PowerPC 64",
    22: "s390",
    40: "ARM (32-bit)",
    62: "x86-64",
    183: "arm64 (AArch64)",
    243: "RISC-V",
    258: "LoongArch",
}
# platform.machine() -> the e_machine values its kernel executes (64-bit kernels run their
# 32-bit siblings' binaries too, where the kernel was built with that support)
RUNS_ON = {
    "x86_64": {62, 3},
    "amd64": {62, 3},
    "i386": {3},
    "i686": {3},
    "aarch64": {183, 40},
    "arm64": {183, 40},
    "armv6l": {40},
    "armv7l": {40},
    "armv8l": {40},
    "riscv64": {243},
    "ppc64": {21},
    "ppc64le": {21},
    "s390x": {22},
    "loongarch64": {258},
}
_ELF_HEADER = 20  # e_ident (16 bytes), e_type (2), e_machine (2)


def elf_machine(path: str) -> int | None:
    """The ``e_machine`` field of the ELF file at ``path``; None when it is no ELF file (a
    wrapper script, say). Raises ``OSError`` when it cannot be read."""
    with open(path, "rb") as binary:
        head = binary.read(_ELF_HEADER)
    if len(head) < _ELF_HEADER or head[:4] != b"\x7fELF":
        return None
    order = ">" if head[5] == 2 else "<"  # EI_DATA: 1 little-endian, 2 big-endian
    machine: int = struct.unpack_from(order + "H", head, 18)[0]
    return machine


def binary_problem(path: str, machine: str | None = None) -> str:
    """Why this machine (``platform.machine()`` unless given) cannot run the adb at
    ``path``; "" when nothing is wrong as far as the file and its header tell."""
    machine = machine or platform.machine()
    if not os.path.isfile(path):
        return f"{path} does not exist"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable"
    try:
        built_for = elf_machine(path)
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    runs = RUNS_ON.get(machine.lower())
    if built_for is None or runs is None or built_for in runs:
        return ""
    name = ELF_MACHINES.get(built_for, f"ELF machine {built_for}")
    return f"{path} is built for {name}; this machine is {machine}"


def _exec_failed(exc: DeviceError) -> bool:
    """The adb binary could not be executed here (missing, or for another machine)."""
    cause = exc.__cause__
    return isinstance(cause, OSError) and cause.errno in (errno.ENOEXEC, errno.ENOENT)


@dataclass
class DeviceReport:
    """What doctor learned about one device."""

    serial: str
    state: str
    advice: str = ""
    identity: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    holder: str = ""  # who drives the phone ("held by daemon ..."), "" when nobody does

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


def _check_binary(server: AdbServer, adb: dict[str, Any]) -> None:
    """Fill ``adb`` with the binary's path and, when it cannot run here, error and advice."""
    try:
        adb["path"] = server.adb_path()
        problem = binary_problem(adb["path"])
    except AdbServerError as exc:  # adbutils found none that runs: say why its own does not
        adb["path"] = bundled_adb_path()
        problem = binary_problem(adb["path"]) or f"no adb runs here: {exc.__cause__ or exc}"
    if problem:
        adb["error"] = problem
        adb["advice"] = ADB_INSTALL_HINT


def _devices(server: AdbServer, serial: str | None, adb: dict[str, Any]) -> list[DeviceReport]:
    """Every device's report, from a server that answers (``adb`` gets its version)."""
    adb["server_version"] = server.version()
    states = list_devices(server)
    if serial is not None:
        states = {serial: states.get(serial, "not found")}
    return [_probe(server, s, st) for s, st in sorted(states.items())]


def collect(
    serial: str | None = None,
    server: AdbServer | None = None,
    holder: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Everything doctor checks, as one JSON-able document; ``holder(serial)`` says who
    drives each device (``phoned.daemon.runtime.phone_hold.describe_holder``).

    A server that does not run is started with the checked binary (never with one that
    cannot run here), and stopped again before returning: ``adb.started_by_doctor`` and
    ``adb.stopped`` say so.
    """
    server = server or AdbServer()
    adb: dict[str, Any] = {"port": server.port}
    result: dict[str, Any] = {"adb": adb, "devices": []}
    _check_binary(server, adb)
    adb["server_running"] = server.is_running()
    if not adb["server_running"] and "error" in adb:
        return result  # nothing to ask, and a binary that cannot run starts nothing
    started = False
    try:
        started = adb["started_by_doctor"] = server.ensure_running()
        reports = _devices(server, serial, adb)
    except DeviceError as exc:
        adb.setdefault("error", str(exc))
        if _exec_failed(exc):
            adb["advice"] = ADB_INSTALL_HINT
        return result
    finally:
        if started:
            adb["stopped"] = server.kill_server()
    for report in reports:
        report.holder = holder(report.serial) if holder and report.state == "device" else ""
    result["devices"] = [{**asdict(r), "healthy": r.healthy} for r in reports]
    return result


def _print_adb(adb: dict[str, Any]) -> None:
    if "error" in adb:
        click.echo(f"adb      FAIL  {adb['error']}")
        if adb.get("advice"):
            click.echo(f"           -> {adb['advice']}")
    else:
        click.echo(f"adb      ok    {adb['path']}")
    if "server_version" not in adb:
        return
    note = ""
    if adb.get("started_by_doctor"):
        note = ", started for this check and stopped again" if adb.get("stopped") else ""
        note = note or ", started for this check: FAILED to stop it again"
    click.echo(f"server   ok    port {adb['port']}, protocol version {adb['server_version']}{note}")


def _print_device(dev: dict[str, Any]) -> None:
    mark = "ok  " if dev["healthy"] else "FAIL"
    click.echo(f"device   {mark}  {dev['serial']}  {dev['state']}")
    if dev["advice"]:
        click.echo(f"           -> {dev['advice']}")
    if dev["error"]:
        click.echo(f"           -> probe failed: {dev['error']}")
    if dev["state"] == "device":
        click.echo(f"           {dev['holder'] or 'no daemon holds it'}")
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


def _print_text(result: dict[str, Any]) -> None:
    adb = result["adb"]
    _print_adb(adb)
    if "server_version" not in adb:
        return
    if not result["devices"]:
        click.echo(
            "devices  FAIL  none attached: plug in the phone with USB debugging on, "
            "or start `phoned sim --connect`"
        )
    for dev in result["devices"]:
        _print_device(dev)


def run_doctor(
    serial: str | None,
    as_json: bool,
    server: AdbServer | None = None,
    holder: Callable[[str], str] | None = None,
) -> int:
    """Print the report; return the exit code."""
    result = collect(serial, server, holder)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        _print_text(result)
    devices = result["devices"]
    healthy = "error" not in result["adb"] and bool(devices) and all(d["healthy"] for d in devices)
    return 0 if healthy else 1
