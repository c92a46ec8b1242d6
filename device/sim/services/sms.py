"""SMS provider model (``content://sms``) and ``content query``/``content insert``.
(Owner: packages/audio/SMS work; stub until filled.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from device.sim.phone import Phone


class SmsProvider:
    """Messages in the inbox, sent box, drafts and outbox."""

    def __init__(self, phone: Phone) -> None:
        self.phone = phone

    def insert(self, box: str, address: str, body: str) -> int:
        """Store a message in ``box`` (inbox, sent, draft, outbox); returns its ``_id``."""
        raise NotImplementedError
