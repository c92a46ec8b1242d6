"""Notification manager model: zen mode (DND), listeners, DND access; ``cmd notification``,
``dumpsys notification``. (Owner: system-services work; stub until filled.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from device.sim.phone import Phone


class NotificationService:
    def __init__(self, phone: Phone) -> None:
        self.phone = phone
