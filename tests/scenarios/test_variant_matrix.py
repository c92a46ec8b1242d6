"""The variant matrix (issue #33): ``sms.draft`` and ``sms.send`` over every combination of
phone language × SMS app and its screen generation × recipient (how the number is given and
so how the app shows it) × how the send ends, through the real adb server.

The SMS app rows are not listed here: each variant record of the simulator declares its own
(``phoned.sim.variants.base.SmsAppRow``: Google Messages' generations, AOSP Messaging, Samsung
Messages with one SIM and with two). A new variant is one row there, and every combination
it makes is generated below. The test ids list each combination
(``pytest tests/scenarios/test_variant_matrix.py -v``).

Expected verdicts, the same rule for every cell:

* draft: completed, the recipient seen as the contact's name (a contact only) or as one of
  libphonenumber's renderings of the number (the app shows it E.164, nationally or
  internationally);
* send as SMS: completed, exactly one row in the sent box, one tap;
* send as chat: completed, nothing in the sent box, one tap;
* send that fails: not met, one tap and never a second;
* an app phoned cannot be told which control sends (two SIMs, no ``sim`` param): refused
  naming what is missing, nothing tapped (an honest "cannot tell").

The device twin runs the cells that fit the phone named by ``ANDROID_SERIAL`` (its language,
region and SMS app; only the SMS outcome, to ``PHONED_DEVICE_SEND_TO``) and skips the rest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import phonenumbers
import pytest
from phoned.device.actions import Status
from phoned.sim.variants import variants
from phoned.sim.variants.base import SmsAppRow

pytestmark = [pytest.mark.integration, pytest.mark.sdks(34)]

BODY = "Буду в 8 — ok? 👍 세계"
FOREIGN = "+4915123456789"  # a German mobile: another country than every phone's below


@dataclass(frozen=True)
class Language:
    """A phone's language and the country its SIM is from, with a local number."""

    locale: str
    sim_country: str
    local: str  # a mobile number of that country, E.164
    written: str  # the same number as its owner writes it
    contact: str  # a saved contact's name in that language


LANGUAGES = (
    Language("en-US", "us", "+16502530000", "(650) 253-0000", "Anna Miller"),
    Language("ru-RU", "ru", "+79161234567", "8 916 123-45-67", "Анна Иванова"),
    Language("ko-KR", "kr", "+821012345678", "010-1234-5678", "김민준"),
    # written in the digits an Arabic keyboard types (Arabic-Indic), as Egyptians write it
    Language("ar-EG", "eg", "+201001234567", "٠١٠٠ ١٢٣ ٤٥٦٧", "أحمد علي"),
)
RECIPIENTS = ("e164", "written", "foreign", "contact")


def _rows() -> list[SmsAppRow]:
    return [row for variant in variants() for row in variant.sms_apps]


def _spec(lang: Language, row: SmsAppRow, recipient: str, outcome: str) -> str:
    parts = [f"locale:{lang.locale}", f"sim-country:{lang.sim_country}"]
    parts += [row.spec] if row.spec else []
    parts += {"sms": [], "chat": ["chat-send"], "failed": ["chat-send:fail"]}[outcome]
    if recipient == "contact":
        parts.append(f"contact:{lang.contact}={lang.local}")
    return ",".join(parts)


def _to(lang: Language, recipient: str) -> str:
    return {
        "e164": lang.local,
        "written": lang.written,
        "foreign": FOREIGN,
        "contact": lang.contact,
    }[recipient]


def _cells(with_outcome: bool) -> list[object]:
    cells = []
    for row in _rows():
        for lang in LANGUAGES:
            for recipient in RECIPIENTS:
                outcomes = row.outcomes if with_outcome else row.outcomes[:1]
                for outcome in outcomes:
                    name = f"{row.label}|{lang.locale}|{recipient}"
                    cells.append(
                        pytest.param(
                            (row, lang, recipient, outcome),
                            id=f"{name}|{outcome}" if with_outcome else name,
                            marks=pytest.mark.phone(_spec(lang, row, recipient, outcome)),
                        )
                    )
    return cells


