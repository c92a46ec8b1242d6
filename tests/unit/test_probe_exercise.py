"""The exercise of issue #25: a method with a probe of its own touches one module.

This file is that module (``lamp``: its probe, its method), the phone's service that
answers the probe's command, and the tests. Nothing else is edited: the capabilities
mapping, the method's availability, the device context's ``supported_methods`` line and
the docs' probe table all pick the new probe up from the declaration.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any

import pytest

from daemon.planning.device_context import DeviceReader, supported_methods
from device import parsers, probes
from device.actions import registry
from device.actions.base import ActionContext, Outcome
from device.actions.method import Method, fixed
from device.actions.params import NoParams
from device.actions.reads import got
from device.adb import ShellResult
from device.connection import Device

# ---- the method module: its probe and its declaration -----------------------------------

LAMP_HELP = ("cmd", "lamp", "help")
LAMP = probes.Probe(
    "cmd_lamp",
    LAMP_HELP,
    lambda text, sdk: parsers.help_lists_command(text, "toggle"),
    "frameworks/base cmds/lamp/LampShellCommand.java (an imagined service; its help text)",
    "`cmd lamp toggle` exists",
)


def toggle(ctx: ActionContext, params: NoParams) -> Outcome:
    return got(ctx, "toggled")


lamp = types.ModuleType("device.actions.lamp")
lamp.DECLARED = (  # type: ignore[attr-defined]
    Method(
        "lamp.toggle",
        NoParams,
        toggle,
        fixed("lamp.toggled"),
        probes=(LAMP,),
        needs=lambda caps: bool(caps[LAMP.name]),
    ),
)

# ---- the phone's service: what it prints for the probes' commands -----------------------


class Phone(Device):
    """A phone whose shell answers the probe commands (the simulator service's part)."""

    def __init__(self, has_lamp: bool) -> None:
        super().__init__("LAMP-1", server=None)  # type: ignore[arg-type]
        self.has_lamp = has_lamp

    @property
    def features(self) -> frozenset[str]:
        return frozenset({"shell_v2", "cmd"})

    @property
    def sdk(self) -> int:
        return 34

    def read(self, argv: Sequence[str], timeout: float = 10.0, attempts: int = 3) -> ShellResult:
        out = {
            ("cmd", "-l"): "Currently running services:\n  audio\n  wifi\n",
            ("cmd", "notification", "help"): "commands:\n  set_dnd [on|off]\n",
            LAMP_HELP: "Lamp commands:\n  toggle\n" if self.has_lamp else "",
        }[tuple(argv)]
        return ShellResult(" ".join(argv), out.encode(), b"", 0, 0.001)


# ---- the tests ---------------------------------------------------------------------------


@pytest.fixture
def with_lamp(monkeypatch: pytest.MonkeyPatch) -> dict[str, Method[Any]]:
    """The registry as it is with the lamp module among the action modules."""
    monkeypatch.setattr(probes, "_DECLARED", dict(probes._DECLARED))
    found = {**registry.REGISTRY, **registry.collect((lamp,))}
    monkeypatch.setattr(registry, "REGISTRY", found)
    return found


def test_the_capabilities_mapping_holds_the_new_probe(with_lamp: dict[str, Any]) -> None:
    caps = Phone(has_lamp=True).capabilities
    assert caps["cmd_lamp"] is True and caps.to_json()["cmd_lamp"] is True
    assert Phone(has_lamp=False).capabilities["cmd_lamp"] is False


def test_the_method_is_available_where_the_probe_says_so(with_lamp: dict[str, Any]) -> None:
    assert "lamp.toggle" in supported_methods(Phone(has_lamp=True).capabilities)
    assert "lamp.toggle" not in supported_methods(Phone(has_lamp=False).capabilities)


def test_the_device_context_line_names_the_probe_command(with_lamp: dict[str, Any]) -> None:
    seen = DeviceReader(Phone(has_lamp=True), clock=lambda: 1.0).methods()
    assert seen.source == "cmd -l; cmd notification help; cmd lamp help"
    assert "lamp.toggle" in seen.value


def test_the_docs_table_lists_the_probe(with_lamp: dict[str, Method[Any]]) -> None:
    text = probes.table(registry.collect_probes(with_lamp))
    assert "| `cmd_lamp` | `cmd lamp help` | `cmd lamp toggle` exists |" in text
    assert "LampShellCommand.java" in text


def test_without_the_module_nothing_knows_the_probe() -> None:
    assert "cmd_lamp" not in {p.name for p in probes.declared()}
    assert "cmd_lamp" not in {p.name for p in registry.PROBES}
