"""Phone numbers on the daemon (``device/phone_numbers.py``): the door, the canonical form in
the phone's region, the one comparison and how a screen showed a number."""

from __future__ import annotations

import itertools

import phonenumbers
import pytest
from hypothesis import given
from hypothesis import strategies as st
from phoned.device import parsers, phone_numbers
from phoned.device.methods.sms import Sms
from phonenumbers import PhoneNumberFormat, PhoneNumberType
from pydantic import ValidationError


@pytest.mark.parametrize(
    ("props", "region"),
    [
        ("[gsm.sim.operator.iso-country]: [ru]\n[persist.sys.locale]: [en-US]", "RU"),
        ("[gsm.sim.operator.iso-country]: [,kr]\n", "KR"),  # dual SIM, slot 1 empty
        ("[gsm.sim.operator.iso-country]: []\n[gsm.operator.iso-country]: [de]\n", "DE"),
        ("[persist.sys.locale]: [zh-Hans-CN]\n", "CN"),
        ("[ro.product.locale]: [ko-KR]\n", "KR"),
        ("[persist.sys.locale]: [fr]\n", ""),
        ("", ""),
    ],
)
def test_phone_region_sim_then_network_then_locale(props: str, region: str) -> None:
    assert parsers.phone_region(props) == region


@pytest.mark.parametrize(
    "text",
    ["+1 (555) 123-4567", "8 916 123-45-67", "010-1234-5678", "(916) 123-45-67",
     "00 44 7700 900123", "+49.151.1234.5678", "900", "5551234567"],
)  # fmt: skip
def test_door_takes_numbers_as_people_write_them(text: str) -> None:
    assert phone_numbers.could_be_number(text)
    assert Sms(to=text, body="hi").to == text  # kept as given until the phone is known


@pytest.mark.parametrize("text", ["+1555; reboot", "+1 555 abc", "1", "+", "++15551234567"])
def test_door_refuses_text_that_is_neither_number_nor_name(text: str) -> None:
    with pytest.raises(ValidationError, match="to"):
        Sms(to=text, body="hi")


def test_a_bracket_starts_a_number_not_a_name() -> None:
    # issue 33: "(916) 123-45-67" was taken for a contact's name
    assert phone_numbers.could_be_number("(916) 123-45-67")
    assert Sms(to="Ivan Petrov", body="hi").to == "Ivan Petrov"


@pytest.mark.parametrize(
    ("text", "region", "e164"),
    [
        ("8 916 123-45-67", "RU", "+79161234567"),
        ("+79161234567", "RU", "+79161234567"),
        ("010-1234-5678", "KR", "+821012345678"),
        ("+1 (555) 123-4567", "US", "+15551234567"),
        ("650 2910000", "US", "+16502910000"),  # PhoneNumberUtilsTest.testFormatNumberToE164
        ("00 44 20 7031 3000", "DE", "+442070313000"),
        ("900", "RU", "900"),  # a short code of the region stays its digits
        ("5551234567", "", "5551234567"),  # no region: the digits, as before
    ],
)
def test_canonical_is_e164_in_the_phones_region(text: str, region: str, e164: str) -> None:
    assert phone_numbers.canonical(text, region) == e164


@pytest.mark.parametrize(
    ("text", "region", "why"),
    [("12", "RU", "too short"), ("+7 916 123 45 67 89 012", "RU", "too long"),
     ("+999 1234 5678", "RU", "not a phone number in RU"), ("1+2", "US", "not a phone number")],
)  # fmt: skip
def test_canonical_refuses_with_the_reason(text: str, region: str, why: str) -> None:
    with pytest.raises(phone_numbers.NumberRefused, match=why):
        phone_numbers.canonical(text, region)


# AOSP's own cases that hold on a phone of that country (aosp-mirror/platform_external_sqlite
# android/PhoneNumberUtilsTest.cpp @153c102e5ba0ff0e8df7a862c8f4e449007d04ad)
AOSP_IN_REGION = [
    ("+79161234567", "89161234567", "RU", True),
    ("+33123456789", "0123456789", "FR", True),
    ("+36 1 234 5678", "06 1234-5678", "HU", True),
    ("+31771234567", "0771234567", "NL", True),
    ("090-1234-5678", "+819012345678", "JP", True),
    ("090(1234)5678", "+819012345678", "JP", True),
    ("090-1234-5678", "+81-90-1234-5678", "JP", True),
    ("+818012345678", "+819012345678", "JP", False),
    ("090-1234-5678", "080-1234-5678", "JP", False),
    ("080-1234-5678", "+819012345678", "JP", False),
    ("290-1234-5678", "+819012345678", "JP", False),
    ("+19012345678", "+819012345678", "JP", False),
    ("650-253-0000", "6502530000", "US", True),
    ("650-253-0000", "1-650-253-0000", "US", True),
    ("+1 650-253-0000", "6502530000", "US", True),
    ("001 650-253-0000", "+16502530000", "DE", True),
    ("550-450-3605", "+14504503605", "US", False),
    ("5504503605", "+14504503605", "US", False),
    ("+44 207 792 3490", "020 7792 3490", "GB", True),
]


