"""sms.send / sms.draft on Google Messages as it is today, and on AOSP Messaging (issue #33).

Google Messages' current conversation screen (Jetpack Compose) has no ids in its composer row
and its words in other languages are not public: phoned finds the send control by the
layout around the field it filled (``phoned.device.send_control``), reads the outcome from the sent
box or the conversation, and taps nothing when it cannot tell the send control apart.

Each simulated case is a ``phone(...)`` set-up (``phoned sim --scenario`` names). The device
twins run on the phone named by ``ANDROID_SERIAL`` when its default SMS app is the one the
case is about; those that send need ``PHONED_DEVICE_SEND_TO`` (a number you own).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import sent_as
from phoned.device.actions import Status
from phoned.sim.android.packages import PackageManager
from phoned.sim.ui import apps, screens
from phoned.sim.ui.apps import COMPOSE_ROLE, MessagingApp
from phoned.sim.ui.screens import ActivityRecord, ScreenContext, app_frame
from phoned.sim.ui.views import View

pytestmark = pytest.mark.integration

TO = "+79161234567"
BODY = "Буду в 8 — ok? 👍"
GOOGLE_MESSAGES = "com.google.android.apps.messaging"
AOSP_MESSAGING = "com.android.messaging"


def _needs_app(dut, package: str) -> None:
    from phoned.device.methods import sms

    app = sms.default_sms_app(dut.ctx("sms.draft"))
    if app != package:
        pytest.skip(f"the phone's SMS app is {app}: make {package} the default to run this twin")


def _sent_as(dut, status: Status, to: str, **params):
    return sent_as(dut, status, to, BODY, **params)


def _send_control(out) -> dict:
    (seen,) = [o for o in out.evidence.observations if o.name == "send_control"]
    return dict(seen.value)


@pytest.mark.sdks(34)
@pytest.mark.phone("google-messages:compose-rcs")
def test_a_chat_message_on_the_compose_screen_is_sent_once_and_proved(dut) -> None:
    """Compose screen, chat features on, an encrypted chat: the control at the end of the
    field's row is the send button ("Send end-to-end encrypted message" agrees); the
    conversation proves the chat message, which never reaches the sent box."""
    _needs_app(dut, GOOGLE_MESSAGES)
    out = _sent_as(dut, Status.MET, dut.send_to(TO))
    control = _send_control(out)
    assert control["how"] in ("layout", "resource-id")
    if dut.sim is not None:
        assert control["how"] == "layout"
        assert control["checks"] == ["word 'Send end-to-end encrypted message'"]
        assert out.detail["proved_by"] == "conversation"
        assert out.detail["conversation_status"] == "Delivered"
        assert dut.taps() == [("tap", "1010", "2120")]  # the end of the row, once
        assert dut.phone.sms.messages("sent") == []


@pytest.mark.sdks(30, 34)
@pytest.mark.phone("google-messages:compose-rcs,locale:ru-RU")
def test_a_chat_message_on_a_russian_compose_screen_is_sent_once_without_its_words(
    dut,
) -> None:
    """The same screen in Russian: its descriptions are words nobody outside Google knows,
    so the layout alone tells the send control; the status line is AOSP's own Russian
    («Доставлено», V113)."""
    _needs_app(dut, GOOGLE_MESSAGES)
    out = _sent_as(dut, Status.MET, dut.send_to(TO))
    if dut.sim is not None:
        control = _send_control(out)
        assert control["how"] == "layout" and control["checks"] == []
        assert control["found"]["content_desc"] == "⟦send_encrypted:ru-RU⟧"
        assert out.detail["conversation_status"] == "Доставлено"
        assert len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.phone("google-messages:compose,locale:ru-RU")
def test_an_sms_on_the_compose_screen_is_proved_by_the_sent_box(dut) -> None:
    _needs_app(dut, GOOGLE_MESSAGES)
    out = _sent_as(dut, Status.MET, dut.send_to(TO))
    if dut.sim is not None:
        assert out.detail["proved_by"] == "sent_box" and len(dut.taps()) == 1
        (row,) = dut.phone.sms.messages("sent")
        assert row["body"] == BODY


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.phone("google-messages:compose,locale:ar-EG")
def test_a_right_to_left_compose_row_is_read_mirrored(dut) -> None:
    """Arabic mirrors the row: the send control is the leftmost, past the field's end."""
    out = _sent_as(dut, Status.MET, TO)
    assert _send_control(out)["direction"] == "rtl"
    ((_, x, _),) = dut.taps()
    assert int(x) < 200


