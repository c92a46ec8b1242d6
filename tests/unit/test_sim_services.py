"""The simulated phone's services are declared once: ``registry.SIM_SERVICES``."""

from __future__ import annotations

import subprocess
import sys
import typing

from device.sim import phone as phone_module
from device.sim.phone import Phone
from device.sim.registry import SIM_SERVICES

_EVERY_TOOL = """
import importlib, pkgutil, sys
import device.sim.services, device.sim.ui
from device.sim import registry
if sys.argv[1] == "declared":
    registry.load_all()
else:
    for package in (device.sim.services, device.sim.ui):
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


def test_the_table_reaches_every_tool_the_simulator_has() -> None:
    assert _tables("declared") == _tables("every-module")


def test_each_service_is_made_as_its_declared_model_and_typed_on_phone() -> None:
    models = _models()
    hints = typing.get_type_hints(Phone, vars(phone_module) | models)
    typed = {name for name, hint in hints.items() if hint in models.values()}
    declared = {
        part.attr: models[part.model.rsplit(":", 1)[1]]
        for part in SIM_SERVICES
        if part.attr is not None and part.model is not None
    }
    assert typed == set(declared)
    made = Phone(sdk=34)
    for attr, model in declared.items():
        assert hints[attr] is model and type(getattr(made, attr)) is model


def test_importing_a_service_registers_no_sibling_by_side_effect() -> None:
    code = (
        "from device.sim import registry; import device.sim.services.audio, "
        "device.sim.services.sms, device.sim.services.packages; "
        "print(sorted(registry.TOOLS), sorted(registry.SERVICES['dumpsys']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'media'" not in out.stdout and "'content'" not in out.stdout
    assert "'package'" not in out.stdout  # dumpsys package is packages_dump's, named in the table


def _models() -> dict[str, type]:
    import importlib

    found: dict[str, type] = {}
    for part in SIM_SERVICES:
        if part.model is not None:
            module, _, name = part.model.partition(":")
            found[name] = getattr(importlib.import_module(module), name)
    return found
