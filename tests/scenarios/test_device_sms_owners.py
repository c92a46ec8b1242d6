"""sms.send / sms.draft on phones as their owners set them up: their language, their maker's
messaging app, their contacts, their two SIMs (issue #22).

Each simulated case is a ``phone(...)`` set-up (``phoned sim --scenario`` names) applied before
phoned first reads the phone; each has a device twin that runs on the phone named by
``ANDROID_SERIAL`` when that phone is set up the same way (its language, its SMS app), and
skips saying how to set it up otherwise. The twins that send a real message need
``PHONED_DEVICE_SEND_TO`` (a number you own, e.g. an emulator's 5554).
"""

from __future__ import annotations

import pytest
from helpers import sent_as
from phoned.device.actions import Status

pytestmark = pytest.mark.integration

TO = "+79161234567"
BODY = "Буду в 8 — 괜찮아요? 👍"


def _needs_language(dut, language: str) -> None:
    locale = dut.device.identity.locale
    if not locale.lower().startswith(language):
        pytest.skip(
            f"the phone speaks {locale or 'an unknown language'}: set its language to "
            f"{language} (Settings > System > Languages) to run this twin"
        )


def _sent_as(dut, status: Status, to: str, **params):
    return sent_as(dut, status, to, BODY, **params)


@pytest.mark.sdks(34)
@pytest.mark.phone("locale:ru-RU,chat-send")
def test_a_chat_message_delivered_on_a_russian_phone_completes(dut) -> None:
    """The conversation shows «Доставлено» (AOSP Messaging values-ru
    delivered_status_content_description): sent, proved by the conversation in Russian."""
    _needs_language(dut, "ru")
    out = _sent_as(dut, Status.MET, dut.send_to(TO))
    ev = out.to_json()["evidence"]
    assert ev["device"]["locale"].startswith("ru")
    if dut.sim is not None:
        assert out.detail["proved_by"] == "conversation"
        assert out.detail["conversation_status"] == "Доставлено"
        assert "delivered_status_content_description (ru)" in out.detail["conversation_proof"]
        assert len(dut.taps()) == 1 and dut.phone.sms.messages("sent") == []
    else:
        assert out.detail["proved_by"] in ("sent_box", "conversation", "chat_store")


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("locale:ru-RU,chat-send:fail")
def test_a_chat_message_not_sent_on_a_russian_phone_fails_and_is_tapped_once(dut) -> None:
    out = _sent_as(dut, Status.NOT_MET, TO)
    assert out.detail["conversation_status"].startswith("Сообщение не отправлено")
    assert "message_status_send_failed (ru)" in out.detail["conversation_proof"]
    assert len(dut.taps()) == 1


@pytest.mark.sdks(33, 35)
@pytest.mark.phone("locale:ko-KR,chat-send")
def test_a_chat_message_delivered_on_a_korean_phone_completes(dut) -> None:
    _needs_language(dut, "ko")
    out = _sent_as(dut, Status.MET, dut.send_to(TO))
    assert out.to_json()["evidence"]["device"]["locale"].startswith("ko")
    if dut.sim is not None:
        assert out.detail["conversation_status"] == "전송 완료"
        assert "(ko)" in out.detail["conversation_proof"]
        assert len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("locale:ko-KR,chat-send:fail")
def test_a_chat_message_not_sent_on_a_korean_phone_fails_and_is_tapped_once(dut) -> None:
    out = _sent_as(dut, Status.NOT_MET, TO)
    assert "message_status_send_failed (ko)" in out.detail["conversation_proof"]
    assert len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("locale:ko-KR,chat-send:stuck")
def test_a_chat_message_still_sending_in_korean_is_cannot_tell(dut) -> None:
    out = _sent_as(dut, Status.CANNOT_TELL, TO)
    assert out.detail["conversation_status"] == "보내는 중..."
    assert len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.phone("locale:ru-RU")
def test_a_draft_on_a_russian_phone_completes(dut) -> None:
    _needs_language(dut, "ru")
    out = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert out.status is Status.MET, out.message
    assert out.to_json()["evidence"]["device"]["locale"].startswith("ru")


def _needs_samsung_messages(dut) -> None:
    from phoned.device.conversation import SAMSUNG_MESSAGES
    from phoned.device.methods import sms

    app = sms.default_sms_app(dut.ctx("sms.draft"))
    if app != SAMSUNG_MESSAGES:
        pytest.skip(f"the phone's SMS app is {app}: make Samsung Messages the default to run")


