"""Phone numbers as the phone reads them: libphonenumber (``phonenumbers``) in the phone's region.

Android parses, formats and compares numbers with libphonenumber (``com.android.i18n.
phonenumbers``, frameworks/base ``telephony/java/android/telephony/PhoneNumberUtils.java``),
in the country of the SIM (``TelephonyManager.getSimCountryIso``, the
``gsm.sim.operator.iso-country`` property), else of the network, else of the locale
(``parsers.phone_region`` reads them in that order). This module does the same, so a number
the owner wrote as people write it (``8 916 123-45-67``, ``010-1234-5678``,
``+1 (555) 123-4567``) becomes one canonical form, and two renderings of a number (the
composer's recipient, a conversation title, the sent box's ``address``, a contact's
``data1``/``normalized_number``) compare as the phone compares them:

* ``could_be_number``: the door (params validation, no phone known yet): digits with the
  separators people write, a leading ``+``; nothing else is a number. Digits of any script
  count (``٠١٠٠ ١٢٣ ٤٥٦٧``, fullwidth ``０１０``), as they do for Android and libphonenumber
  (``plain``).
* ``canonical``: the number in E.164 (a short code as its digits) in the phone's region, or
  ``NumberRefused`` with the reason (libphonenumber's ``ValidationResult``); the only form
  that reaches a phone's argv.
* ``same_number``: the one comparison. Both parsed in the region and matched as
  ``PhoneNumberUtils.areSamePhoneNumber`` (API 31+) does: ``isNumberMatch`` EXACT or NSN, or
  SHORT_NSN with equal national numbers and country codes. Text libphonenumber cannot parse
  (no region, a word) falls back to the loose rule of ``PhoneNumberUtils.compare``: equal
  digits, or at least 7 trailing digits (a trunk ``0`` dropped) in common.
* ``shown_format``: how a screen showed a number (``e164``, ``national``, ``international``,
  ``rfc3966``, ``digits``, ``other``), for the evidence.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import phonenumbers
from phonenumbers import MatchType, NumberParseException, PhoneNumberFormat, shortnumberinfo

# What people put between digits: spaces (a no-break space, the ideographic one too), dashes
# (the Unicode ones, the katakana long mark and the fullwidth one too), dots, slashes,
# brackets, in their ASCII and fullwidth forms: libphonenumber's VALID_PUNCTUATION
# (PhoneNumberUtil.java) less its ``x`` and tildes.
_SEPARATORS = re.compile(
    r"[\s\-\u2010-\u2015\u2212\u30fc\uff0d./\uff0e\uff0f()\[\]\uff08\uff09\uff3b\uff3d]"
)
# a number copied from a link: ``tel:`` (RFC 3966), ``sms:`` (RFC 5724) or Android's SENDTO
# ``smsto:``, the number alone after it (no ``;`` parameters, no ``?body=``)
_SCHEME = re.compile(r"^\s*(?:tel|sms|smsto):", re.IGNORECASE)
_DIALABLE = re.compile(r"\+?[0-9]{2,17}")  # after the separators: an optional +, digits
MIN_MATCH = 7  # PhoneNumberUtils.MIN_MATCH: the trailing digits the loose rule needs


# one country (ISO 3166, ``RU``; "" unknown) or the countries a phone reads numbers in
Regions = str | Sequence[str]


class NumberRefused(ValueError):
    """``to`` is no number the phone could dial in its region; the message says why."""


def plain(text: str) -> str:
    """``text`` with its characters as Android reads a number's: every decimal digit as its
    ASCII digit, whatever its script (``PhoneNumberUtils.normalizeNumber`` keeps
    ``Character.digit(c, 10)``; libphonenumber's ``normalizeDigits`` maps the same: Arabic-Indic
    ``٠١٠``, Persian ``۰۹۱``, Devanagari ``०९``, fullwidth ``０１``...), the fullwidth plus as
    ``+`` (libphonenumber's PLUS_CHARS), and the invisible format characters dropped: the
    bidi marks a right-to-left screen wraps a number in (LRE/PDF, ``BidiFormatter.unicodeWrap``
    with ``TextDirectionHeuristics.LTR`` in AOSP Telecomm ``BlockedNumbersUtil.formatNumber``
    and Dialer's ``DialerBidiFormatter``; LRM, isolates), soft hyphens, zero-width spaces."""
    if text.isascii():
        return text
    out = []
    for char in text:
        if char.isdecimal():  # exactly the characters of Unicode category Nd
            out.append(str(unicodedata.decimal(char)))
        elif char == "\uff0b":
            out.append("+")
        elif unicodedata.category(char) != "Cf":
            out.append(char)
    return "".join(out)


def could_be_number(text: str) -> bool:
    """Whether ``text`` is written as a phone number: digits (of any script, ``plain``) with
    spaces, dashes, dots, slashes or brackets between them, at most one leading ``+``
    (``+1 (555) 123-4567``, ``8 916 123-45-67``, ``(916) 123-45-67``, ``٠١٠٠ ١٢٣ ٤٥٦٧``),
    bare or as a link's number (``tel:+1-555-123-4567``)."""
    return bool(_DIALABLE.fullmatch(dialable(text)))


def dialable(text: str) -> str:
    """``text`` in ASCII digits with the separators dropped (``+15551234567``): what the
    phone dials when no region can read it (PhoneNumberUtils.normalizeNumber)."""
    return _SEPARATORS.sub("", unlinked(plain(text)))


def unlinked(text: str) -> str:
    """``text`` without a leading ``tel:``, ``sms:`` or ``smsto:``."""
    return _SCHEME.sub("", text, count=1)


_REASONS = {
    phonenumbers.ValidationResult.INVALID_COUNTRY_CODE: "no country has this calling code",
    phonenumbers.ValidationResult.TOO_SHORT: "too short",
    phonenumbers.ValidationResult.TOO_LONG: "too long",
    phonenumbers.ValidationResult.INVALID_LENGTH: "no number there has this length",
    phonenumbers.ValidationResult.IS_POSSIBLE_LOCAL_ONLY: "too short: the area code is missing",
}


def canonical(text: str, region: str) -> str:
    """The number ``text`` means on a phone in ``region`` (ISO 3166, ``RU``; "" unknown), in
    E.164 (``+79161234567``); a short code of the region (``900``) as its digits; a national
    number with no region to read it in, as its digits. Raises ``NumberRefused`` naming why
    when ``text`` is no possible number there (libphonenumber's ``isPossibleNumber``: the
    lengths of the region's plan)."""
    if not could_be_number(text):
        raise NumberRefused("not a phone number (digits, spaces, dashes, brackets, a leading +)")
    text = unlinked(plain(text))
    digits = dialable(text)
    if not region and not digits.startswith("+"):
        return digits
    try:
        number = phonenumbers.parse(text, region.upper() or None)
    except NumberParseException as exc:
        raise NumberRefused(f"not a phone number in {region or 'any region'}: {exc}") from exc
    why = phonenumbers.is_possible_number_with_reason(number)
    # IS_POSSIBLE_LOCAL_ONLY (no area code) is refused too: it has no E.164 form, as
    # PhoneNumberUtils.formatNumberToE164("1234567", "US") answers null
    if why != phonenumbers.ValidationResult.IS_POSSIBLE:
        if region and not digits.startswith("+") and _short_code(digits, region):
            return digits
        where = region or phonenumbers.region_code_for_number(number) or "its country"
        raise NumberRefused(f"not a possible number in {where}: {_REASONS.get(why, why)}")
    return phonenumbers.format_number(number, PhoneNumberFormat.E164)


def _short_code(digits: str, region: str) -> bool:
    """A short code of ``region`` (``900``, ``112``): libphonenumber's short-number metadata
    knows it, or it has the length of one there and at least 3 digits."""
    short, where = phonenumbers.parse(digits, region.upper()), region.upper()
    if shortnumberinfo.is_valid_short_number_for_region(short, where):
        return True
    return len(digits) >= 3 and shortnumberinfo.is_possible_short_number_for_region(short, where)


def _parsed(text: str, region: str) -> phonenumbers.PhoneNumber | None:
    try:
        return phonenumbers.parse(plain(text), region.upper() or None)
    except NumberParseException:
        return None


def same_number(a: str, b: str, region: Regions = "") -> bool:
    """Whether ``a`` and ``b`` render the same number on a phone reading numbers in
    ``region`` (one ISO code, or the phone's ``reading_regions``): as
    PhoneNumberUtils.areSamePhoneNumber (libphonenumber ``isNumberMatch`` of both parsed in
    a region) in any of them; when either cannot be parsed, as the loose digit rule."""
    regions = (region,) if isinstance(region, str) else tuple(region) or ("",)
    answers = [_match(a, b, r) for r in regions]
    if any(answers):
        return True
    return False if all(x is False for x in answers) else loosely_same(a, b)


def _match(a: str, b: str, region: str) -> bool | None:
    """libphonenumber's answer in one region; None when either text cannot be parsed."""
    pa, pb = _parsed(a, region), _parsed(b, region)
    if pa is None or pb is None:
        return None
    match = phonenumbers.is_number_match(pa, pb)
    if match in (MatchType.EXACT_MATCH, MatchType.NSN_MATCH):
        return True
    if match == MatchType.SHORT_NSN_MATCH:
        return (pa.national_number, pa.country_code) == (pb.national_number, pb.country_code)
    return False if match == MatchType.NO_MATCH else None


def reading_regions(region: str, locale: str) -> tuple[str, ...]:
    """The countries a phone reads numbers in: its own (``region``, the SIM's) and its
    locale's, which AOSP Messaging formats a number that is no contact in
    (``PhoneUtils.formatForDisplay`` uses ``getLocaleCountry``): a US SIM in a phone set to
    Russian shows ``8 (916) 123-45-67``. Each once, ``region`` first."""
    subtags = re.split(r"[-_]", locale)[1:]
    country = next((t.upper() for t in subtags if len(t) == 2 and t.isalpha()), "")
    return tuple(dict.fromkeys(r for r in (region.upper(), country) if r)) or ("",)


def loosely_same(a: str, b: str) -> bool:
    """The fallback for text libphonenumber cannot read: equal digits, or, with at least
    ``MIN_MATCH`` digits each, one's digits (trunk ``0`` dropped) ending the other's."""
    da, db = _digits(a), _digits(b)
    if da == db:
        return bool(da)
    da, db = da.lstrip("0"), db.lstrip("0")
    short, long_ = sorted((da, db), key=len)
    return len(short) >= MIN_MATCH and long_.endswith(short)


def _digits(text: str) -> str:
    return re.sub(r"[^0-9]", "", plain(text))


_FORMATS = (
    ("e164", PhoneNumberFormat.E164),
    ("national", PhoneNumberFormat.NATIONAL),
    ("international", PhoneNumberFormat.INTERNATIONAL),
    ("rfc3966", PhoneNumberFormat.RFC3966),
)


def _renderings(parsed: phonenumbers.PhoneNumber) -> dict[str, str]:
    return {phonenumbers.format_number(parsed, fmt): name for name, fmt in reversed(_FORMATS)}


def shown_format(shown: str, number: str, region: Regions) -> str:
    """How a screen's ``shown`` text writes ``number`` (E.164) on a phone reading numbers in
    ``region``: one of libphonenumber's formats (``e164``, ``national``, ``international``,
    ``rfc3966``), ``digits`` (the same digits without its punctuation), else ``other``."""
    text = plain(shown).strip()
    for where in (region,) if isinstance(region, str) else region:
        parsed = _parsed(number, where)
        renderings = {} if parsed is None else _renderings(parsed)
        if text in renderings:
            return renderings[text]
    digits = _digits(text)
    return "digits" if digits and digits == _digits(number) else "other"
