"""Capability probes as declarations: what a phone's shell can do, asked once per connection.

A ``Probe`` is a named record: the read-only argv it runs (``None``: the transport's
``features``, a host service, not a shell command), the pure parser of that output, and
the real source of the output's format. The probes every phone gets are ``CORE`` below; a
method whose run or ``needs`` reads a probe of its own declares it on its ``Method``
(``probes=``), and the registry collects it (``declare``), as it collects methods.

``Capabilities`` is the mapping from probe name to result, with the probes that ran in the
order they ran; ``phoned.device.connection.Device.capabilities`` runs every declared probe once
(a command two probes share runs once) and caches the results. The daemon's device
context names the commands that ran (``sources()``), and ``docs/device-layer.md`` holds
``table()`` of the registry's probes, checked by a test.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from phoned.device import commands, parsers
from phoned.device.adb import ShellResult

Argv = tuple[str, ...]


@dataclass(frozen=True)
class Probe:
    """One capability question: its command, its parser, and where the format comes from."""

    name: str  # the key in ``Capabilities`` and its JSON (``set_dnd``)
    argv: Argv | None  # the read-only command; None: the adb transport's ``features`` reply
    parse: Callable[[str, int], Any]  # (the command's output, the phone's SDK) -> result
    source: str  # the real source of the output's format (AOSP path, or adb's)
    says: str  # one line: what the result means
    stderr: bool = False  # parse stdout and stderr (a help text some releases print there)

    @property
    def command(self) -> str:
        """The command as a reader sees it (``cmd -l``; ``adb features`` for the transport)."""
        return shlex.join(self.argv) if self.argv is not None else "adb features"


class ProbeTarget(Protocol):
    """What running probes needs of a phone (``phoned.device.connection.Device`` is one)."""

    @property
    def features(self) -> frozenset[str]: ...

    @property
    def sdk(self) -> int: ...

    def read(self, argv: Argv) -> ShellResult: ...


class Capabilities(Mapping[str, Any]):
    """Probe name -> result, with the probes that ran (in the order they ran)."""

    def __init__(self, results: Mapping[str, Any], ran: Iterable[Probe] = ()) -> None:
        self._results = dict(results)
        self.ran: tuple[Probe, ...] = tuple(ran)

    def __getitem__(self, name: str) -> Any:
        return self._results[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    def __getattr__(self, name: str) -> Any:
        """A result read as an attribute (``caps.set_dnd``), as the struct it replaced had."""
        if name.startswith("_") or name not in self._results:
            raise AttributeError(name)
        return self._results[name]

    def __repr__(self) -> str:
        return f"Capabilities({self._results!r})"

    def sources(self) -> str:
        """The shell commands that ran, each once, in order (``cmd -l; cmd notification help``)."""
        seen = dict.fromkeys(p.command for p in self.ran if p.argv is not None)
        return "; ".join(seen)

    def to_json(self) -> dict[str, Any]:
        """Each result; a set (the service list) as its size."""
        return {k: len(v) if isinstance(v, frozenset) else v for k, v in self._results.items()}


def run(
    target: ProbeTarget, probes: Iterable[Probe], known: Capabilities | None = None
) -> Capabilities:
    """``known`` extended with every probe of ``probes`` it lacks; each command runs once."""
    results = dict(known or {})
    ran = list(known.ran if known is not None else ())
    outputs: dict[Argv | None, str] = {}
    for probe in probes:
        if probe.name in results:
            continue
        key = probe.argv
        if key not in outputs:
            outputs[key] = _output(target, probe)
        results[probe.name] = probe.parse(outputs[key], target.sdk)
        ran.append(probe)
    return Capabilities(results, ran)


def _output(target: ProbeTarget, probe: Probe) -> str:
    if probe.argv is None:
        return ",".join(sorted(target.features))
    result = target.read(probe.argv)
    return result.stdout + result.stderr if probe.stderr else result.stdout


# ---- the probes every phone gets -------------------------------------------------------


def _services(text: str, sdk: int) -> frozenset[str]:
    return parsers.parse_service_list(text)


SHELL_V2 = Probe(
    "shell_v2",
    None,
    lambda text, sdk: "shell_v2" in parsers.parse_features(text),
    "packages/modules/adb transport.cpp (the comma list of features, API 24+)",
    "the transport speaks shell v2 (separate stderr, exit codes); else shell v1",
)
SERVICES = Probe(
    "services",
    commands.CMD_LIST_SERVICES,
    _services,
    "frameworks/native cmds/cmd/cmd.cpp (`Currently running services:`, one indented name "
    "a line); a service without hardware is absent (SystemServer.startOtherServices)",
    "the running system services (`wifi`, `audio`, `bluetooth_manager`, ...)",
)


def service_running(name: str) -> Callable[[Capabilities], bool]:
    """A method's ``needs``: the phone runs the system service ``name`` (``SERVICES``)."""

    def needs(capabilities: Capabilities) -> bool:
        return name in capabilities[SERVICES.name]

    return needs