@pytest.mark.sdks(34)
@pytest.mark.phone("samsung-messages,locale:ko-KR")
def test_a_draft_in_samsung_messages_completes(dut) -> None:
    _needs_samsung_messages(dut)
    out = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert out.status is Status.MET, out.message
    assert out.detail["app"] == "com.samsung.android.messaging"


@pytest.mark.sdks(34)
@pytest.mark.phone("samsung-messages,locale:ko-KR")
def test_an_sms_through_samsung_messages_is_proved_by_the_sent_box(dut) -> None:
    _needs_samsung_messages(dut)
    out = _sent_as(dut, Status.MET, dut.send_to(TO))
    if dut.sim is not None:
        assert out.detail["proved_by"] == "sent_box" and out.detail["sub_id"] == "1"
        assert len(dut.taps()) == 1
    else:
        assert out.detail["proved_by"] in ("sent_box", "chat_store", "conversation")


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("samsung-messages,locale:ko-KR,chat-send")
def test_a_chat_message_through_samsung_messages_is_proved_by_its_chat_store(dut) -> None:
    """Samsung keeps chat messages in content://im/chat (type 2 once sent): the proof
    needs no word on the screen."""
    out = _sent_as(dut, Status.MET, TO)
    assert out.detail["proved_by"] == "chat_store"
    assert out.detail["store"] == "content://im/chat" and out.detail["chat_type"] == "2"
    assert dut.phone.sms.messages("sent") == [] and len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("samsung-messages,locale:ru-RU,chat-send:fail")
def test_a_failed_chat_message_in_samsung_messages_fails_and_is_tapped_once(dut) -> None:
    out = _sent_as(dut, Status.NOT_MET, TO)
    # whichever witness saw the failure first: the store (type 5) or the bubble («Сбой»)
    assert out.detail.get("chat_type") == "5" or "status_failed (ru)" in str(
        out.detail.get("conversation_proof")
    )
    assert len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("samsung-messages:dual,locale:ko-KR")
def test_two_sims_send_from_the_sim_the_task_names_and_say_so(dut) -> None:
    """An older Samsung Messages draws send_button1 / send_button2: params.sim picks one and
    the sent box's sub_id shows which subscription sent; without sim nothing is tapped."""
    refused = _sent_as(dut, Status.UNSUPPORTED, TO)
    assert "params.sim" in refused.message
    assert dut.taps() == []
    out = _sent_as(dut, Status.MET, TO, sim=2)
    assert out.detail["sub_id"] == "2"
    (row,) = dut.phone.sms.messages("sent")
    assert row["sub_id"] == 2 and len(dut.taps()) == 1


@pytest.mark.sdks(30, 34)
@pytest.mark.phone("contact:Анна Иванова=+79161234567,locale:ru-RU")
def test_a_draft_to_a_saved_contact_completes_and_says_the_name_proved_it(dut) -> None:
    """A saved contact's conversation shows the name, not the number (AOSP Messaging
    ParticipantData.getDisplayName; Google Messages' conversation_title): the phone's
    contacts say which name the number has, and the evidence says which one proved it."""
    if dut.sim is None:
        pytest.skip("needs a contact saved for the number: run on the simulated phone")
    out = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert out.status is Status.MET, out.message
    assert out.detail["recipient_shown_as"] == "contact name"
    text = str(out.to_json()["evidence"])
    assert "Анна" not in text and "79161234567" not in text  # name and number redacted
    lookups = [a for a in dut.execs() if a[:2] == ("content", "query") and "phone_lookup" in a[3]]
    assert len(lookups) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("contact:김민준=+79161234567,locale:ko-KR")
def test_a_send_to_a_saved_contact_is_proved_and_tapped_once(dut) -> None:
    out = _sent_as(dut, Status.MET, TO)
    assert out.detail["proved_by"] == "sent_box" and len(dut.taps()) == 1


def test_a_draft_on_this_phone_as_set_up_completes(dut) -> None:
    """Device twin of the contact and vendor cases: whatever the phone's language, SMS app
    and contacts, a draft to PHONED_DEVICE_SEND_TO (save it as a contact to exercise the
    name path) completes and the evidence says how the recipient was shown."""
    to = dut.send_to(TO)
    out = dut.run("sms.draft", {"to": to, "body": "phoned device test"})
    assert out.status is Status.MET, out.message
    assert out.detail["recipient_shown_as"] in ("number", "contact name")
