"""What a messaging app's conversation screen shows of sent messages: pure functions over nodes.

A message sent as a chat (RCS) message never reaches ``content://sms``: with chat features on,
Google Messages sends through its own service and stores the message in its own database
(KieronQuinn/Smartspacer#264, tmo1/sms-ie#291). The conversation still shows it, with its
status under the bubble. This module reads that status from a window hierarchy, in the
phone's language, for each messaging app whose layout is known (``LAYOUTS``).

Evidence that does not depend on words comes first: an indicator view by resource id (AOSP
Messaging's ``smsDeliveredBadge``, shown only for ``BUGLE_STATUS_OUTGOING_DELIVERED``). Then
the status line: the app's own words in every locale it ships (``phoned.device.messaging_words``,
generated from its translations) and a message stamp read with CLDR data for the phone's
locale (``phoned.device.message_time``). Every part of the line must be accounted for: a word this
reader does not know makes the line ``unknown``, which never counts as sent.

AOSP Messaging's layout (packages/apps/Messaging ``res/layout/conversation_message_view.xml``)
puts each message's ``message_text`` and then, in ``message_metadata``, its
``message_status``, ``sim_name`` and ``smsDeliveredBadge``, so in document order the nodes
after a ``message_text`` belong to it. ``ConversationMessageView.updateViewContent`` fills the
status: ``message_status_sending`` / ``_send_retrying`` while sending, the failure strings
(``MmsUtils.mapRawStatusToErrorResourceId``) when it failed, otherwise the time
(``Dates.getMessageTimeString``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace

from phoned.device import message_time, messaging_words
from phoned.device.ui_hierarchy import Node


class SendState(str, enum.Enum):
    """What a bubble's status says of its message."""

    SENT = "sent"  # delivered, read, or stamped with its time: it left the phone
    SENDING = "sending"  # still on its way ("Sending…", "Not sent. Trying again…")
    FAILED = "failed"  # the app gave up ("Not sent. Tap to try again.")
    UNKNOWN = "unknown"  # no status, or words this reader does not know


@dataclass(frozen=True)
class Layout:
    """Where one messaging app draws a message: resource ids (without the package)."""

    name: str
    text_ids: tuple[str, ...]  # the message's text
    status_ids: tuple[str, ...]  # the status / time line under it
    delivered_ids: tuple[str, ...]  # a view shown only when the message was delivered
    failed_ids: tuple[str, ...]  # a view shown only when sending failed
    source: str
    words: str = "aosp"  # whose translations its status words are (messaging_words)


AOSP_LAYOUT = Layout(
    "AOSP Messaging / Google Messages",
    text_ids=("message_text",),
    status_ids=("message_status",),
    delivered_ids=("smsDeliveredBadge",),
    failed_ids=(),
    source="packages/apps/Messaging res/layout/conversation_message_view.xml",
)
# Samsung Messages 16.2.10.27 (apktool decompile, Android-Artisan/Samsung-Messages-Mod
# e8eec18f): res/layout/bubble_text_view.xml draws the text in ``content_text_view``;
# bubble_info_side_view.xml / bubble_info_bottom_view.xml the status
# (``base_list_item_info_status_text``), the "Pending" label
# (``base_list_item_info_progress_text``) and the time (``base_list_item_info_date``).
SAMSUNG_LAYOUT = Layout(
    "Samsung Messages",
    text_ids=("content_text_view",),
    status_ids=(
        "base_list_item_info_status_text",
        "base_list_item_info_progress_text",
        "base_list_item_info_date",
    ),
    delivered_ids=(),
    failed_ids=(),
    source="Samsung Messages 16.2 res/layout/bubble_text_view.xml, bubble_info_*_view.xml",
    words="samsung",
)
SAMSUNG_MESSAGES = "com.samsung.android.messaging"
LAYOUTS = {SAMSUNG_MESSAGES: SAMSUNG_LAYOUT}


def layout_of(app: str) -> Layout:
    """The layout of ``app``; AOSP Messaging's for Google Messages and any app not known."""
    return LAYOUTS.get(app, AOSP_LAYOUT)


