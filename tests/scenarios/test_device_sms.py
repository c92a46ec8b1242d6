"""sms.draft / sms.send: composer verified in the hierarchy, approval, sent box, reconcile."""

from __future__ import annotations

import pytest
from helpers import assert_refused_running_nothing
from phoned.device.actions import Status, reconcile
from phoned.sim import scenarios
from phoned.sim.ui.labels import MESSAGING_PKG

pytestmark = pytest.mark.integration

TO = "+15551234567"
BODY = "Running late,\nsee you at 7 — ok? 👍"

# params either SMS method refuses, and the field it names
MALFORMED_PARAMS = [
    ({"to": "+1555; reboot", "body": "x"}, "to"),
    ({"to": "", "body": "x"}, "to"),
    ({"to": TO, "body": ""}, "body"),
    ({"to": TO, "body": "x" * 10_001}, "body"),
    ({"to": TO, "body": "a\x00b"}, "body"),
    ({"to": TO, "body": "x", "sim": 3}, "sim"),
    ({"to": TO, "body": "x", "sim": True}, "sim"),
    ({"to": TO, "body": "x", "sim": "1; reboot"}, "sim"),
]


def test_draft_shows_recipient_and_exact_body_and_never_sends(dut) -> None:
    out = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert out.status is Status.MET, out.message
    observed = out.evidence.target["observed"]
    assert observed["app_in_front"] and observed["recipient_shown"]
    assert out.evidence.target["met"] is True
    ev = out.to_json()["evidence"]
    text = str(ev)
    assert BODY not in text and TO not in text  # redacted everywhere in the evidence
    if dut.sim is not None:
        assert dut.taps() == []
        assert dut.phone.sms.rows == [] or all(r["type"] != 2 for r in dut.phone.sms.rows)
        am = [a for a in dut.execs() if a[:2] == ("am", "start")]
        assert len(am) == 1 and BODY in am[0] and f"smsto:{TO}" in am[0]


@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_draft_on_a_locked_phone_waits_for_unlock(dut) -> None:
    dut.phone.ui.sleep()
    out = dut.run("sms.draft", {"to": TO, "body": "hi"})
    assert out.status is Status.WAITING and out.detail["condition"] == "unlock"
    assert ("input", "keyevent", "KEYCODE_WAKEUP") in dut.execs()
    assert not [a for a in dut.execs() if a[:2] == ("am", "start")]


@pytest.mark.sdks(28, 33)
@pytest.mark.sim_only
def test_permission_dialog_over_the_composer_needs_permission(dut) -> None:
    dut.phone.faults.permission_dialog_packages = {MESSAGING_PKG}
    dut.phone.ui.permission_requests[MESSAGING_PKG] = "android.permission.CAMERA"
    out = dut.run("sms.draft", {"to": TO, "body": "hi"})
    assert out.status is Status.NEEDS_PERMISSION, out.message
    dialog = out.detail["dialog"]
    assert "permissioncontroller" in dialog["package"] or "packageinstaller" in dialog["package"]
    assert any(b.startswith("permission_allow") for b in dialog["buttons"])
    assert dut.taps() == []


@pytest.mark.sim_only
def test_send_needs_approval_then_sends_once(dut) -> None:
    first = dut.run("sms.send", {"to": TO, "body": BODY})
    assert first.status is Status.NEEDS_APPROVAL
    preview = first.detail["preview"]
    assert preview["target"] == TO and preview["data"] == {"text": BODY, "app": MESSAGING_PKG}
    assert dut.taps() == []
    out = dut.run(
        "sms.send", {"to": TO, "body": BODY}, approval_digest=first.detail["preview_digest"]
    )
    assert out.status is Status.MET, out.message
    assert len(dut.taps()) == 1
    sent = [r for r in dut.phone.sms.rows if r["type"] == 2]
    assert [(r["address"], r["body"]) for r in sent] == [(TO, BODY)]


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_an_approval_of_another_preview_is_void(dut) -> None:
    first = dut.run("sms.send", {"to": TO, "body": "one"})
    out = dut.run(
        "sms.send", {"to": TO, "body": "two"}, approval_digest=first.detail["preview_digest"]
    )
    assert out.status is Status.NEEDS_APPROVAL and out.detail["approval_void"] is True
    assert out.detail["preview_digest"] != first.detail["preview_digest"]
    assert dut.taps() == [] and dut.phone.sms.rows == []


@pytest.mark.sdks(30, 35)
@pytest.mark.sim_only
def test_drop_after_the_tap_is_unknown_then_reconciled_without_a_second_tap(
    dut, adb_server
) -> None:
    first = dut.run("sms.send", {"to": TO, "body": BODY})
    dut.phone.faults.drop_at = "sms.after_send_tap"
    out = dut.run(
        "sms.send", {"to": TO, "body": BODY}, approval_digest=first.detail["preview_digest"]
    )
    assert out.status is Status.UNKNOWN, out.message
    hint = out.detail["reconcile"]
    assert hint["method"] == "sms.send"
    adb_server.wait_state(dut.sim.serial, {"device", None}, timeout=10)
    if adb_server.state(dut.sim.serial) != "device":
        adb_server.connect(dut.sim)
    answer = reconcile("sms.send", hint["params"], dut.ctx("sms.send"))
    assert answer == "happened"
    assert len(dut.taps()) == 1
    assert len([r for r in dut.phone.sms.rows if r["type"] == 2]) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.parametrize(("params", "field"), MALFORMED_PARAMS)
def test_invalid_sms_params_send_nothing(dut, params, field) -> None:
    assert_refused_running_nothing(dut, ("sms.draft", "sms.send"), params, field)


# ---- chat (RCS) messages never reach content://sms (issue #11, belief 4) --------------------


