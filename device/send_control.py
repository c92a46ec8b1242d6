"""Which control of a messaging app's composer sends: told by the screen's layout, not its words.

The words of a closed app in a hundred languages are not public (Google Messages' Compose
screen has neither ids nor public translations), so the send control is recognised by what
every composer shares (docs/device-layer.md, "Finding the send control"):

1. **The row of the field just filled.** Controls (clickable, described, or a button or
   image class) of the app whose boxes share the compose field's row (they overlap at least
   half of the smaller height) and lie past the field's end in the layout direction: right of
   it left to right, left of it right to left (the phone's locale, CLDR's character order;
   a mirrored row mirrors the rule). Controls before the field (attach) are never
   candidates; a control nested in another is one control (the innermost is kept).
2. **At the row's end.** The send control is the last of them: the one whose far edge is
   the row's end. Emoji, gallery and sticker controls sit between the field and send in
   every composer modelled (docs/android-variants.md V156-V163); a voice control takes the
   send control's place only while the field is empty, and phoned recognises only on a
   screen where the draft was verified, so the field holds the text.
3. **Ready.** That control must be clickable and enabled: send controls are disabled, or
   absent, while a draft cannot be sent.

Known resource ids (``send_message_button_icon``, ``send_message_button``, ``send_button``,
the Compose tag ``Compose:Draft:Send``) and the apps' own words (``messaging_words``
send-button meaning in every locale they ship; Google Messages' public English
descriptions, ``android_data/google_messages.json``) are cross-checks only: an id or a send
word on another control than the one the layout chose, or a word that names the chosen one
something else (voice, attach, emoji, gallery), makes the answer "cannot tell". A known id
decides alone only when the layout offers no candidate (no compose field found), or picks
one among several controls at the row's end. Words never decide. "Cannot tell" names the
candidates; the caller then taps nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import phoned.android_data as android_data
from phoned.device import message_time, messaging_words
from phoned.device.ui_hierarchy import Node

# Known send ids (without the package) and Compose test tags (the whole resource id):
# docs/android-variants.md V66, V67, V119, V155, V163.
SEND_IDS = ("send_message_button_icon", "send_message_button", "send_button")
SEND_TAGS = ("Compose:Draft:Send",)
# Descriptions public scripts address (English): AOSP Messaging's sendButtonContentDescription
# variants and Google Messages' (V66, V157).
SEND_DESCRIPTIONS = ("Send SMS", "Send message", "Send", "Send RCS message", "Send text message")
CONTROL_CLASSES = ("Button", "ImageButton", "ImageView")
TIE_PX = 8  # far edges closer than this are the same end: two controls there are ambiguous
CANNOT_TELL = "cannot tell the send button"


@dataclass(frozen=True)
class Recognition:
    """The send control found (``node``), or why not (``reason``), with what showed it."""

    node: Node | None
    reason: str  # "" when found
    how: str  # "layout" or "resource-id" (what decided), "" when nothing did
    checks: tuple[str, ...]  # cross-checks that agreed: "resource-id X", "word 'Y' (...)"
    candidates: tuple[Node, ...]  # the controls considered at the row's end
    direction: str  # "ltr" or "rtl"

    def evidence(self) -> dict[str, Any]:
        return {
            "found": None if self.node is None else self.node.to_json(),
            "how": self.how or None,
            "checks": list(self.checks),
            "reason": self.reason or None,
            "direction": self.direction,
            "candidates": [n.to_json() for n in self.candidates],
        }


def layout_direction(locale: str | None) -> str:
    """``"rtl"`` when the phone's language is written right to left (CLDR), else ``"ltr"``."""
    cldr = message_time.babel_locale(locale) if locale else None
    order = getattr(cldr, "character_order", "left-to-right")
    return "rtl" if order == "right-to-left" else "ltr"


@functools.lru_cache(maxsize=1)
def _google_words() -> dict[str, str]:
    """Google Messages' public English descriptions: text -> meaning (send_button, voice...)."""
    table = android_data.google_messages_words()
    meanings = table["meaning"]
    return {
        messaging_words.normalise(text): meanings[name]
        for name, text in table["locales"]["en"].items()
    }


def word_meaning(desc: str, locale: str | None) -> str | None:
    """What a control's description says it is: ``send_button``, ``voice``, ``attach``,
    ``emoji``, ``gallery`` (Google Messages' public words), a send word of any messaging
    app's translations, or None when unknown."""
    if not desc:
        return None
    if desc in SEND_DESCRIPTIONS:
        return "send_button"
    known = _google_words().get(messaging_words.normalise(desc))
    if known is not None:
        return known
    for app in messaging_words.tables():
        if messaging_words.meaning(desc, locale, kind="send_button", app=app) is not None:
            return "send_button"
    return None


