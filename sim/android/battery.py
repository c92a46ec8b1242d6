"""Battery model; ``dumpsys battery``.

Layout: ``BatteryService.dumpInternal`` (frameworks/base/services/core/java/com/android/server/
BatteryService.java). ``Dock powered`` appears from Android 13, ``Charging state`` and
``Charging policy`` from Android 14 (AOSP revision find_string id 81845376), ``Capacity level``
on Android 15 (captured Pixel 8 Pro dump, find_string id 70078956166). Status and health are
the BatteryManager integers (status 2 = charging, 3 = discharging; health 2 = good).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoned.sim.shell.registry import SimService, dumpsys_of, service

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

STATUS_CHARGING = 2  # BatteryManager.BATTERY_STATUS_CHARGING
STATUS_DISCHARGING = 3  # BatteryManager.BATTERY_STATUS_DISCHARGING
HEALTH_GOOD = 2  # BatteryManager.BATTERY_HEALTH_GOOD


class Battery:
    """Charge level and charger; ``plugged`` is ``"usb"``, ``"ac"``, ``"wireless"`` or None."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self.level = 85
        self.plugged: str | None = "usb"
        self.voltage_mv = 4312
        self.temperature_dc = 290  # tenths of a degree Celsius
        self.charge_counter_uah = 3977000

    @property
    def status(self) -> int:
        """BATTERY_STATUS_*: charging while plugged and below full, else discharging."""
        if self.plugged is not None:
            return 5 if self.level >= 100 else STATUS_CHARGING  # 5 = BATTERY_STATUS_FULL
        return STATUS_DISCHARGING

    def dump(self) -> str:
        """``dumpsys battery`` for this phone's SDK."""
        sdk = self.phone.sdk
        usb = self.plugged == "usb"
        lines = [
            "Current Battery Service state:",
            f"  AC powered: {_b(self.plugged == 'ac')}",
            f"  USB powered: {_b(usb)}",
            f"  Wireless powered: {_b(self.plugged == 'wireless')}",
        ]
        if sdk >= 33:
            lines.append("  Dock powered: false")
        lines += [
            f"  Max charging current: {500000 if usb else 0}",
            f"  Max charging voltage: {5000000 if usb else 0}",
            f"  Charge counter: {self.charge_counter_uah}",
            f"  status: {self.status}",
            f"  health: {HEALTH_GOOD}",
            "  present: true",
            f"  level: {self.level}",
            "  scale: 100",
            f"  voltage: {self.voltage_mv}",
            f"  temperature: {self.temperature_dc}",
            "  technology: Li-ion",
        ]
        if sdk >= 34:
            lines += [f"  Charging state: {1 if self.plugged else 0}", "  Charging policy: 1"]
        if sdk >= 35:
            lines.append("  Capacity level: 3")
        return "\n".join(lines) + "\n"


def _b(value: bool) -> str:
    return "true" if value else "false"


dumpsys_battery = service("dumpsys", "battery")(dumpsys_of(Battery))  # ``dumpsys battery``


SIM_SERVICE = SimService("battery", Battery)  # phone.service(Battery)
