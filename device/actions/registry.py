"""The method registry: every ``Method`` the method modules declare, and the tables built
from it (``docs/methods-registry.md``).

The method modules are found, not listed: every module of the ``phoned.device.methods`` package
that ends with a ``DECLARED`` tuple is one (``METHOD_MODULES``, in module-name order).
Importing this module imports every method module (and pydantic): callers on the
``phoned --help`` path import it inside functions, never at module level.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from phoned.device import probes
from phoned.device.actions.method import Method
from phoned.device.probes import Probe
from pydantic import BaseModel

METHODS_PACKAGE = "phoned.device.methods"


def _method_modules() -> tuple[ModuleType, ...]:
    """Every module of ``METHODS_PACKAGE`` with a ``DECLARED`` tuple, by module name (the
    package's ``__path__``: a folder appended there is searched too). Found by name, as its
    modules are: the framework depends on no method (``lint-imports``)."""
    methods = importlib.import_module(METHODS_PACKAGE)
    found = []
    for info in sorted(pkgutil.iter_modules(methods.__path__), key=lambda i: i.name):
        if info.ispkg:
            continue
        module = importlib.import_module(f"{methods.__name__}.{info.name}")
        if hasattr(module, "DECLARED"):
            found.append(module)
    return tuple(found)


def collect(modules: tuple[ModuleType, ...]) -> dict[str, Method[Any]]:
    """The declarations of ``modules`` by name (a duplicated name raises); their probes are
    declared to ``phoned.device.probes``, so every ``Device`` runs them."""
    registry: dict[str, Method[Any]] = {}
    for module in modules:
        for declared in module.DECLARED:
            if not isinstance(declared, Method):
                raise TypeError(f"{module.__name__}.DECLARED holds {declared!r}, not a Method")
            if declared.name in registry:
                raise ValueError(f"method {declared.name} is declared twice")
            registry[declared.name] = declared
    probes.declare(p for m in registry.values() for p in m.probes)
    return registry


def collect_probes(registry: dict[str, Method[Any]]) -> tuple[Probe, ...]:
    """``probes.CORE``, then every probe the methods of ``registry`` declare, each once."""
    found = {p.name: p for p in probes.CORE}
    for declared in registry.values():
        found.update((p.name, p) for p in declared.probes)
    return tuple(found.values())


METHOD_MODULES: tuple[ModuleType, ...] = _method_modules()
REGISTRY: dict[str, Method[Any]] = collect(METHOD_MODULES)

METHOD_PARAMS: dict[str, type[BaseModel]] = {n: m.params for n, m in REGISTRY.items()}
APPROVAL_METHODS: frozenset[str] = frozenset(n for n, m in REGISTRY.items() if m.approval)
NON_IDEMPOTENT: frozenset[str] = frozenset(n for n, m in REGISTRY.items() if not m.idempotent)
SCREEN_METHODS: frozenset[str] = frozenset(n for n, m in REGISTRY.items() if m.screen)
PROBES: tuple[Probe, ...] = collect_probes(REGISTRY)


def method(name: str) -> Method[Any]:
    """The declaration of ``name``; ``ValueError`` naming the known ones for any other."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(f"unknown method {name!r}; supported: {known}") from None


def task_secrets(method: str, params: Mapping[str, Any]) -> list[str]:
    """The values of a task's sensitive params (its method's declaration names them: the
    number and the body of ``sms.*``); none for a method the registry does not know."""
    declared = REGISTRY.get(method)
    names = declared.sensitive if declared is not None else ()
    return [str(params[k]) for k in names if params.get(k)]