def known_id(node: Node) -> bool:
    """Does the node carry a send id or tag one of the modelled apps uses?"""
    rid = node.resource_id
    return rid in SEND_TAGS or any(rid == i or rid.endswith(f":id/{i}") for i in SEND_IDS)


def _contains(outer: Node, inner: Node) -> bool:
    a, b = outer.bounds, inner.bounds
    return a[0] <= b[0] and a[1] <= b[1] and a[2] >= b[2] and a[3] >= b[3]


def same_control(a: Node, b: Node) -> bool:
    """One control: the same node, or one box nested in the other."""
    return a is b or _contains(a, b) or _contains(b, a)


def _control_like(node: Node) -> bool:
    return node.clickable or bool(node.content_desc) or node.cls.endswith(CONTROL_CLASSES)


def _on_row(node: Node, field: Node) -> bool:
    top, bottom = max(node.bounds[1], field.bounds[1]), min(node.bounds[3], field.bounds[3])
    shorter = min(node.bounds[3] - node.bounds[1], field.bounds[3] - field.bounds[1])
    return shorter > 0 and bottom - top >= shorter / 2


def _past_end(node: Node, field: Node, rtl: bool) -> bool:
    if rtl:
        return node.bounds[2] <= field.bounds[0] + TIE_PX
    return node.bounds[0] >= field.bounds[2] - TIE_PX


def row_controls(nodes: list[Node], field: Node, rtl: bool) -> list[Node]:
    """The controls past the field's end on its row, nested ones folded into the innermost."""
    found = [
        n
        for n in nodes
        if n is not field
        and n.package == field.package
        and _control_like(n)
        and _on_row(n, field)
        and _past_end(n, field, rtl)
    ]
    return [n for n in found if not any(m is not n and _contains(n, m) for m in found)]


def row_end(controls: list[Node], rtl: bool) -> list[Node]:
    """The controls whose far edge is the row's end (two or more: ambiguous)."""
    if not controls:
        return []

    def far(n: Node) -> int:
        return -n.bounds[0] if rtl else n.bounds[2]

    end = max(far(n) for n in controls)
    return [n for n in controls if end - far(n) < TIE_PX]


def _refuse(why: str, candidates: list[Node], direction: str) -> Recognition:
    return Recognition(None, f"{CANNOT_TELL}: {why}", "", (), tuple(candidates), direction)


def _cross_checks(
    chosen: Node, nodes: list[Node], locale: str | None
) -> tuple[tuple[str, ...], str | None]:
    """(the checks that agree with ``chosen``, the contradiction if any)."""
    agreed: list[str] = []
    said = word_meaning(chosen.content_desc, locale)
    if said not in (None, "send_button"):
        return (), f"its description {chosen.content_desc!r} names it {said}"
    if said == "send_button":
        agreed.append(f"word {chosen.content_desc!r}")
    for node in nodes:
        other = not same_control(node, chosen)
        if known_id(node):
            if other:
                return (), f"the send id {node.resource_id!r} is on another control"
            agreed.append(f"resource-id {node.resource_id}")
        elif other and word_meaning(node.content_desc, locale) == "send_button":
            return (), f"another control is described {node.content_desc!r}"
    return tuple(dict.fromkeys(agreed)), None


def recognise(nodes: list[Node], field: Node | None, locale: str | None) -> Recognition:
    """The composer's send control on the screen ``nodes``, whose compose field ``field``
    holds the draft (see the module docstring)."""
    direction = layout_direction(locale)
    rtl = direction == "rtl"
    ends = row_end(row_controls(nodes, field, rtl), rtl) if field is not None else []
    ids = [n for n in nodes if known_id(n)]
    if len(ends) == 1:
        chosen = ends[0]
        if not (chosen.clickable and chosen.enabled):
            return _refuse("the control at the end of the compose row is not enabled", ends, direction)  # fmt: skip
        checks, contradiction = _cross_checks(chosen, nodes, locale)
        if contradiction is not None:
            return _refuse(f"the layout points at one control but {contradiction}", ends, direction)  # fmt: skip
        return Recognition(chosen, "", "layout", checks, tuple(ends), direction)
    if len(ends) > 1:
        named = [e for e in ends if any(same_control(e, i) for i in ids)]
        if len(named) == 1:
            return Recognition(named[0], "", "resource-id", ("layout: one of several at the row's end",), tuple(ends), direction)  # fmt: skip
        return _refuse(f"{len(ends)} controls at the end of the compose row", ends, direction)
    if len(ids) == 1 or (ids and all(same_control(ids[0], i) for i in ids)):
        return Recognition(ids[0], "", "resource-id", (), tuple(ids), direction)
    where = "no compose field" if field is None else "no control after the compose field"
    return _refuse(where, ids, direction)
