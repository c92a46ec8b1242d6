"""The words a messaging app shows, in every language it ships: what a status line means.

The table ``messaging_words.json`` is generated (``scripts/gen_messaging_words.py``) from
each app's own translations, ``res/values*/strings.xml`` at the commit its ``source`` names:
``aosp`` (AOSP Messaging, whose layout and words Google Messages kept) and ``samsung``
(Samsung Messages 16.2's resources); nothing in it is typed by hand. ``meaning`` reads a status line against the phone's
locale first (exact tag, then its language), then against every locale the app ships (an
app can speak another language than the system: per-app languages, API 33+). A text that
means different things in different locales, or nothing in any, has no meaning here: the
caller treats it as unknown, never as sent.

Google Messages' own words are not public; the ones public automation scripts address
(docs/android-variants.md V66) are added for English only, with that source.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import phoned.android_data as android_data

# Google Messages' status words (English), as V66's public scripts address them.
GOOGLE_MESSAGES_EN = {"Sent": "sent", "Delivered": "sent", "Read": "sent", "Not sent": "failed"}


@dataclass(frozen=True)
class Word:
    """A status line's meaning and where the word came from."""

    meaning: str  # "sent", "sending", "failed", "undelivered" (or "send_button")
    locale: str  # the locale whose translation matched, e.g. "ru"
    name: str  # the string resource, e.g. "delivered_status_content_description"

    def source(self) -> str:
        return f"{self.name} ({self.locale})"


def tables() -> dict[str, Any]:
    """Every app's generated table (``android_data/messaging_words.json``)."""
    return android_data.messaging_words()


def table(app: str = "aosp") -> dict[str, Any]:
    """One app's table: ``source``, ``meaning`` (resource -> meaning), ``locales``."""
    return tables()[app]


def normalise(text: str) -> str:
    """Compare status lines as a reader would: NFC, case folded, ``...`` as ``…``, every
    space as one plain space, a final period optional."""
    text = unicodedata.normalize("NFC", text).replace("...", "…")
    text = re.sub(r"[\s\u00a0\u202f]+", " ", text).strip().casefold()
    return text[:-1] if text.endswith(".") else text


def _plural_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"%(?:\d+\$)?d", normalise(template))
    return re.compile(r"\d+".join(re.escape(p) for p in parts) + "$")


@functools.lru_cache(maxsize=512)
def _entries(app: str, locale: str) -> tuple[tuple[str, Word], ...]:
    """(normalised text, Word) for one shipped locale, plurals as regex sources."""
    meanings = table(app)["meaning"]
    strings = table(app)["locales"].get(locale, {})
    out: list[tuple[str, Word]] = []
    for name, value in strings.items():
        if isinstance(value, dict):
            for template in value.values():
                out.append(
                    ("re:" + _plural_regex(template).pattern, Word(meanings[name], locale, name))
                )
        else:
            out.append((normalise(value), Word(meanings[name], locale, name)))
    if app == "aosp" and locale == "en":
        out.extend(
            (normalise(k), Word(v, "en", "google-messages V66"))
            for k, v in GOOGLE_MESSAGES_EN.items()
        )
    return tuple(out)


def _match(text: str, app: str, locale: str) -> list[Word]:
    found = []
    for key, word in _entries(app, locale):
        hit = re.match(key[3:], text) is not None if key.startswith("re:") else key == text
        if hit:
            found.append(word)
    return found


def phone_locales(tag: str | None, app: str = "aosp") -> list[str]:
    """The shipped locales a phone's locale tag (``ru-RU``, ``zh-Hant-TW``) reads first."""
    if not tag:
        return []
    shipped = table(app)["locales"]
    parts = re.split(r"[-_]", tag)
    candidates = [f"{parts[0]}-{parts[-1]}" if len(parts) > 1 else parts[0], parts[0]]
    return [c for c in dict.fromkeys(candidates) if c in shipped]


def meaning(
    text: str, phone_locale: str | None, *, kind: str = "status", app: str = "aosp"
) -> Word | None:
    """What ``text`` means (see the module docstring); ``kind="send_button"`` asks whether
    it is the send button's description instead."""
    wanted = normalise(text)
    if not wanted:
        return None
    first = phone_locales(phone_locale, app)
    rest = [locale for locale in table(app)["locales"] if locale not in first]
    for group in [*([locale] for locale in first), rest]:
        words = [
            w
            for locale in group
            for w in _match(wanted, app, locale)
            if (w.meaning == "send_button") == (kind == "send_button")
        ]
        if words and len({w.meaning for w in words}) == 1:
            return words[0]
    return None  # unknown, or ambiguous across languages
