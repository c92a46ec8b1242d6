"""The simulated phone's services are declared once, each in its own module
(``SIM_SERVICE = SimService(...)``), and found by ``registry.sim_services``."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest

from phoned.sim import phone as phone_module
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import sim_services

_EVERY_TOOL = """
import importlib, pkgutil, sys
import phoned.sim.shell.tools, phoned.sim.android, phoned.sim.ui, phoned.sim.variants
from phoned.sim.shell import registry
if sys.argv[1] == "declared":
    registry.load_all()
else:
    for package in (phoned.sim.shell.tools, phoned.sim.android, phoned.sim.ui, phoned.sim.variants):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            importlib.import_module(info.name)
tools = sorted((n, f.__module__) for n, f in registry.TOOLS.items())
services = sorted((k, n, f.__module__) for k, t in registry.SERVICES.items() for n, f in t.items())
print(tools, services)
"""


def _tables(how: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", _EVERY_TOOL, how], capture_output=True, text=True, check=True
    ).stdout


def test_load_all_reaches_every_tool_the_simulator_has() -> None:
    assert _tables("declared") == _tables("every-module")


def test_each_service_is_made_as_its_declared_model_and_typed_on_phone() -> None:
    declared = {part.attr: part.model for part in sim_services()}
    assert {"packages", "notification", "bluetooth", "audio", "sms", "wifi", "ui"} <= set(declared)
    hints = typing.get_type_hints(
        Phone, vars(phone_module) | {m.__name__: m for m in declared.values()}
    )
    typed = {name: hint for name, hint in hints.items() if hint in declared.values()}
    assert {name: declared[name] for name in typed} == typed, "a Phone shorthand of another type"
    made = Phone(sdk=34)
    for attr, model in declared.items():
        assert type(getattr(made, attr)) is model
        assert made.service(model) is getattr(made, attr)


def test_a_model_no_module_declares_is_a_key_error_saying_what_to_add() -> None:
    class Unregistered:
        pass

    with pytest.raises(KeyError, match="SIM_SERVICE = SimService"):
        Phone(sdk=34).service(Unregistered)


def test_a_declared_service_is_found_without_being_listed(tmp_path: Path) -> None:
    """A new module in sim/android with a SIM_SERVICE is made by every Phone."""
    code = (
        "import sys, phoned.sim.android as s; s.__path__.append(sys.argv[1]); "
        "from phoned.sim.phone import Phone; import phoned.sim.android.lamp as lamp; "
        "p = Phone(sdk=34); print(type(p.service(lamp.Lamp)).__name__, p.lamp.phone is p)"
    )
    (tmp_path / "lamp.py").write_text(
        "from phoned.sim.shell.registry import SimService\n"
        "class Lamp:\n    def __init__(self, phone):\n        self.phone = phone\n"
        "SIM_SERVICE = SimService('lamp', Lamp)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["Lamp", "True"]


def test_importing_a_service_registers_no_sibling_by_side_effect() -> None:
    code = (
        "from phoned.sim.shell import registry; import phoned.sim.android.audio, "
        "phoned.sim.android.sms, phoned.sim.android.packages; "
        "print(sorted(registry.TOOLS), sorted(registry.SERVICES['dumpsys']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'media'" not in out.stdout and "'content'" not in out.stdout
    assert "'package'" not in out.stdout  # dumpsys package is packages_dump's, named in the table
