"""What a messaging app's conversation screen shows of sent messages: pure functions over nodes.

A message sent as a chat (RCS) message never reaches ``content://sms``: with chat features on,
Google Messages sends through its own service and stores the message in its own database
(KieronQuinn/Smartspacer#264, tmo1/sms-ie#291). The conversation still shows it, with its
status under the bubble. This module reads that status from a window hierarchy.

The layout is AOSP Messaging's (packages/apps/Messaging, the app Google Messages grew from):
``res/layout/conversation_message_view.xml`` puts each message's ``message_text`` TextView and
then, in ``message_metadata``, its ``message_status`` TextView, so in document order a status
node belongs to the ``message_text`` before it. The status words are its
``res/values/strings.xml``: ``message_status_sending`` "Sending…",
``message_status_send_failed`` "Not sent. Tap to try again.", ``message_status_send_retrying``
"Not sent. Trying again…", ``delivered_status_content_description`` "Delivered"; a sent
message otherwise shows its time (``posted_now`` "Now", ``posted_just_now`` "Just now",
``num_minutes_ago`` "N min(s)", or a clock time). Any other text (another language, another
app's words) is ``unknown``: it never counts as sent.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from device.ui_hierarchy import Node

MESSAGE_TEXT_ID = "message_text"
MESSAGE_STATUS_ID = "message_status"


class SendState(str, enum.Enum):
    """What a bubble's status line says of its message."""

    SENT = "sent"  # delivered, read, or stamped with its time: it left the phone
    SENDING = "sending"  # still on its way ("Sending…", "Not sent. Trying again…")
    FAILED = "failed"  # the app gave up ("Not sent. Tap to try again.")
    UNKNOWN = "unknown"  # no status line, or words this reader does not know


_FAILED = re.compile(r"^Not sent\. Tap to try again\.?$", re.IGNORECASE)
_SENDING = re.compile(r"^(Sending|Not sent\. Trying again)(…|\.\.\.)?$", re.IGNORECASE)
_SENT = re.compile(
    r"^(Delivered|Read|Sent|Now|Just now|\d+ mins?|\d+ hours?"
    r"|\d{1,2}:\d{2}(\s?[AaPp]\.?[Mm]\.?)?)(\s*[•·]\s*.*)?$"
)


@dataclass(frozen=True)
class Bubble:
    """One message bubble: its text and the status line under it (None when none shows)."""

    text: str
    status: str | None

    @property
    def state(self) -> SendState:
        return send_state(self.status)


def send_state(status: str | None) -> SendState:
    """Classify a status line by AOSP Messaging's words (see the module docstring)."""
    if status is None:
        return SendState.UNKNOWN
    text = status.strip()
    if _FAILED.match(text):
        return SendState.FAILED
    if _SENDING.match(text):
        return SendState.SENDING
    if _SENT.match(text):
        return SendState.SENT
    return SendState.UNKNOWN


def _is(node: Node, suffix: str) -> bool:
    return node.resource_id.endswith(f":id/{suffix}")


def bubbles(nodes: list[Node], app: str) -> list[Bubble]:
    """Every message bubble of ``app`` in document order (oldest first, as drawn)."""
    found: list[Bubble] = []
    text: str | None = None
    for node in nodes:
        if node.package != app:
            continue
        if _is(node, MESSAGE_TEXT_ID):
            if text is not None:
                found.append(Bubble(text, None))
            text = node.text
        elif _is(node, MESSAGE_STATUS_ID) and text is not None:
            found.append(Bubble(text, node.text))
            text = None
    if text is not None:
        found.append(Bubble(text, None))
    return found


def dumped_form(text: str) -> str:
    """``text`` as a uiautomator2 hierarchy dump writes it: every UTF-16 surrogate unit as
    ``.`` (the server's AccessibilityNodeInfoDumper.stripInvalidXMLChars), so an emoji reads
    ``..``; ``uiautomator dump`` keeps them."""
    return "".join(".." if ord(ch) > 0xFFFF else ch for ch in text)


def with_text(nodes: list[Node], app: str, body: str) -> list[Bubble]:
    """The bubbles that hold exactly ``body``, as either dump path writes it."""
    forms = {body, dumped_form(body)}
    return [b for b in bubbles(nodes, app) if b.text in forms]
