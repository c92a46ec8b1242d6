"""Where a method's facts live (docs/methods-registry.md, "Where a fact lives"), checked.

A command or parser in ``device/commands.py`` / ``device/parsers.py`` that only one action
module uses belongs in that module, unless it is a tool's generic form (``GENERIC``, each
with why); a command or parser of an action module that code outside it uses belongs in
the shared modules. Code is every module of ``daemon``, ``device``, ``bench`` and
``scripts``; tests import from wherever a fact lives and do not count.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest
from phoned.device import commands, parsers
from phoned.device.actions.registry import METHOD_MODULES

REPO = Path(__file__).resolve().parents[2]
CODE = {
    path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8")
    for folder in ("daemon", "device", "sim", "android_data", "foundation", "bench", "scripts")
    for path in (REPO / folder).rglob("*.py")
}
METHOD_FILES = {f"device/methods/{m.__name__.rsplit('.', 1)[-1]}.py" for m in METHOD_MODULES}

# Shared although one method uses them today: the generic form of a tool's command or
# output, which the next method using that tool needs as is.
GENERIC = {
    "commands.settings_put": "settings put NAMESPACE KEY VALUE (beside settings_get)",
    "parsers.parse_colon_list": "a ':'-joined secure-settings list",
    "parsers.service_missing": "the service manager's 'Can't find service' for any service",
    "parsers.parse_content_rows": "content query rows of any projection",
    "parsers.content_query_error": "content query's errors, exit 0",
    "parsers.am_start_failed": "am start's 'Error:' lines, exit 0",
}


def _public(module: ModuleType) -> list[str]:
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (
            getattr(value, "__module__", None) == module.__name__
            or name in vars(module).get("__annotations__", {})
            or (name.isupper() and not inspect.ismodule(value))
        )
    ]


def _users(short: str, name: str, own: str) -> set[str]:
    """Files other than ``own`` that name ``short.name`` or import ``name`` from it."""
    attr = re.compile(rf"\b{short}\.{name}\b")
    imported = re.compile(rf"from device(?:\.actions)?\.{short} import [^\n]*\b{name}\b")
    return {
        f for f, text in CODE.items() if f != own and (attr.search(text) or imported.search(text))
    }


def _used_inside(module: ModuleType, name: str, own: str) -> bool:
    """Whether another definition of the shared module itself uses ``name``."""
    return len(re.findall(rf"(?<![\w.]){name}\b", CODE[own])) > 1


@pytest.mark.parametrize("module", [commands, parsers], ids=["commands", "parsers"])
def test_a_shared_fact_only_one_method_uses_moves_into_it(module: ModuleType) -> None:
    short = module.__name__.rsplit(".", 1)[-1]
    own = f"device/{short}.py"
    misplaced = {
        f"{short}.{name}": sorted(users)
        for name in _public(module)
        if f"{short}.{name}" not in GENERIC
        and len(users := _users(short, name, own)) == 1
        and users <= METHOD_FILES
        and not _used_inside(module, name, own)
    }
    assert not misplaced, (
        f"only one action module uses these: move each into it (its commands or parsers "
        f"section), or name it in GENERIC here with why it is a tool's generic form: {misplaced}"
    )


def _own_commands_and_parsers(module: ModuleType) -> list[str]:
    annotations = vars(module).get("__annotations__", {})
    names = [n for n, a in annotations.items() if a == "Argv"]
    for name, fn in vars(module).items():
        if not inspect.isfunction(fn) or fn.__module__ != module.__name__ or name.startswith("_"):
            continue
        first = next(iter(inspect.signature(fn).parameters.values()), None)
        if fn.__annotations__.get("return") == "Argv" or (
            first is not None and first.name == "text" and first.annotation == "str"
        ):
            names.append(name)
    return names


@pytest.mark.parametrize("module", METHOD_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_a_method_fact_other_code_uses_moves_to_the_shared_modules(module: ModuleType) -> None:
    short = module.__name__.rsplit(".", 1)[-1]
    own = f"device/methods/{short}.py"
    outside = {
        name: sorted(users)
        for name in _own_commands_and_parsers(module)
        if (users := _users(short, name, own))
    }
    assert not outside, (
        f"code outside {own} uses its commands or parsers: move them to device/commands.py "
        f"or device/parsers.py: {outside}"
    )


def test_uses_are_found_as_attribute_and_as_import() -> None:
    assert "device/methods/sms.py" in _users("commands", "sms_compose", "device/commands.py")
    assert "device/methods/wifi.py" in _users("parsers", "parse_settings_int", "device/parsers.py")
    assert "device/methods/sms_send.py" in _users("sms", "Sms", "device/methods/sms.py")
    assert _users("bluetooth", "bluetooth_set", "device/methods/bluetooth.py") == set()
