"""The words and times the simulated Messages app draws, in the phone's language.

The app ships AOSP Messaging's translations (``android_data/messaging_words.json``, generated from
its ``res/values*/strings.xml``); the simulator looks a string up the way Android's resource
system does (language and region, then the language, then the default) and formats a
message's time as ``Dates.getTimestamp`` does: under a minute ``posted_now``, under an hour
the ``num_minutes_ago`` plural (CLDR plural rules through ``babel``), later the time of day
in the locale's ``hm`` / ``Hm`` CLDR skeleton, as ``DateUtils.formatDateTime`` draws it.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

import phoned.android_data as android_data


def _strings(locale: str, app: str = "aosp") -> list[dict[str, Any]]:
    """``app``'s strings for ``locale`` in Android's lookup order: language and region,
    the language, the default (English)."""
    shipped = android_data.messaging_words()[app]["locales"]
    parts = locale.replace("_", "-").split("-")
    tags = [f"{parts[0]}-{parts[-1]}", parts[0], "en"] if len(parts) > 1 else [parts[0], "en"]
    return [shipped[t] for t in dict.fromkeys(tags) if t in shipped]


def word(locale: str, name: str, app: str = "aosp") -> str:
    """String resource ``name`` as ``app`` (a ``messaging_words`` table) shows it on a phone
    speaking ``locale``."""
    for strings in _strings(locale, app):
        if isinstance(strings.get(name), str):
            return str(strings[name])
    raise KeyError(name)


def _babel(locale: str) -> Any:
    from babel import Locale  # lazy: babel is loaded only by the verbs that use it (start-up)

    try:
        return Locale.parse(locale.replace("-", "_"))
    except Exception:
        return Locale.parse("en")


def stamp(locale: str, age_s: float, hour24: bool | None = None) -> str:
    """A sent message's time line ``age_s`` seconds after it was sent."""
    if age_s < 60:
        return word(locale, "posted_now")
    cldr = _babel(locale)
    if age_s < 3600:
        count = int(age_s // 60)
        forms = next(s["num_minutes_ago"] for s in _strings(locale) if "num_minutes_ago" in s)
        form = (
            forms.get(cldr.plural_form(count)) or forms.get("other") or next(iter(forms.values()))
        )
        return str(form).replace("%d", str(count))
    return clock(locale, age_s, hour24)


def clock(locale: str, age_s: float, hour24: bool | None = None) -> str:
    """The time of day a message sent ``age_s`` seconds ago was sent, as
    ``DateUtils.formatDateTime(FORMAT_SHOW_TIME)`` draws it: CLDR's ``hm`` / ``Hm``."""
    # lazy: babel is loaded only by the verbs that use it (start-up)
    from babel.dates import format_time

    cldr = _babel(locale)
    if hour24 is None:  # time_12_24 unset: the locale's own clock
        hour24 = "H" in str(cldr.time_formats["short"].pattern)
    skeleton = cldr.datetime_skeletons["Hm" if hour24 else "hm"]
    sent = datetime.datetime.fromtimestamp(time.time() - age_s)
    return str(format_time(sent.time(), str(getattr(skeleton, "pattern", skeleton)), locale=cldr))


def right_to_left(locale: str) -> bool:
    """Does ``locale``'s script run right to left (CLDR's character order)?"""
    return str(getattr(_babel(locale), "character_order", "")) == "right-to-left"
