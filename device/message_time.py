"""Is a status line a message's time, in the phone's language? CLDR data through ``babel``.

A sent message in AOSP Messaging shows its time under the bubble
(``ConversationMessageView.updateViewContent`` -> ``Dates.getMessageTimeString``): under a
minute ``posted_now``, under an hour the ``num_minutes_ago`` plural, later today the clock
time (``DateUtils.formatDateTime(FORMAT_SHOW_TIME | FORCE_12_HOUR or FORCE_24_HOUR)``, which
is ICU's ``hm`` or ``Hm`` skeleton for the phone's locale), and on older days a weekday or a
date before the clock time. The words come from the app's translations
(``android_data/messaging_words.json``); the clock time from CLDR, the data ICU formats with
(``babel``'s copy): ``오후 9:17`` in ko-KR, ``21:17`` in ru-RU, ``9:17 PM`` (with U+202F
before the period, CLDR 42+) in en-US, ``晚上9:17`` in zh-TW.

``clock_time`` answers with what matched (the pattern and the locale), so the evidence can
say how a status was read. Pure functions; babel is imported on first use.
"""

from __future__ import annotations

import functools
import re

# CLDR skeletons Android's DateUtils formats a time of day with (12- and 24-hour clocks);
# the phone's ``time_12_24`` setting picks one, so both are accepted.
TIME_SKELETONS = ("hm", "Hm")
_SPACE = r"[\s\u00a0\u202f]*"  # CLDR puts U+202F / U+00A0 where a pattern has a space


def babel_locale(tag: str) -> object | None:
    """``ru-RU`` / ``ko_KR`` / ``zh-Hant-TW`` as a babel Locale; None when CLDR has none."""
    # lazy: babel is loaded only by the verbs that use it (start-up)
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(tag.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        language = re.split(r"[-_]", tag)[0]
        try:
            return Locale.parse(language) if language and language != tag else None
        except (UnknownLocaleError, ValueError, TypeError):
            return None


def _day_periods(locale: object) -> list[str]:
    names: set[str] = set()
    periods = locale.day_periods  # type: ignore[attr-defined]
    for context in ("format", "stand-alone"):
        for width in ("abbreviated", "wide", "narrow"):
            names.update(v for v in dict(periods.get(context, {}).get(width, {})).values() if v)
    return sorted(names, key=len, reverse=True)


def _field_regex(char: str, count: int, periods: list[str]) -> str:
    if char in "hHkK":
        return r"\d{1,2}"
    if char == "m":
        return r"\d{2}" if count >= 2 else r"\d{1,2}"
    if char in "aB b":
        alternatives = [re.escape(p) for p in periods] + [r"[AaPp]\.?\s?[Mm]\.?"]
        return "(?:" + "|".join(alternatives) + ")"
    return ".+?"  # a field these skeletons do not use


def pattern_regex(pattern: str, periods: list[str]) -> str:
    """A CLDR time pattern (``a h:mm``) as a regular expression over its output."""
    # lazy: babel is loaded only by the verbs that use it (start-up)
    from babel.dates import tokenize_pattern

    parts = []
    for kind, value in tokenize_pattern(pattern):
        if kind == "field":
            parts.append(_field_regex(str(value[0]), int(value[1]), periods))
        else:  # literal text: each run of spaces may be any space CLDR uses, or none
            parts.extend(
                _SPACE if piece.isspace() else re.escape(piece)
                for piece in re.split(r"(\s+)", str(value))
                if piece
            )
    return "".join(parts)


@functools.lru_cache(maxsize=64)
def _clock_patterns(tag: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    locale = babel_locale(tag)
    if locale is None:
        return ()
    periods = _day_periods(locale)
    found = []
    for skeleton in TIME_SKELETONS:
        pattern = locale.datetime_skeletons.get(skeleton)  # type: ignore[attr-defined]
        if pattern is None:
            continue
        text = pattern.pattern if hasattr(pattern, "pattern") else str(pattern)
        found.append((text, re.compile(rf"(?<!\d){pattern_regex(text, periods)}(?!\d)")))
    return tuple(found)


def clock_time(text: str, tag: str) -> str | None:
    """The CLDR pattern of ``tag`` (``ko-KR``) that a time of day in ``text`` matches, as
    ``"ko-KR a h:mm"``; None when ``text`` holds no time of day in that locale's forms. A
    weekday or a date around the time (older messages) does not stop the match."""
    for pattern, regex in _clock_patterns(tag):
        if regex.search(text):
            return f"{tag} {pattern}"
    return None


@functools.lru_cache(maxsize=64)
def _calendar_words(tag: str) -> tuple[str, ...]:
    """Weekday and month names (every width) of ``tag``, longest first: what an older
    message's stamp puts around its clock time (``Пн, 21:17``, ``3월 2일 오후 9:17``)."""
    locale = babel_locale(tag)
    if locale is None:
        return ()
    names: set[str] = set()
    for table in (locale.days, locale.months):  # type: ignore[attr-defined]
        for context in ("format", "stand-alone"):
            for width in ("abbreviated", "wide", "short"):
                names.update(v for v in dict(table.get(context, {}).get(width, {})).values() if v)
    return tuple(sorted(names, key=len, reverse=True))


def timestamp(text: str, tag: str) -> str | None:
    """``clock_time`` when ``text`` is nothing but a message stamp: the time of day plus, at
    most, weekday or month names, digits and punctuation (``ru-RU HH:mm`` for ``Пн, 21:17``);
    None when any other word is left (``Not sent 21:17`` is no stamp)."""
    for pattern, regex in _clock_patterns(tag):
        match = regex.search(text)
        if match is None:
            continue
        rest = (text[: match.start()] + " " + text[match.end() :]).casefold()
        for name in _calendar_words(tag):
            rest = rest.replace(name.casefold(), " ")
        if re.fullmatch(r"[\W\d_]*", rest):
            return f"{tag} {pattern}"
    return None
