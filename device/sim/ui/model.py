"""Screen, keyguard, activities and windows of the simulated phone. (Owner: UI work; stub.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from device.sim.phone import Phone


class Ui:
    """What is on the screen: power/keyguard state, the activity stack, the window hierarchy."""

    def __init__(self, phone: Phone) -> None:
        self.phone = phone
        self.screen_on = True
        self.locked = False