def _approved_send(dut, body: str = BODY):
    return dut.approved_send({"to": TO, "body": body})


def _approved_send_on(dut, scenario: str):
    """An approved send on the phone set up as ``scenario`` (``phoned sim --scenario``)."""
    scenarios.apply(dut.phone, scenario)
    return _approved_send(dut)


def _sent_rows(dut) -> list:
    return [r for r in dut.phone.sms.rows if r["type"] == 2]


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_a_chat_message_is_proved_by_the_conversation_not_the_sent_box(dut) -> None:
    out = _approved_send_on(dut, "chat-send")
    assert out.status is Status.MET, out.message
    assert out.detail["proved_by"] == "conversation"
    assert out.detail["conversation_status"] == "Delivered"
    assert _sent_rows(dut) == []  # the provider never saw it
    assert len(dut.taps()) == 1
    assert BODY not in str(out.to_json()["evidence"])


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_a_chat_message_still_sending_is_cannot_tell_and_never_tapped_again(dut) -> None:
    out = _approved_send_on(dut, "chat-send:stuck")
    assert out.status is Status.CANNOT_TELL, out.message
    assert "Sending" in out.message and "do not send it again" in out.message
    hint_params = {"to": TO, "body": BODY, "baseline_id": out.detail["baseline_id"]}
    assert reconcile("sms.send", hint_params, dut.ctx("sms.send")) == "cannot_tell"
    assert len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_a_chat_message_the_app_gave_up_on_is_not_met(dut) -> None:
    out = _approved_send_on(dut, "chat-send:fail")
    assert out.status is Status.NOT_MET, out.message
    assert out.detail["conversation_status"] == "Not sent. Tap to try again."


@pytest.mark.sdks(33)
@pytest.mark.sim_only
def test_a_chat_message_dropped_after_the_tap_reconciles_from_the_conversation(
    dut, adb_server
) -> None:
    scenarios.apply(dut.phone, "chat-send")
    first = dut.run("sms.send", {"to": TO, "body": BODY})
    dut.phone.faults.drop_at = "sms.after_send_tap"
    ctx = dut.ctx("sms.send", approval_digest=first.detail["preview_digest"])
    from phoned.device.actions import execute

    out = execute("sms.send", {"to": TO, "body": BODY}, ctx)
    assert out.status is Status.UNKNOWN, out.message
    adb_server.wait_state(dut.sim.serial, {"device", None}, timeout=10)
    if adb_server.state(dut.sim.serial) != "device":
        adb_server.connect(dut.sim)
    (entry,) = ctx.journal.entries.values()  # what the daemon's journal keeps
    params = {"to": TO, "body": BODY, "journal": {"target": entry["target"]}}
    assert reconcile("sms.send", params, dut.ctx("sms.send")) == "happened"
    assert _sent_rows(dut) == [] and len(dut.taps()) == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_a_chat_message_on_a_screen_that_stops_reading_is_cannot_tell(dut, monkeypatch) -> None:
    """After the tap the hierarchy cannot be read (a killed ``uiautomator dump``): with no
    sent-box row either, nothing decides; the send is never judged failed nor repeated."""
    from phoned.sim import scenarios
    from phoned.sim.ui import model

    scenarios.apply(dut.phone, "u2-broken,chat-send")
    send = model._ACTIONS["send"]

    def send_then_unreadable(ui, arg):
        dut.phone.ui.automation.faults.dump_killed = True
        return send(ui, arg)

    monkeypatch.setitem(model._ACTIONS, "send", send_then_unreadable)
    out = _approved_send(dut)
    assert out.status is Status.CANNOT_TELL, out.message
    assert "could not be read" in out.message
    assert _sent_rows(dut) == [] and len(dut.taps()) == 1


@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_a_phone_that_refuses_input_names_the_setting_and_sends_nothing(dut) -> None:
    """MIUI without "USB debugging (Security settings)": the wake key is refused (the phone
    stays dark) and so is the send tap; each ends unsupported with the setting named."""
    scenarios.apply(dut.phone, "inject-denied")
    dut.phone.ui.sleep()
    out = dut.run("sms.draft", {"to": TO, "body": "hi"})
    assert out.status is Status.UNSUPPORTED, out.message
    assert "USB debugging (Security settings)" in out.message
    dut.phone.ui.unlock()  # the person unlocks it by hand
    sent = _approved_send(dut, "hi")  # a uiautomator2 click is refused the same way
    assert sent.status is Status.UNSUPPORTED, sent.message
    assert "INJECT_EVENTS" in sent.message
    scenarios.apply(dut.phone, "u2-broken")  # the shell path taps with `input tap`
    sent = _approved_send(dut, "hi")
    assert sent.status is Status.UNSUPPORTED, sent.message
    assert "INJECT_EVENTS" in sent.message
    assert _sent_rows(dut) == []


def test_a_real_send_is_proved_by_one_named_witness(dut) -> None:
    """Device variant of the chat tests: whichever way the phone sends (SMS or chat), the
    send is met and the evidence names what proved it. Sends a real message, so it runs only
    with ``PHONED_DEVICE_SEND_TO`` (an emulator's own number, e.g. 5554)."""
    import os

    to = os.environ.get("PHONED_DEVICE_SEND_TO") if dut.sim is None else TO
    if not to:
        pytest.skip("sends a real message: set PHONED_DEVICE_SEND_TO to a number you own")
    first = dut.run("sms.send", {"to": to, "body": "phoned device test"})
    assert first.status is Status.NEEDS_APPROVAL, first.message
    out = dut.run(
        "sms.send",
        {"to": to, "body": "phoned device test"},
        approval_digest=first.detail["preview_digest"],
        settle_timeout=30.0,
    )
    assert out.status is Status.MET, out.message
    assert out.detail["proved_by"] in ("sent_box", "conversation")
