"""device.conversation: bubbles and their status lines, in AOSP Messaging's layout and words."""

from __future__ import annotations

import pytest

from device import conversation
from device.conversation import SendState
from device.ui_hierarchy import parse_nodes

PKG = "com.google.android.apps.messaging"


def _xml(*bubbles: tuple[str, str | None]) -> str:
    nodes = []
    for text, status in bubbles:
        nodes.append(f'<node text="{text}" resource-id="{PKG}:id/message_text" package="{PKG}"/>')
        if status is not None:
            nodes.append(
                f'<node text="{status}" resource-id="{PKG}:id/message_status" package="{PKG}"/>'
            )
    return f'<hierarchy rotation="0">{"".join(nodes)}</hierarchy>'


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ("Delivered", SendState.SENT),
        ("Now", SendState.SENT),
        ("Just now", SendState.SENT),
        ("5 mins", SendState.SENT),
        ("10:42 PM", SendState.SENT),
        ("Read 10:42", SendState.UNKNOWN),  # not an AOSP Messaging status line: unknown
        ("Sending…", SendState.SENDING),
        ("Not sent. Trying again…", SendState.SENDING),
        ("Not sent. Tap to try again.", SendState.FAILED),
        ("Enviando…", SendState.UNKNOWN),  # another language never counts as sent
        ("", SendState.UNKNOWN),
        (None, SendState.UNKNOWN),
    ],
)
def test_status_words(status: str | None, state: SendState) -> None:
    assert conversation.send_state(status) is state


def test_a_status_belongs_to_the_bubble_before_it() -> None:
    nodes = parse_nodes(_xml(("hi", "Now"), ("no status", None), ("hi", "Sending…")))
    found = conversation.bubbles(nodes, PKG)
    assert [(b.text, b.status) for b in found] == [
        ("hi", "Now"),
        ("no status", None),
        ("hi", "Sending…"),
    ]
    assert [b.state for b in conversation.with_text(nodes, PKG, "hi")] == [
        SendState.SENT,
        SendState.SENDING,
    ]


def test_other_apps_bubbles_are_not_read() -> None:
    nodes = parse_nodes(_xml(("hi", "Now")).replace(PKG, "com.example.chat"))
    assert conversation.bubbles(nodes, PKG) == []


def test_a_uiautomator2_dump_of_an_emoji_still_matches_its_body() -> None:
    nodes = parse_nodes(_xml(("ok ..", "Delivered")))  # "ok 👍" as the u2 server dumps it
    assert [b.status for b in conversation.with_text(nodes, PKG, "ok 👍")] == ["Delivered"]
    assert conversation.with_text(nodes, PKG, "ok") == []
