"""Variants of the simulated phone: one module per manufacturer or app (``base.Variant``).

``variants()`` finds every module's ``VARIANT``; nothing lists them by hand.
"""

from __future__ import annotations

from phoned.sim.shell.registry import declared, package_modules
from phoned.sim.variants.base import Variant


def variants() -> list[Variant]:
    """Every declared ``VARIANT`` of this package, in module order."""
    return declared(package_modules(__name__), "VARIANT", Variant)
