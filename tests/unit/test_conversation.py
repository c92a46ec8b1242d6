"""phoned.device.conversation: bubbles and their status lines, in AOSP Messaging's layout and words."""

from __future__ import annotations

import pytest

from phoned.device import conversation
from phoned.device.conversation import SendState
from phoned.device.ui_hierarchy import parse_nodes

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
        ("Enviando…", SendState.SENDING),  # es message_status_sending: any shipped locale
        ("Enviado al espacio", SendState.UNKNOWN),  # words no translation has: unknown
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
    assert [b.reading("en-US").state for b in conversation.with_text(nodes, PKG, "hi")] == [
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


# Each word below is the phone app's own: AOSP Messaging res/values-ru|ko/strings.xml at the
# commit android_data/messaging_words.json names; clock times are CLDR's (babel) for the locale.
@pytest.mark.parametrize(
    ("status", "locale", "state", "proof"),
    [
        ("Доставлено", "ru-RU", SendState.SENT, "delivered_status_content_description (ru)"),
        ("Только что", "ru-RU", SendState.SENT, "just_now (ru)"),
        ("5\u00a0минут", "ru-RU", SendState.SENT, "num_minutes_ago (ru)"),
        ("5 минут", "ru-RU", SendState.SENT, "num_minutes_ago (ru)"),
        ("21:17", "ru-RU", SendState.SENT, "CLDR ru-RU HH:mm"),
        ("пн, 21:17", "ru-RU", SendState.SENT, "CLDR ru-RU HH:mm"),
        ("Отправка…", "ru-RU", SendState.SENDING, "message_status_sending (ru)"),
        (
            "Сообщение не отправлено. Нажмите, чтобы повторить попытку.",
            "ru-RU",
            SendState.FAILED,
            "message_status_send_failed (ru)",
        ),
        ("전송 완료", "ko-KR", SendState.SENT, "delivered_status_content_description (ko)"),
        ("지금", "ko-KR", SendState.SENT, "posted_now (ko)"),
        ("3분", "ko-KR", SendState.SENT, "num_minutes_ago (ko)"),
        ("오후 9:17", "ko-KR", SendState.SENT, "CLDR ko-KR a h:mm"),
        ("보내는 중...", "ko-KR", SendState.SENDING, "message_status_sending (ko)"),
        (
            "전송되지 않았습니다. 다시 시도하려면 터치하세요.",
            "ko-KR",
            SendState.FAILED,
            "message_status_send_failed (ko)",
        ),
        ("오후 9:17 전송 실패했어요", "ko-KR", SendState.UNKNOWN, None),  # a word left over
        ("Not sent 21:17", "en-US", SendState.UNKNOWN, None),
    ],
)
def test_status_lines_in_the_phones_language(
    status: str, locale: str, state: SendState, proof: str | None
) -> None:
    reading = conversation.read_status(conversation.Bubble("hi", status), locale)
    assert reading.state is state
    if proof is None:
        assert reading.proof is None
    else:
        assert reading.proof is not None and proof in reading.proof


def test_the_delivered_badge_proves_delivery_without_a_word() -> None:
    """AOSP Messaging shows ``smsDeliveredBadge`` only for a delivered message
    (ConversationMessageView: ``deliveredBadgeVisible``); its status line is then the time,
    in whatever language: the badge's id decides, not the words."""
    xml = (
        f'<hierarchy rotation="0"><node text="hi" resource-id="{PKG}:id/message_text" '
        f'package="{PKG}"/><node text="Ismeretlen" resource-id="{PKG}:id/message_status" '
        f'package="{PKG}"/><node content-desc="Доставлено" '
        f'resource-id="{PKG}:id/smsDeliveredBadge" package="{PKG}"/></hierarchy>'
    )
    (bubble,) = conversation.bubbles(parse_nodes(xml), PKG)
    assert bubble.indicators == {"smsDeliveredBadge"}
    reading = bubble.reading("hu-HU")
    assert reading.state is SendState.SENT and reading.proof == "resource-id smsDeliveredBadge"
