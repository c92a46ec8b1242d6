"""Xiaomi (MIUI / HyperOS): injected input refused until the owner allows it.

Without Developer options' "USB debugging (Security settings)", MIUI refuses every injected
input event from the shell: ``input tap|swipe|keyevent|text`` prints
``java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS
permission`` (Android 13+: "Injecting input events requires the caller ... INJECT_EVENTS
permission."), and uiautomator2's injected clicks do nothing (``docs/android-variants.md``
V40, V42; capture ``tests/fixtures/android/real/input-29-xiaomi-inject_denied.txt``, Xiaomi
M2006C3LI, Android 10). The shell's ``input`` (``ui/input_tools.py``) and the u2 server
(``ui/u2rpc.py``) read ``faults.inject_denied``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoned.sim.variants.base import Variant

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState


def _inject_denied(phone: PhoneState, _: str) -> None:
    """``inject-denied``: a Xiaomi phone whose owner has not allowed injected input."""
    VARIANT.set_props(phone)
    phone.faults.inject_denied = True


VARIANT = Variant(
    name="xiaomi",
    kind="manufacturer",
    summary="A Xiaomi phone (MIUI) without 'USB debugging (Security settings)'",
    sources=(
        "STFService.apk#144 (Xiaomi M2006C3LI, Android 10); scrcpy#3824 (MIUI 14, Android 13); "
        "KeyMapper#2034; uiautomator2#520 (Mi 8, MIUI 11)",
    ),
    props={"ro.product.manufacturer": "Xiaomi", "ro.product.brand": "Redmi"},
    scenarios={"inject-denied": _inject_denied},
)
