"""dumpsys battery layout per SDK (BatteryService.dumpInternal)."""

from __future__ import annotations

import pytest

from phoned.sim.android.battery import dumpsys_battery
from phoned.sim.phone import Phone
from phoned.sim.shell.registry import BufferSink, ToolIO


def dump(phone: Phone) -> str:
    out = BufferSink()
    assert dumpsys_battery(ToolIO(phone, out, BufferSink()), ["battery"]) == 0
    return out.data.decode()


def test_sdk34_layout_matches_aosp_order() -> None:
    phone = Phone(sdk=34)
    phone.battery.level = 42
    keys = [line.split(":")[0].strip() for line in dump(phone).splitlines()[1:]]
    assert keys == [
        "AC powered", "USB powered", "Wireless powered", "Dock powered",
        "Max charging current", "Max charging voltage", "Charge counter", "status", "health",
        "present", "level", "scale", "voltage", "temperature", "technology",
        "Charging state", "Charging policy",
    ]  # fmt: skip
    assert "  level: 42\n" in dump(phone)


@pytest.mark.parametrize(("sdk", "dock", "policy"), [(28, False, False), (33, True, False)])
def test_older_layouts(sdk: int, dock: bool, policy: bool) -> None:
    text = dump(Phone(sdk=sdk))
    assert text.startswith("Current Battery Service state:\n  AC powered: false\n")
    assert ("Dock powered" in text) is dock
    assert ("Charging policy" in text) is policy


def test_unplugged_discharging() -> None:
    phone = Phone(sdk=35)
    phone.battery.plugged = None
    text = dump(phone)
    assert "  USB powered: false\n" in text
    assert "  status: 3\n" in text
    assert text.endswith("  Capacity level: 3\n")
