"""The message composer as a screen shows it: the compose field, the recipient (by number
or by a contact's name) and the draft's text, read from a hierarchy alone (no command).

Shared by the SMS methods (``device/methods/sms.py``, ``sms_send.py``) and the stale-state
snapshot (``snapshot.py``), which compares what a paused SMS task depends on.
"""

from __future__ import annotations

from typing import Any

from phoned.device import contacts, phone_numbers, ui_hierarchy
from phoned.device.actions import ui
from phoned.device.ui_hierarchy import Node

COMPOSE_ID = "compose_message_text"  # Google Messages (View), AOSP Messaging: V155, V163
SAMSUNG_COMPOSE_ID = "message_edit_text"  # Samsung Messages (docs/android-variants.md V67)
RECIPIENT_ID = "recipient_text_view"


def compose_field(nodes: list[Node], app: str) -> Node | None:
    """The compose field: the known id, else the focused EditText of the app (Google
    Messages' Compose field has no id, docs/android-variants.md V157)."""
    for rid in (COMPOSE_ID, SAMSUNG_COMPOSE_ID):
        node = ui_hierarchy.by_resource_id(nodes, rid)
        if node is not None:
            return node
    edits = [n for n in nodes if n.package == app and n.cls.endswith("EditText")]
    focused = [n for n in edits if n.focused]
    candidates = focused or edits
    return candidates[0] if candidates else None


def shown_number(
    nodes: list[Node], app: str, to: str, region: phone_numbers.Regions = ""
) -> str | None:
    """The first text of the app that renders ``to`` (the same number on a phone in
    ``region``, ``phone_numbers.same_number``), as the screen shows it; None when none."""
    texts = [n.text for n in nodes if n.package == app and n.text]
    return next((t for t in texts if phone_numbers.same_number(t, to, region)), None)


def shown_as(
    nodes: list[Node],
    app: str,
    to: str,
    names: tuple[str, ...] = (),
    region: phone_numbers.Regions = "",
) -> str | None:
    """How the app shows the recipient: ``"number"`` (a text of the app that is ``to`` in
    ``region``: ``shown_number``), ``"contact name"`` (a text that is one of ``names``, the
    phone's contact names for ``to``), or None when it shows neither."""
    texts = [n.text for n in nodes if n.package == app and n.text]
    if shown_number(nodes, app, to, region) is not None:
        return "number"
    if any(contacts.same_display_name(t, name) for t in texts for name in names):
        return "contact name"
    return None


def observed_draft(
    screen: ui.Screen,
    app: str,
    to: str,
    names: tuple[str, ...] = (),
    region: phone_numbers.Regions = "",
) -> dict[str, Any]:
    """What the screen shows of a draft: app in front, recipient shown (by number in
    ``region``, or by a contact name in ``names``), compose text."""
    field = compose_field(screen.nodes, app)
    return {
        "app_in_front": bool(screen.packages) and screen.packages[0] == app,
        "recipient_shown": shown_as(screen.nodes, app, to, names, region) is not None,
        "compose_text": field.text if field is not None else None,
    }
