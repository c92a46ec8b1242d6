"""The exercise of issue #25: a method with a probe of its own is its module, its simulator
service and its tests; nothing else is edited.

This file holds all three (``lamp``: a probe ``cmd lamp help``, a read ``lamp.get``; the
simulated phone's ``cmd lamp``; the tests) and runs them through the real adb server and
the simulated phone. The capabilities mapping, the method's availability on a phone, the
device context's ``supported_methods`` line, the method's run and the docs' probe table
all pick the new probe up from the declaration. (``tests/unit/test_side_files.py`` does
the same for the generated side files with a module written to disk.)
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import pytest

from phoned.daemon.planning.device_context import DeviceReader, supported_methods
from phoned.daemon.verbs import side_files
from phoned.device import parsers, probes
from phoned.device.actions import registry
from phoned.device.actions.base import ActionContext, Outcome, Status
from phoned.device.actions.method import Method, fixed
from phoned.device.actions.params import NoParams
from phoned.device.actions.reads import got, read
from phoned.sim.shell import registry as sim_registry
from phoned.sim.shell.registry import ToolIO
from tests.scenarios.conftest import Dut

# ---- the method module: its probe and its declaration -----------------------------------

LAMP_HELP = ("cmd", "lamp", "help")
LAMP_GET = ("cmd", "lamp", "get")
LAMP = probes.Probe(
    "cmd_lamp",
    LAMP_HELP,
    lambda text, sdk: parsers.help_lists_command(text, "get"),
    "frameworks/base cmds/lamp/LampShellCommand.java (an imagined service; its help text)",
    "`cmd lamp get` exists",
)


def lamp_get(ctx: ActionContext, params: NoParams) -> Outcome:
    return got(ctx, read(ctx, "lamp", LAMP_GET, str.strip, "after"))


lamp = types.ModuleType("phoned.device.actions.lamp")
lamp.DECLARED = (  # type: ignore[attr-defined]
    Method(
        "lamp.get",
        NoParams,
        lamp_get,
        fixed("lamp.on"),
        probes=(LAMP,),
        needs=lambda caps: bool(caps[LAMP.name]),
        summary="Read the lamp.",
        reads="the lamp",
    ),
)

# ---- the simulator service: what the phone's ``cmd lamp`` prints ---------------------------


def cmd_lamp(io: ToolIO, argv: list[str]) -> int:
    """``cmd lamp help|get`` (``argv``: ``lamp`` and its arguments, as ``cmd`` passes them)."""
    if argv[1:2] == ["get"]:
        io.out("on\n")
    else:
        io.out("Lamp commands:\n  help\n    Print this help text.\n  get\n    Print on or off.\n")
    return 0


# ---- the tests ---------------------------------------------------------------------------


@pytest.fixture
def with_lamp(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Method[Any]]]:
    """The registry as it is with the lamp module among the action modules."""
    monkeypatch.setattr(probes, "_DECLARED", dict(probes._DECLARED))
    found = {**registry.REGISTRY, **registry.collect((lamp,))}
    monkeypatch.setattr(registry, "REGISTRY", found)
    monkeypatch.setattr(registry, "PROBES", registry.collect_probes(found))
    yield found


@pytest.fixture
def lamp_service(dut: Dut, monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulated phone with the lamp's service (``@service("cmd", "lamp")`` in its
    module), registered for this test only; a real phone has no lamp (skipped)."""
    assert dut.phone is not None  # skips on a real phone
    monkeypatch.setitem(sim_registry.SERVICES["cmd"], "lamp", cmd_lamp)


def test_a_phone_with_the_service_has_the_probe_and_the_method(
    dut: Dut, with_lamp: dict[str, Any], lamp_service: None
) -> None:
    caps = dut.device.capabilities
    assert caps["cmd_lamp"] is True and caps.to_json()["cmd_lamp"] is True
    assert "lamp.get" in supported_methods(caps)
    assert ("cmd", "lamp", "help") in dut.execs()


def test_a_phone_without_the_service_lacks_the_method(dut: Dut, with_lamp: dict[str, Any]) -> None:
    caps = dut.device.capabilities
    assert caps["cmd_lamp"] is False
    assert "lamp.get" not in supported_methods(caps)


def test_the_device_context_line_names_the_probe_command(
    dut: Dut, with_lamp: dict[str, Any], lamp_service: None
) -> None:
    seen = DeviceReader(dut.device, clock=lambda: 1.0).methods()
    assert seen.source == "cmd -l; cmd notification help; cmd lamp help"
    assert "lamp.get" in seen.value


def test_the_method_runs_on_the_phone(
    dut: Dut, with_lamp: dict[str, Any], lamp_service: None
) -> None:
    result = dut.run("lamp.get", {})
    assert result.status is Status.MET and result.value == "on"
    assert LAMP_GET in dut.execs()


def test_the_docs_table_lists_the_probe_and_its_method(with_lamp: dict[str, Any]) -> None:
    text = side_files.probes_table()
    assert "| `cmd_lamp` | `cmd lamp help` | `cmd lamp get` exists |" in text
    assert "LampShellCommand.java" in text and "lamp.get" in text


def test_without_the_module_nothing_knows_the_probe() -> None:
    assert "cmd_lamp" not in {p.name for p in probes.declared()}
    assert "cmd_lamp" not in {p.name for p in registry.PROBES}
    assert "lamp" not in sim_registry.SERVICES["cmd"]