def _fits_the_device(dut, lang: Language, recipient: str, outcome: str) -> str:
    """On a real phone: the number to use, or skip when the cell is not this phone's."""
    from phoned.device.methods import sms

    if dut.device.identity.region != lang.sim_country.upper():
        pytest.skip(f"the phone's region is {dut.device.identity.region}, the cell's is not")
    if outcome != "sms" or recipient in ("contact", "foreign"):
        pytest.skip("on a device the matrix sends only SMS to the owner's own number")
    app = sms.default_sms_app(dut.ctx("sms.draft"))
    if app is None:
        pytest.skip("the phone has no SMS app")
    to = os.environ.get("PHONED_DEVICE_SEND_TO")
    if not to:
        pytest.skip("sends a real message: set PHONED_DEVICE_SEND_TO to a number you own")
    parsed = phonenumbers.parse(to, lang.sim_country.upper())
    fmt = phonenumbers.PhoneNumberFormat
    return phonenumbers.format_number(parsed, fmt.NATIONAL if recipient == "written" else fmt.E164)


def _recipient_seen(detail: dict, recipient: str) -> None:
    """The recipient was read off the screen: a contact by its name (Samsung Messages also
    prints the number under it, composer_title_number, and phoned may have read that), a
    number in one of libphonenumber's renderings."""
    if detail["recipient_shown_as"] == "contact name":
        assert recipient == "contact", detail
        return
    assert detail["recipient_shown_as"] == "number", detail
    assert detail["recipient_format"] in ("e164", "national", "international"), detail


def test_the_matrix_is_every_combination_of_its_rows() -> None:
    """A row adds every combination it makes: languages × recipients (× its outcomes)."""
    rows = _rows()
    labels = {row.label for row in rows}
    assert {"google-messages:compose", "aosp-messaging", "samsung-messages:dual"} <= labels
    per_language = len(RECIPIENTS) * len(LANGUAGES)
    assert len(_cells(False)) == len(rows) * per_language
    assert len(_cells(True)) == sum(len(row.outcomes) for row in rows) * per_language


def _cell_to(dut, lang: Language, recipient: str, need: str) -> str:
    """A cell's ``to``: the simulated phone's contact or number, or on a real phone the one
    set up for it (``_fits_the_device`` skips a cell the phone cannot show)."""
    if dut.sim is not None:
        return _to(lang, recipient)
    return _fits_the_device(dut, lang, recipient, need)


@pytest.mark.parametrize("cell", _cells(False))
def test_a_draft_completes_in_every_combination(dut, cell) -> None:
    _row, lang, recipient, _outcome = cell
    to = _cell_to(dut, lang, recipient, "sms")
    out = dut.run("sms.draft", {"to": to, "body": BODY})
    assert out.status is Status.MET, out.message
    _recipient_seen(out.detail, recipient)
    if dut.sim is not None:
        assert dut.taps() == [] and dut.phone.sms.messages("sent") == []  # a draft sends nothing


@pytest.mark.parametrize("cell", _cells(True))
def test_a_send_ends_as_its_outcome_in_every_combination(dut, cell) -> None:
    row, lang, recipient, outcome = cell
    to = _cell_to(dut, lang, recipient, outcome)
    first = dut.run("sms.send", {"to": to, "body": BODY})
    assert first.status is Status.NEEDS_APPROVAL, first.message
    out = dut.run(
        "sms.send",
        {"to": to, "body": BODY},
        approval_digest=first.detail["preview_digest"],
        settle_timeout=3.0 if dut.sim is not None else 30.0,
    )
    if dut.sim is None:
        assert out.status is Status.MET, out.message
        return
    taps, sent = dut.taps(), [m for m in dut.phone.sms.messages("sent") if m["body"] == BODY]
    if row.send_refused is not None:
        assert out.status is Status.UNSUPPORTED, out.message
        assert row.send_refused in out.message and taps == [] and sent == []
        return
    _recipient_seen(out.detail, recipient)
    if outcome == "failed":
        assert out.status is Status.NOT_MET, out.message
    else:
        assert out.status is Status.MET, out.message
    assert len(taps) == 1, taps
    assert len(sent) == (1 if outcome == "sms" else 0), sent
