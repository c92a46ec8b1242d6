"""Bluetooth adapter model with asynchronous TURNING_ON/TURNING_OFF; ``cmd bluetooth_manager``,
``svc bluetooth``, ``dumpsys bluetooth_manager``. (Owner: system-services work; stub.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from device.sim.phone import Phone


class BluetoothAdapter:
    def __init__(self, phone: Phone) -> None:
        self.phone = phone
