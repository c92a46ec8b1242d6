"""Audio service model: streams, ranges, per-output-device indexes; ``cmd media_session``,
``media volume``, ``dumpsys audio``. (Owner: packages/audio/SMS work; stub until filled.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from device.sim.phone import Phone


class AudioService:
    def __init__(self, phone: Phone) -> None:
        self.phone = phone
