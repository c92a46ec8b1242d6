"""The messages a simulated messaging app sent, as its conversation screen keeps them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from phoned.sim.ui import messaging_text
from phoned.sim.ui.views import View

# How long a chat message shows "Sending…" before it is delivered (or fails).
CHAT_SEND_S = 0.3


@dataclass(frozen=True)
class SentEntry:
    """One message the composer sent: its text, how (``sms``, ``chat``, ``chat-stuck``,
    ``chat-fail``) and when (``phone.now()``)."""

    body: str
    kind: str
    at: float
    sim: int = 1  # the SIM slot it went out on

    def encode(self) -> str:
        return f"{self.body}\x1f{self.kind}\x1f{self.at}\x1f{self.sim}"

    @classmethod
    def decode(cls, text: str) -> SentEntry:
        body, kind, at, sim = text.split("\x1f")
        return cls(body, kind, float(at), int(sim))

    def status(self, now: float, locale: str, hour24: bool | None = None) -> str:
        """The status line under the bubble, as AOSP Messaging draws it
        (``ConversationMessageView.updateViewContent``), in the phone's language from the
        app's own translations (``messaging_text``): sending / not sent words while a chat
        message is on its way or failed, "Delivered" once a chat message arrived (Google
        Messages' status text, V66), else the message's time (``Dates.getTimestamp``)."""
        if self.kind != "sms":
            if self.kind == "chat-stuck" or now - self.at < CHAT_SEND_S:
                return messaging_text.word(locale, "message_status_sending")
            if self.kind == "chat-fail":
                return messaging_text.word(locale, "message_status_send_failed")
            return messaging_text.word(locale, "delivered_status_content_description")
        return messaging_text.stamp(locale, now - self.at, hour24)


def conversation_message_view(package: str, entry: SentEntry, top: int, locale: str) -> View:
    """A ConversationMessageView of ``package``: ``message_text`` then, in
    ``message_metadata``, the ``message_status`` line (AOSP Messaging
    res/layout/conversation_message_view.xml; Google Messages' View generation descends
    from it, V113)."""
    return View(
        "android.view.ViewGroup", (300, top, 1040, top + 190),
        resource_id=f"{package}:id/message_content",
        children=[
            View("android.widget.TextView", (330, top + 10, 1010, top + 120),
                 resource_id=f"{package}:id/message_text", text=entry.body),
            View("android.widget.TextView", (330, top + 125, 1010, top + 180),
                 resource_id=f"{package}:id/message_status",
                 text=entry.status(time.monotonic(), locale)),  # the clock of Phone.now()
        ],
    )  # fmt: skip


def message_list(encoded: str, resource_id: str, bubble: Callable[[SentEntry, int], View]) -> View:
    """The conversation's message list: ``bubble(entry, y)`` for the last five sent entries
    of ``encoded`` (a screen's ``state["sent"]``), the newest lowest on the screen."""
    entries = [SentEntry.decode(e) for e in encoded.split("\x1e") if e]
    bubbles = [bubble(entry, 1700 - 200 * i) for i, entry in enumerate(reversed(entries[-5:]))]
    return View(
        "androidx.recyclerview.widget.RecyclerView",
        (0, 265, 1080, 2000),
        resource_id=resource_id,
        scrollable=True,
        children=bubbles,
    )