@dataclass(frozen=True)
class Reading:
    """A bubble's state and what showed it (an id, a word and its resource, a stamp)."""

    state: SendState
    proof: str | None


@dataclass(frozen=True)
class Bubble:
    """One message bubble: its text, the status line under it (None when none shows) and
    the indicator views (resource ids without the package) drawn with it."""

    text: str
    status: str | None  # the status views' texts, joined by " • " when a layout has several
    indicators: frozenset[str] = frozenset()

    def reading(self, locale: str | None, layout: Layout = AOSP_LAYOUT) -> Reading:
        return read_status(self, locale, layout)


def _part_meaning(part: str, locale: str | None, app_words: str) -> tuple[str, str] | None:
    word = messaging_words.meaning(part, locale, app=app_words)
    if word is not None:
        return word.meaning, f"word {part!r}: {word.source()}"
    for tag in dict.fromkeys([locale or "en", "en"]):
        stamp = message_time.timestamp(part, tag)
        if stamp is not None:
            return "sent", f"time {part!r}: CLDR {stamp}"
    return None


def read_status(bubble: Bubble, locale: str | None, layout: Layout = AOSP_LAYOUT) -> Reading:
    """A bubble's state (see the module docstring), with its proof."""
    failed = sorted(bubble.indicators & set(layout.failed_ids))
    if failed:
        return Reading(SendState.FAILED, f"resource-id {failed[0]}")
    delivered = sorted(bubble.indicators & set(layout.delivered_ids))
    parts = [p.strip() for p in re.split(r"[•·]", bubble.status or "") if p.strip()]
    meanings = [_part_meaning(p, locale, layout.words) for p in parts]
    known = [m for m in meanings if m is not None]
    for state in ("failed", "sending", "undelivered"):
        for meaning, proof in known:
            if meaning == state:  # "undelivered": neither sent nor failed, so unknown
                return Reading(
                    SendState.UNKNOWN if state == "undelivered" else SendState(state), proof
                )
    if delivered:
        return Reading(SendState.SENT, f"resource-id {delivered[0]}")
    if parts and len(known) == len(parts) and all(m == "sent" for m, _ in known):
        return Reading(SendState.SENT, "; ".join(p for _, p in known))
    return Reading(SendState.UNKNOWN, None)


def send_state(status: str | None, locale: str | None = None) -> SendState:
    """The state a status line alone says (no indicator views)."""
    return read_status(Bubble("", status), locale).state


def _id_of(node: Node, app: str) -> str | None:
    prefix = f"{app}:id/"
    return node.resource_id[len(prefix) :] if node.resource_id.startswith(prefix) else None


def _compose_tag(node: Node) -> str | None:
    """A Jetpack Compose test tag exposed as the resource id (no ``:id/``), e.g. Google
    Messages' ``message_text`` (docs/android-variants.md V160)."""
    rid = node.resource_id
    return rid if rid and ":id/" not in rid else None


def _untagged_text(node: Node) -> bool:
    return not node.resource_id and bool(node.text) and node.cls.endswith("TextView")


def bubbles(nodes: list[Node], app: str) -> list[Bubble]:
    """Every message bubble of ``app`` in document order (oldest first, as drawn).

    Views: the layout's ids. Compose (Google Messages' current builds): the ``message_text``
    tag, then the first text without an id is its status line ("Now • SMS", "Delivered")."""
    layout = layout_of(app)
    indicators = {*layout.delivered_ids, *layout.failed_ids}
    found: list[Bubble] = []
    compose = False  # the last bubble came from a Compose tag: its status has no id
    for node in nodes:
        if node.package != app:
            continue
        rid = _id_of(node, app)
        tag = _compose_tag(node) if rid is None else None
        if rid in layout.text_ids or tag in layout.text_ids:
            found.append(Bubble(node.text, None))
            compose = tag is not None
        elif found and rid in layout.status_ids and node.text:
            status = found[-1].status
            found[-1] = replace(
                found[-1], status=f"{status} • {node.text}" if status else node.text
            )
        elif found and rid in indicators:
            found[-1] = replace(found[-1], indicators=found[-1].indicators | {rid})
        elif found and compose and found[-1].status is None and _untagged_text(node):
            found[-1] = replace(found[-1], status=node.text)
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
