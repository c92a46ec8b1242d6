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
import pkgutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from phoned.sim.shell import system_bin

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState


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

    phone: PhoneState
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


class ServiceModel(Protocol):
    """What a service's model is: made from the phone it belongs to."""

    def __init__(self, phone: PhoneState) -> None: ...


M = TypeVar("M", bound=ServiceModel)


class DumpingModel(ServiceModel, Protocol):
    """A service's model that prints its own ``dumpsys`` text."""

    def dump(self) -> str: ...


@dataclass(frozen=True)
class SimService(Generic[M]):
    """One part of the simulated phone with state of its own, declared once, in its module.

    A module of ``phoned.sim.android`` (or ``phoned.sim.ui``) that holds a model ends with
    ``SIM_SERVICE = SimService("wifi", WifiRadio)``: ``phone.Phone`` makes ``WifiRadio(phone)``
    when it is created and keeps it as ``phone.service(WifiRadio)`` (typed) and
    ``phone.wifi``. The module's ``@tool``/``@service`` functions fill the tables when
    ``load_all`` imports every module of both packages; nothing else lists them.
    """

    attr: str  # the Phone attribute: phone.wifi
    model: type[M]  # made as model(phone)

    def make(self, phone: PhoneState) -> M:
        """A new model of this service for ``phone``."""
        return self.model(phone)


# The packages whose modules hold the simulated phone's tools and services.
PACKAGES = ("phoned.sim.shell.tools", "phoned.sim.android", "phoned.sim.ui", "phoned.sim.variants")


T = TypeVar("T")


def package_modules(package_name: str) -> list[ModuleType]:
    """Every module of the package ``package_name``, imported by name in name order, so a
    table built from them is the same on every run."""
    package = importlib.import_module(package_name)
    return [
        importlib.import_module(f"{package_name}.{info.name}")
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name)
    ]


def declared(modules: Iterable[ModuleType], attr: str, kind: type[T]) -> list[T]:
    """The ``attr`` (``SIM_SERVICE``, ``VARIANT``) of each module that sets it, in module
    order; one of another type raises ``TypeError`` naming its module, so a mistaken
    declaration fails when the tables are built, not when a phone first uses it."""
    found = []
    for module in modules:
        value = getattr(module, attr, None)
        if value is None:
            continue
        if not isinstance(value, kind):
            raise TypeError(f"{module.__name__}.{attr} is {value!r}, not a {kind.__name__}")
        found.append(value)
    return found


def _modules() -> list[ModuleType]:
    """Every module of ``PACKAGES``, imported (by name, so the order is stable)."""
    return [module for name in PACKAGES for module in package_modules(name)]


def sim_services() -> list[SimService[Any]]:
    """Every declared ``SIM_SERVICE``, in module order."""
    load_all()
    return declared(_modules(), "SIM_SERVICE", SimService)


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


def dumpsys_of(model: type[DumpingModel]) -> Tool:
    """The ``dumpsys`` service printing the phone's ``model`` as its ``dump()`` says, read
    under the phone lock so the text shows one state of the phone."""

    def dumpsys(io: ToolIO, argv: list[str]) -> int:
        with io.phone.lock:
            io.out(io.phone.service(model).dump())
        return 0

    return dumpsys


def load_all() -> None:
    """Import every module of ``PACKAGES`` once so that their decorators fill the tables."""
    global _loaded
    with _load_lock:
        if _loaded:
            return
        _modules()
        _loaded = True


def find_tool(name: str, sdk: int | None = None) -> Tool | None:
    """The tool for ``name`` or ``/system/bin/name`` on a phone of ``sdk``; None when that
    phone has no such binary (``system_bin``: a shell utility exists only on the releases
    that ship it; one the simulator does not model answers as toybox does usage it lacks).
    Without ``sdk``: the registered tool, whatever the release."""
    load_all()
    if name.startswith("/"):
        name = name.rsplit("/", 1)[-1]
    if sdk is None:
        return TOOLS.get(name)
    shipped_by = system_bin.provider(sdk, name)
    if shipped_by is None and name in system_bin.ever_shipped():
        return None
    found = TOOLS.get(name)
    if found is None and shipped_by is not None:
        return unmodelled_tool
    return found


def unmodelled_tool(io: ToolIO, argv: list[str]) -> int:
    """A utility the release ships and the simulator does not model: every call is usage it
    does not support, answered as toybox answers an unknown option (``lib/args.c``
    ``help_exit("Unknown option '%s'")``; ``lib/lib.c`` ``verror_msg`` appends
    `` (see "NAME --help")``; exit 1)."""
    name = argv[0].rsplit("/", 1)[-1]
    first = argv[1] if len(argv) > 1 else ""
    io.err(f"{name}: Unknown option '{first}' (see \"{name} --help\")\n")
    return 1