@pytest.mark.sdks(34)
@pytest.mark.phone("google-messages:compose")
def test_a_draft_on_the_compose_screen_completes(dut) -> None:
    """The compose field has no id: it is the app's focused EditText holding the body."""
    _needs_app(dut, GOOGLE_MESSAGES)
    out = dut.run("sms.draft", {"to": dut.send_to(TO), "body": BODY})
    assert out.status is Status.MET, out.message


@pytest.mark.sdks(33, 34)
@pytest.mark.phone("aosp-messaging,locale:ru-RU")
def test_aosp_messaging_drafts_and_sends_once(dut) -> None:
    _needs_app(dut, AOSP_MESSAGING)
    draft = dut.run("sms.draft", {"to": dut.send_to(TO), "body": BODY})
    assert draft.status is Status.MET, draft.message
    out = _sent_as(dut, Status.MET, dut.send_to(TO))
    if dut.sim is not None:
        control = _send_control(out)
        assert control["how"] == "layout"
        assert "resource-id com.android.messaging:id/send_message_button" in control["checks"]
        assert "word 'Отправить сообщение'" in control["checks"]
        assert out.detail["proved_by"] == "sent_box" and len(dut.taps()) == 1


# ---- a composer whose send control cannot be told apart ---------------------------------

TWO_SEND_PKG = "org.example.twosend"
TWO_SEND_ACTIVITY = "org.example.twosend.ComposeActivity"


def _two_end_controls(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """A composer with two equally plausible controls at the row's end (stacked, same right
    edge, no ids, no words): a test fixture, not a phone anyone ships."""
    body = rec.state.get("body", "")
    field = View(
        "android.widget.EditText", (40, 2050, 900, 2190), text=body, clickable=True,
        focusable=True, focused=True, action="focus", role=COMPOSE_ROLE,
    )  # fmt: skip
    upper = View("android.widget.ImageView", (920, 2050, 1060, 2120), clickable=True,
                 action="send")  # fmt: skip
    lower = View("android.widget.ImageView", (920, 2120, 1060, 2190), clickable=True)
    title = View("android.widget.TextView", (40, 150, 900, 240), text=rec.state.get("recipient", ""))  # fmt: skip
    return app_frame(TWO_SEND_PKG, [title, field, upper, lower])


@pytest.fixture
def two_send_app() -> Iterator[MessagingApp]:
    app = apps.register_messaging_app(
        MessagingApp(TWO_SEND_PKG, TWO_SEND_ACTIVITY, _two_end_controls)
    )
    yield app
    apps.MESSAGING_APPS.pop(TWO_SEND_PKG, None)
    screens.BUILDERS.pop(TWO_SEND_ACTIVITY, None)


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_two_equally_plausible_send_controls_end_in_cannot_tell_and_no_tap(
    dut, two_send_app
) -> None:
    dut.phone.service(PackageManager).install_sms_app(TWO_SEND_PKG, TWO_SEND_ACTIVITY)
    out = _sent_as(dut, Status.UNSUPPORTED, TO)
    assert out.message.startswith("cannot tell the send button: 2 controls at the end")
    assert out.detail["tapped"] is False
    assert len(out.detail["send_control"]["candidates"]) == 2
    assert dut.taps() == [] and dut.phone.sms.messages("sent") == []
    assert not any(a[:1] == ("input",) and "tap" in a for a in dut.execs())