@pytest.mark.parametrize(("a", "b", "region", "same"), AOSP_IN_REGION)
def test_same_number_on_aosp_cases(a: str, b: str, region: str, same: bool) -> None:
    assert phone_numbers.same_number(a, b, region) is same
    assert phone_numbers.same_number(b, a, region) is same


REGIONS = ["RU", "KR", "US", "DE", "GB", "FR", "IN", "BR", "JP", "CN", "UA", "KZ", "IT", "ES",
           "MX", "AU"]  # fmt: skip
FORMATS = [PhoneNumberFormat.E164, PhoneNumberFormat.NATIONAL, PhoneNumberFormat.INTERNATIONAL,
           PhoneNumberFormat.RFC3966]  # fmt: skip


def _renderings(region: str) -> tuple[str, list[str]]:
    example = phonenumbers.example_number_for_type(region, PhoneNumberType.MOBILE)
    assert example is not None
    return (
        phonenumbers.format_number(example, PhoneNumberFormat.E164),
        [phonenumbers.format_number(example, f) for f in FORMATS],
    )


@pytest.mark.parametrize("region", REGIONS)
def test_every_rendering_of_a_regions_number_is_the_same_number(region: str) -> None:
    e164, shown = _renderings(region)
    for a, b in itertools.product(shown, repeat=2):
        assert phone_numbers.same_number(a, b, region), (a, b)
    for rendering in shown[:3]:  # what people write: E.164, national, international
        assert phone_numbers.canonical(rendering, region) == e164
    # from abroad, the national form is another country's; the international ones still match
    abroad = "JP" if region != "JP" else "US"
    assert phone_numbers.same_number(shown[2], e164, abroad)


@pytest.mark.parametrize("region", REGIONS)
def test_a_different_number_is_not_the_same(region: str) -> None:
    e164, shown = _renderings(region)
    other = e164[:-1] + ("0" if e164[-1] != "0" else "1")
    for rendering in shown:
        assert not phone_numbers.same_number(rendering, other, region), rendering
    others = [_renderings(r)[0] for r in REGIONS if r != region]
    assert not any(phone_numbers.same_number(e164, o, region) for o in others)


@pytest.mark.parametrize(
    ("shown", "region", "how"),
    [("8 (916) 123-45-67", "RU", "national"), ("+7 916 123-45-67", "RU", "international"),
     ("+79161234567", "RU", "e164"), ("tel:+7-916-123-45-67", "RU", "rfc3966"),
     ("79161234567", "RU", "digits"), ("Ivan", "RU", "other")],
)  # fmt: skip
def test_shown_format_names_how_the_screen_wrote_it(shown: str, region: str, how: str) -> None:
    assert phone_numbers.shown_format(shown, "+79161234567", region) == how


@given(st.text(max_size=30), st.text(max_size=30), st.sampled_from(["", "RU", "US", "zz"]))
def test_unreadable_text_never_crashes_the_comparison(a: str, b: str, region: str) -> None:
    assert phone_numbers.same_number(a, b, region) in (True, False)
    assert isinstance(phone_numbers.shown_format(a, b, region), str)


def test_a_us_sim_in_a_russian_phone_reads_the_national_russian_rendering() -> None:
    # Messaging formats with the locale's country, the providers with the SIM's
    regions = phone_numbers.reading_regions("US", "ru-RU")
    assert regions == ("US", "RU")
    assert phone_numbers.same_number("8 (916) 123-45-67", "+79161234567", regions)
    assert not phone_numbers.same_number("8 (916) 123-45-67", "+79161234568", regions)
    assert phone_numbers.shown_format("8 (916) 123-45-67", "+79161234567", regions) == "national"
    assert phone_numbers.reading_regions("", "") == ("",)


# Digits of other scripts: Android keeps any ``Character.digit(c, 10)`` (PhoneNumberUtils.
# normalizeNumber), libphonenumber maps them (normalizeDigits); a phone set to Arabic, Persian
# or Hindi offers these on its keyboard, and fullwidth ones come from Japanese and Chinese IMEs
ZEROS = {"ascii": "0", "arabic-indic": "\u0660", "persian": "\u06f0", "devanagari": "\u0966",
         "bengali": "\u09e6", "thai": "\u0e50", "fullwidth": "\uff10"}  # fmt: skip
# the fullwidth keyboard types its plus and punctuation fullwidth too
FULLWIDTH = str.maketrans({"+": "\uff0b", "-": "\uff0d", "(": "\uff08", ")": "\uff09",
                           " ": "\u3000", ".": "\uff0e", "/": "\uff0f"})  # fmt: skip
