"""The method registry: every ``Method`` the action modules declare, and the tables built
from it (``docs/methods-registry.md``).

Importing this module imports every action module (and pydantic): callers on the
``phoned --help`` path import it inside functions, never at module level.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from device.actions import bluetooth, dnd, permission, screen, sms, sms_send, volume, wifi
from device.actions.method import Method

_MODULES = (dnd, bluetooth, volume, wifi, sms, sms_send, permission, screen)


def _collect() -> dict[str, Method[Any]]:
    registry: dict[str, Method[Any]] = {}
    for module in _MODULES:
        for declared in module.DECLARED:
            if declared.name in registry:
                raise ValueError(f"method {declared.name} is declared twice")
            registry[declared.name] = declared
    return registry


REGISTRY: dict[str, Method[Any]] = _collect()

METHOD_PARAMS: dict[str, type[BaseModel]] = {n: m.params for n, m in REGISTRY.items()}
APPROVAL_METHODS: frozenset[str] = frozenset(n for n, m in REGISTRY.items() if m.approval)
NON_IDEMPOTENT: frozenset[str] = frozenset(n for n, m in REGISTRY.items() if not m.idempotent)
SCREEN_METHODS: frozenset[str] = frozenset(n for n, m in REGISTRY.items() if m.screen)


def method(name: str) -> Method[Any]:
    """The declaration of ``name``; ``ValueError`` naming the known ones for any other."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(f"unknown method {name!r}; supported: {known}") from None