SET_DND = Probe(
    "set_dnd",
    commands.NOTIFICATION_HELP,
    lambda text, sdk: parsers.help_lists_command(text, "set_dnd"),
    "frameworks/base services/core/java/com/android/server/notification/"
    "NotificationShellCmd.java (lists `set_dnd` from API 29)",
    "`cmd notification set_dnd` exists (API 29+)",
    stderr=True,
)


def _cmd_service(service: str, since: int, source: str, says: str) -> Probe:
    """``cmd_SERVICE``: the service is in ``cmd -l`` and the phone's SDK is at least
    ``since``, the release whose shell command for it we send (the service itself is older)."""
    return Probe(
        f"cmd_{service}",
        commands.CMD_LIST_SERVICES,
        lambda text, sdk: service in parsers.parse_service_list(text) and sdk >= since,
        source,
        says,
    )


CMD_BLUETOOTH_MANAGER = _cmd_service(
    "bluetooth_manager",
    33,
    "packages/modules/Bluetooth BluetoothShellCommand (API 33+); frameworks/native "
    "cmds/cmd/cmd.cpp",
    "`cmd bluetooth_manager enable` and `disable` exist (API 33+)",
)
CMD_MEDIA_SESSION = _cmd_service(
    "media_session",
    30,
    "frameworks/base services/core/java/com/android/server/media/VolumeCtrl.java (API 30+); "
    "frameworks/native cmds/cmd/cmd.cpp",
    "`cmd media_session volume` exists (API 30+)",
)

CORE: tuple[Probe, ...] = (SHELL_V2, SERVICES, SET_DND, CMD_BLUETOOTH_MANAGER, CMD_MEDIA_SESSION)

_DECLARED: dict[str, Probe] = {p.name: p for p in CORE}


def declare(probes: Iterable[Probe]) -> None:
    """Add the probes a method declares (the registry calls this as it collects methods);
    one name always means one probe."""
    for probe in probes:
        held = _DECLARED.setdefault(probe.name, probe)
        if held is not probe:
            raise ValueError(f"probe {probe.name} is declared twice")


def declared() -> tuple[Probe, ...]:
    """Every probe a ``Device`` runs: ``CORE``, then those the methods declared."""
    return tuple(_DECLARED.values())


def table(probes: Iterable[Probe], declared_by: Mapping[str, Sequence[str]] | None = None) -> str:
    """The Markdown table of ``probes`` (``docs/device-layer.md`` holds the registry's), with
    the methods that declare each one when ``declared_by`` (probe name -> methods) is given."""
    users = declared_by or {}
    rows = ["| probe | command | result | declared by | source |", "|---|---|---|---|---|"]
    rows += [
        f"| `{p.name}` | `{p.command}` | {p.says} | "
        f"{', '.join(f'`{m}`' for m in users.get(p.name, ())) or 'every phone'} | {p.source} |"
        for p in probes
    ]
    return "\n".join(rows) + "\n"
