"""Phone numbers as the simulated phone's own code treats them.

Written from the phone's sources, never from phoned's reading code (issue #32):

* ``compare_loose``: SQLite's ``PHONE_NUMBERS_EQUAL`` as the Telephony and Contacts
  providers use it, modelled on the documented behaviour of ``phone_number_compare_loose``
  (aosp-mirror/platform_external_sqlite ``android/OldPhoneNumberUtils.cpp`` @327380ba):
  compared right to left over the dialable characters (digits, ``*``, ``#``, ``+``); at least
  ``MIN_MATCH`` = 7 of them must agree, or both be the same short string; what is left over
  must then be nothing on one side, an international prefix on both (``+``, ``00``,
  ``011``), a trunk ``0`` against an international prefix with a 1..3 digit country code,
  or, "last resort", at most 3 characters on each side with exactly one starting with
  ``+`` (the Russian and French extra trunk digit: ``+79161234567`` = ``89161234567``).
  Its cases are ``android/PhoneNumberUtilsTest.cpp`` @153c102e.
* ``normalized_number``: ``Phone.NORMALIZED_NUMBER`` as ContactsProvider2 writes it,
  ``PhoneNumberUtils.formatNumberToE164(number, countryIso)`` with the phone's country
  (libphonenumber, as Android itself; None when it is no valid number there).
* ``format_for_display``: AOSP Messaging's ``PhoneUtils.formatForDisplay`` (LineageOS
  android_packages_apps_Messaging ``src/com/android/messaging/util/PhoneUtils.java``
  @068e31fc): a number of at least 6 digits parsed in the locale's country, NATIONAL when
  its country code is that country's, INTERNATIONAL otherwise; anything else as given.
"""

from __future__ import annotations

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberFormat

MIN_MATCH = 7
_DIALABLE = frozenset("0123456789*#+")
_MIN_TO_FORMAT = 6  # PhoneUtils.MINIMUM_PHONE_NUMBER_LENGTH_TO_FORMAT


def _rest(text: str) -> str:
    """The dialable characters of ``text`` (the separators the comparison skips dropped)."""
    return "".join(c for c in text if c in _DIALABLE)


def _intl_prefix(rest: str) -> bool:
    return rest in ("+", "00", "011")


def _trunk_prefix(rest: str) -> bool:
    return rest == "0"


def _intl_prefix_and_cc(rest: str) -> bool:
    for prefix in ("+", "00", "011"):
        cc = rest[len(prefix) :]
        if rest.startswith(prefix) and 1 <= len(cc) <= 3 and cc.isdigit():
            return True
    return False


def _walk(a: str, b: str) -> tuple[int, int, int]:
    """Right to left over both texts, separators skipped, while the dialable characters
    agree: (the matched count, the index in ``a`` and in ``b`` where the walk stopped, -1
    when a text was used up), as the C loop leaves ``matched``, ``ia`` and ``ib``."""
    ia, ib, matched = len(a) - 1, len(b) - 1, 0
    while ia >= 0 and ib >= 0:
        skip_a, skip_b = a[ia] not in _DIALABLE, b[ib] not in _DIALABLE
        if skip_a or skip_b:
            ia, ib = ia - skip_a, ib - skip_b
            continue
        if a[ia] != b[ib]:
            break
        ia, ib, matched = ia - 1, ib - 1, matched + 1
    return matched, ia, ib


def compare_loose(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are "identical enough for caller ID purposes" as Android's
    ``PHONE_NUMBERS_EQUAL`` (``phone_number_compare_loose``) says."""
    if not a or not b:
        return False
    matched, ia, ib = _walk(a, b)
    if matched < MIN_MATCH:  # short strings: only the very same text counts
        return len(a) == len(b) == matched
    if ia < 0 or ib < 0:
        return True
    left_a, left_b = _rest(a[: ia + 1]), _rest(b[: ib + 1])
    if _intl_prefix(left_a) and _intl_prefix(left_b):
        return True
    if (_trunk_prefix(left_a) and _intl_prefix_and_cc(left_b)) or (
        _trunk_prefix(left_b) and _intl_prefix_and_cc(left_a)
    ):
        return True
    # the last resort: a few extra characters on both sides, exactly one starting with +
    return ia < 4 and ib < 4 and a.startswith("+") != b.startswith("+")


def normalized_number(number: str, country: str) -> str | None:
    """``Phone.NORMALIZED_NUMBER`` of ``number`` on a phone in ``country``: its E.164 form
    when libphonenumber finds it a valid number there, else None (the provider leaves it
    null)."""
    try:
        parsed = phonenumbers.parse(number, country.upper() or None)
    except NumberParseException:
        return None
    if not phonenumbers.is_valid_number(parsed):
        return None
    return phonenumbers.format_number(parsed, PhoneNumberFormat.E164)


def format_for_display(number: str, phone_region: str) -> str:
    """``number`` as AOSP Messaging shows a number that is no saved contact on a phone whose
    locale's country is ``phone_region``: NATIONAL (``8 (916) 123-45-67`` in RU) for a number
    of that country, INTERNATIONAL (``+1 555-123-4567``) for another; as given when it has
    fewer than 6 digits or cannot be parsed."""
    if sum(c.isdigit() for c in number) < _MIN_TO_FORMAT:
        return number
    region = phone_region.upper()
    own_code = phonenumbers.country_code_for_region(region) if region else 0
    try:
        parsed = phonenumbers.parse(number, region or None)
    except NumberParseException:
        return number
    national = own_code > 0 and parsed.country_code == own_code
    return phonenumbers.format_number(
        parsed, PhoneNumberFormat.NATIONAL if national else PhoneNumberFormat.INTERNATIONAL
    )


def locale_country(locale: str) -> str:
    """The country of a BCP 47 tag (``ru-RU`` -> ``RU``, ``zh-Hans-CN`` -> ``CN``), as
    ``Locale.getCountry`` answers; "" when it names none."""
    parts = locale.replace("_", "-").split("-")[1:]
    return next((p.upper() for p in parts if len(p) == 2 and p.isalpha()), "")


def sim_country(props: dict[str, str]) -> str:
    """The phone's SIM country (``gsm.sim.operator.iso-country``; on a dual-SIM phone one
    value per slot, comma-separated: the first set one), upper case; "" when none."""
    for value in props.get("gsm.sim.operator.iso-country", "").split(","):
        if len(value.strip()) == 2:
            return value.strip().upper()
    return ""
