"""Variants of the simulated phone: one module per manufacturer or app (``base.Variant``).

``variants()`` finds every module's ``VARIANT``; nothing lists them by hand.
"""

from __future__ import annotations

import importlib
import pkgutil

from phoned.sim.variants.base import Variant


def variants() -> list[Variant]:
    """Every declared ``VARIANT`` of this package, in module order."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        declared = getattr(module, "VARIANT", None)
        if declared is not None:
            if not isinstance(declared, Variant):
                raise TypeError(f"{module.__name__}.VARIANT is {declared!r}, not a Variant")
            found.append(declared)
    return found
