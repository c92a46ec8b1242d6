"""The tool API of the simulated phone, and the tables the shell dispatches through.

A *tool* is what a real phone has as a binary on ``$PATH`` (``settings``, ``getprop``,
``am``...). A *service* is what ``cmd NAME``, ``dumpsys NAME`` and ``svc NAME`` reach.
Both are plain functions ``(io, argv) -> exit code`` registered with a decorator::

    @tool("getprop")
    def getprop(io: ToolIO, argv: list[str]) -> int:
        io.out("...\\n")
        return 0

    @service("dumpsys", "battery")
    def dumpsys_battery(io: ToolIO, argv: list[str]) -> int: ...

For a tool ``argv[0]`` is the tool's name; for a service ``argv[0]`` is the service name
(``argv`` of ``cmd notification set_dnd on`` reaches the service as
``["notification", "set_dnd", "on"]``).

Output goes to ``io.stdout``/``io.stderr`` (``OutputSink``); the transport streams it to the
host, or the shell captures it for a pipe or a redirection. A long-running tool (the
uiautomator2 server started through ``app_process``) waits on ``io.cancelled``, which is set
when the host closes the stream or the transport drops.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from device.sim.phone import Phone


class OutputSink(Protocol):
    """Where a tool's output bytes go."""

    def write(self, data: bytes) -> None: ...


class BufferSink:
    """An ``OutputSink`` that keeps everything written to it."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data.extend(data)


@dataclass
class ToolIO:
    """What a running tool can see and use."""

    phone: Phone
    stdout: OutputSink
    stderr: OutputSink
    stdin: bytes = b""
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    cancelled: threading.Event = field(default_factory=threading.Event)

    def out(self, text: str) -> None:
        self.stdout.write(text.encode("utf-8"))

    def err(self, text: str) -> None:
        self.stderr.write(text.encode("utf-8"))


Tool = Callable[[ToolIO, list[str]], int]

TOOLS: dict[str, Tool] = {}
SERVICES: dict[str, dict[str, Tool]] = {"cmd": {}, "dumpsys": {}, "svc": {}}


@dataclass(frozen=True)
class SimService:
    """One part of the simulated phone, declared once, in ``SIM_SERVICES``.

    ``attr``: the ``Phone`` attribute that holds its model (None: tools without state of
    their own); ``model``: ``"module:Class"``, made as ``Class(phone)`` in table order;
    ``tools``: the modules whose ``@tool``/``@service`` functions read and change it,
    imported by ``load_all`` so their decorators fill the tables.
    """

    attr: str | None
    model: str | None
    tools: tuple[str, ...]

    def make(self, phone: Phone) -> object:
        """A new model of this service for ``phone``."""
        assert self.model is not None
        module, _, name = self.model.partition(":")
        return getattr(importlib.import_module(module), name)(phone)


_S = "device.sim.services."
# Every service of the simulated phone: adding one is its module(s) and one row here
# (and its typed attribute on ``Phone``, which tests/unit/test_sim_services.py checks).
SIM_SERVICES: tuple[SimService, ...] = (
    SimService(None, None, (_S + "base_tools", _S + "settings_tool")),
    SimService("packages", _S + "packages:PackageManager", (_S + "packages", _S + "packages_dump")),
    SimService("notification", _S + "notification:NotificationService", (_S + "notification",)),
    SimService("bluetooth", _S + "bluetooth:BluetoothAdapter", (_S + "bluetooth",)),
    SimService("audio", _S + "audio:AudioService", (_S + "audio", _S + "audio_cli")),
    SimService("sms", _S + "sms:SmsProvider", (_S + "sms", _S + "content_tool")),
    SimService("battery", _S + "battery:Battery", (_S + "battery",)),
    SimService("wifi", _S + "wifi:WifiRadio", (_S + "wifi",)),
    SimService("ui", "device.sim.ui.model:Ui", ("device.sim.ui.tools",)),
)

_loaded = False
_load_lock = threading.Lock()


def tool(*names: str) -> Callable[[Tool], Tool]:
    """Register a function as the tool for each of ``names`` (``/system/bin`` binaries)."""

    def register(fn: Tool) -> Tool:
        for name in names:
            TOOLS[name] = fn
        return fn

    return register


def service(kind: str, *names: str) -> Callable[[Tool], Tool]:
    """Register a function as ``cmd NAME`` / ``dumpsys NAME`` / ``svc NAME`` (``kind``)."""

    def register(fn: Tool) -> Tool:
        for name in names:
            SERVICES[kind][name] = fn
        return fn

    return register


def load_all() -> None:
    """Import every tool module once so that their decorators fill the tables."""
    global _loaded
    with _load_lock:
        if _loaded:
            return
        for part in SIM_SERVICES:
            for module in part.tools:
                importlib.import_module(module)
        _loaded = True


def find_tool(name: str) -> Tool | None:
    """The tool for ``name`` or ``/system/bin/name``; None when the phone has no such binary."""
    load_all()
    if name.startswith("/"):
        name = name.rsplit("/", 1)[-1]
    return TOOLS.get(name)