DIGIT_REGIONS = ["EG", "IR", "IN", "BD", "TH", "JP", "CN", "RU", "US", "KR"]


def _in_script(text: str, script: str) -> str:
    zero = ord(ZEROS[script])
    written = "".join(chr(zero + int(c)) if c.isdigit() else c for c in text)
    return written.translate(FULLWIDTH) if script == "fullwidth" else written


@pytest.mark.parametrize(
    ("script", "region", "fmt"),
    list(itertools.product(ZEROS, DIGIT_REGIONS, FORMATS[:3])),
)
def test_a_number_in_any_scripts_digits_is_the_same_number(
    script: str, region: str, fmt: int
) -> None:
    example = phonenumbers.example_number_for_type(region, PhoneNumberType.MOBILE)
    assert example is not None
    e164 = phonenumbers.format_number(example, PhoneNumberFormat.E164)
    written = _in_script(phonenumbers.format_number(example, fmt), script)
    assert phone_numbers.could_be_number(written), written
    assert Sms(to=written, body="hi").to == written
    # libphonenumber reads it on its own as the same number: the oracle of this matrix
    oracle = phonenumbers.parse(written, region)
    assert phonenumbers.format_number(oracle, PhoneNumberFormat.E164) == e164
    assert phone_numbers.canonical(written, region) == e164  # ASCII E.164 on the argv
    assert phone_numbers.same_number(written, e164, region)
    other = e164[:-1] + ("0" if e164[-1] != "0" else "1")
    assert not phone_numbers.same_number(written, other, region)
    assert phone_numbers.dialable(written).lstrip("+").isascii()


@pytest.mark.parametrize(
    "text", ["+\u0661 \u0665\u0665\u0665 abc", "\u2460\u2461\u2462\u2463\u2464\u2465\u2466",
             "+\u00b9 555 123 4567", "\u0661\u0662; reboot"],
)  # fmt: skip
def test_other_scripts_letters_and_digit_lookalikes_are_still_refused(text: str) -> None:
    # circled and superscript digits are no decimal digits (Character.digit answers -1)
    assert not phone_numbers.could_be_number(text)
    with pytest.raises(ValidationError, match="to"):
        Sms(to=text, body="hi")


@pytest.mark.parametrize(
    ("shown", "how"),
    [("\u202a+7 916 123-45-67\u202c", "international"),  # BidiFormatter.unicodeWrap, LTR
     ("\u200e8 (916) 123-45-67", "national"), ("\u2066+79161234567\u2069", "e164"),
     ("\u0668 (\u0669\u0661\u0666) \u0661\u0662\u0663-\u0664\u0665-\u0666\u0667", "national")],
)  # fmt: skip
def test_a_number_a_right_to_left_screen_wraps_reads_as_written(shown: str, how: str) -> None:
    assert phone_numbers.same_number(shown, "+79161234567", "RU")
    assert phone_numbers.shown_format(shown, "+79161234567", "RU") == how


def test_without_a_region_native_digits_become_ascii_digits() -> None:
    assert phone_numbers.canonical("\u0665\u0665\u0665 \u0661\u0662\u0663\u0664", "") == "5551234"
    persian = "".join(chr(0x06F0 + int(c)) for c in "09121234567")
    assert phone_numbers.loosely_same(persian, "+989121234567")
    assert not phone_numbers.loosely_same(persian, "+989121234568")


@pytest.mark.parametrize(
    ("text", "region", "e164"),
    [("tel:+1-555-123-4567", "US", "+15551234567"), ("TEL:8-916-123-45-67", "RU", "+79161234567"),
     ("sms:+79161234567", "KR", "+79161234567"), ("smsto:010-1234-5678", "KR", "+821012345678"),
     (" tel:\u0660\u0661\u0660\u0660 \u0661\u0662\u0663 \u0664\u0665\u0666\u0667", "EG",
      "+201001234567")],
)  # fmt: skip
def test_a_number_copied_from_a_link_is_its_number(text: str, region: str, e164: str) -> None:
    # tel: (RFC 3966), sms: (RFC 5724), Android's SENDTO smsto:, as a planner copies them
    assert phone_numbers.could_be_number(text)
    assert Sms(to=text, body="hi").to == text
    assert phone_numbers.canonical(text, region) == e164


@pytest.mark.parametrize(
    "text", ["tel:+1555;reboot", "tel:", "sms:+79161234567?body=hi", "tel:Ivan", "+1 tel:5551234"]
)
def test_a_link_that_holds_no_number_is_refused_never_looked_up(text: str) -> None:
    assert not phone_numbers.could_be_number(text)
    with pytest.raises(ValidationError, match="not a phone number"):
        Sms(to=text, body="hi")
