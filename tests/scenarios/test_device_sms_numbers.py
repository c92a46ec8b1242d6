"""sms.draft / sms.send with numbers as people write them and phones show them (issue 33).

A phone reads numbers in its region (the SIM's country, ``sim-country:CC``); AOSP Messaging
shows a number that is no contact in the national format of the locale's country
(``PhoneUtils.formatForDisplay``). Each simulated case has a device twin that runs on the phone
named by ``ANDROID_SERIAL`` when its region fits, and skips saying why otherwise; the twins
that send need ``PHONED_DEVICE_SEND_TO`` (a number you own, as E.164).
"""

from __future__ import annotations

import os

import phonenumbers
import pytest
from phoned.device.actions import Status

pytestmark = pytest.mark.integration

RU_PHONE = "locale:ru-RU,sim-country:ru"


def _needs_region(dut, region: str) -> None:
    where = dut.device.identity.region
    if where != region:
        pytest.skip(f"the phone reads numbers in {where or 'no region'}: needs a {region} SIM")


def _as_written(dut, written: str, region: str) -> tuple[str, str]:
    """(the number as a person writes it, its E.164) for this phone: the simulated case's,
    or ``PHONED_DEVICE_SEND_TO`` in the phone's national format on a device."""
    if dut.sim is not None:
        return written, phonenumbers.format_number(
            phonenumbers.parse(written, region), phonenumbers.PhoneNumberFormat.E164
        )
    to = os.environ.get("PHONED_DEVICE_SEND_TO")
    if not to:
        pytest.skip("sends a real message: set PHONED_DEVICE_SEND_TO to a number you own")
    parsed = phonenumbers.parse(to, region)
    national = phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.NATIONAL)
    return national, phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


@pytest.mark.sdks(33, 34)
@pytest.mark.phone(RU_PHONE)
def test_draft_to_e164_completes_where_messages_shows_the_national_format(dut) -> None:
    """The done-when of issue 33: +79161234567 shows as 8 (916) 123-45-67 on a phone in
    Russia; the draft completes (it failed verification_failed before)."""
    _needs_region(dut, "RU")
    out = dut.run("sms.draft", {"to": "+79161234567", "body": "Буду в 8"})
    assert out.status is Status.MET, out.message
    assert out.detail["region"] == "RU"
    ev = out.to_json()["evidence"]
    assert ev["device"]["region"] == "RU"
    assert "+79161234567" not in str(ev)  # the number stays redacted
    if dut.sim is not None:
        assert out.detail["recipient_shown_as"] == "number"
        assert out.detail["recipient_format"] == "national"
        assert "8 (916) 123-45-67" in dut.phone.ui.hierarchy_xml(u2=False)
        assert dut.taps() == []


@pytest.mark.sdks(34)
@pytest.mark.parametrize(
    ("written", "region"),
    [
        pytest.param("8 916 123-45-67", "RU", marks=pytest.mark.phone(RU_PHONE), id="ru"),
        pytest.param(
            "010-1234-5678", "KR", marks=pytest.mark.phone("locale:ko-KR,sim-country:kr"),
            id="kr",
        ),
        pytest.param("+1 (555) 123-4567", "US", marks=pytest.mark.phone("sim-country:us"),
                     id="us"),
    ],
)  # fmt: skip
def test_a_number_as_people_write_it_is_sent_once_after_approval(
    dut, written: str, region: str
) -> None:
    _needs_region(dut, region)
    to, e164 = _as_written(dut, written, region)
    first = dut.run("sms.send", {"to": to, "body": "phoned numbers"})
    assert first.status is Status.NEEDS_APPROVAL, first.message
    assert first.detail["preview"]["target"] == e164  # what is approved is what is sent
    out = dut.run(
        "sms.send",
        {"to": to, "body": "phoned numbers"},
        approval_digest=first.detail["preview_digest"],
        settle_timeout=3.0 if dut.sim is not None else 30.0,
    )
    assert out.status is Status.MET, out.message
    assert out.detail["proved_by"] == "sent_box" and out.detail["region"] == region
    if dut.sim is not None:
        assert len(dut.taps()) == 1
        sent = [r for r in dut.phone.sms.rows if r["type"] == 2]
        assert [(r["address"], r["body"]) for r in sent] == [(e164, "phoned numbers")]
        am = [a for a in dut.execs() if a[:2] == ("am", "start")]
        assert len(am) == 1 and f"smsto:{e164}" in am[0] and not any(written in a for a in am[0])


@pytest.mark.sdks(34)
@pytest.mark.phone(RU_PHONE)
def test_a_number_impossible_in_the_region_is_refused_before_the_phone_is_touched(dut) -> None:
    _needs_region(dut, "RU")
    out = dut.run("sms.send", {"to": "8 916 123", "body": "hi"})
    assert out.status is Status.INVALID_PARAMS, out.message
    assert out.detail["field"] == "to" and "too short" in out.message
    if dut.sim is not None:
        assert not [a for a in dut.execs() if a[:2] == ("am", "start")] and dut.taps() == []
