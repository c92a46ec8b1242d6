"""Generate ``android_data/messaging_words.json``: messaging apps' own words, every locale they ship.

The conversation screen's status line and the send button's description are words in the
phone's language (``device/conversation.py``). This script takes them from each app's own
translations, ``res/values*/strings.xml``, instead of anyone typing them in:

    python scripts/gen_messaging_words.py APP MIRROR_GIT_DIR [COMMIT]

``APP`` is ``aosp`` (AOSP ``packages/apps/Messaging``, the app Google Messages grew from; the
table names the LineageOS mirror ``LineageOS/android_packages_apps_Messaging``) or
``samsung`` (Samsung Messages 16.2.10.27 as decompiled by apktool in
``Android-Artisan/Samsung-Messages-Mod``: its resources are the app's own). The script reads
the files at ``COMMIT`` (default ``HEAD``) with ``git show`` and writes that app's part of the
table with the repository, the commit and the paths it read. Only the strings the
conversation reader needs are kept (``APPS[app]``); a locale missing one falls back to the
default (English) value, as Android's resource lookup does.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "android_data" / "messaging_words.json"
# string name -> what it means on the conversation screen (ConversationMessageView.java
# updateViewContent; Dates.getTimestamp; MmsUtils.mapRawStatusToErrorResourceId)
AOSP_WORDS = {
    "message_status_sending": "sending",
    "message_status_send_retrying": "sending",
    "message_status_send_failed": "failed",
    "message_status_send_failed_emergency_number": "failed",
    "message_status_resend": "failed",  # shown on a selected failed message
    "message_status_failed": "failed",
    "mms_failure_outgoing_service": "failed",
    "mms_failure_outgoing_address": "failed",
    "mms_failure_outgoing_corrupt": "failed",
    "mms_failure_outgoing_content": "failed",
    "mms_failure_outgoing_unsupported": "failed",
    "mms_failure_outgoing_too_large": "failed",
    "delivered_status_content_description": "sent",  # the smsDeliveredBadge's description
    "posted_now": "sent",  # a sent message's timestamp under a minute old
    "posted_just_now": "sent",
    "sendButtonContentDescription": "send_button",
}
AOSP_PLURALS = {"num_minutes_ago": "sent", "num_hours_ago": "sent"}

# Samsung Messages: the strings its bubble info view shows (smali_classes3/Yd/W.smali
# ``setStatusInfoText`` -> ``base_list_item_info_status_text``; ``status_pending`` in
# ``base_list_item_info_progress_text``). "Not delivered" (RCS box type UNDELIVERED) says
# neither that the message left nor that it failed: "undelivered", read as unknown.
SAMSUNG_WORDS = {
    "rcs_send_status_delivered": "sent",
    "rcs_send_status_read": "sent",
    "rcs_sent_status": "sent",
    "rcs_send_status_interworking_sms": "sent",
    "rcs_send_status_interworking_mms": "sent",
    "status_sent": "sent",
    "delivered": "sent",
    "status_sending": "sending",
    "status_pending": "sending",
    "status_failed": "failed",
    "message_send_failed_title": "failed",
    "rcs_send_status_not_delivered": "undelivered",
    "send_description": "send_button",
    "sim_1_default_name": "sim_name",  # what the SIM mark and per-SIM buttons say
    "sim_2_default_name": "sim_name",
}

# app -> (repository, strings kept, plurals kept)
APPS = {
    "aosp": ("LineageOS/android_packages_apps_Messaging", AOSP_WORDS, AOSP_PLURALS),
    "samsung": ("Android-Artisan/Samsung-Messages-Mod", SAMSUNG_WORDS, {}),
}

# Android's old language codes (java.util.Locale) -> BCP 47
_OLD_CODES = {"iw": "he", "in": "id", "ji": "yi", "tl": "fil"}


def locale_of(folder: str) -> str | None:
    """``values-zh-rTW`` -> ``zh-TW``; ``values`` -> ``en``; not a locale folder -> None."""
    if folder == "values":
        return "en"
    qualifiers = folder.removeprefix("values-")
    match = re.fullmatch(r"([a-z]{2,3})(?:-r([A-Z]{2}))?", qualifiers) or re.fullmatch(
        r"b\+([a-z]{2,3})\+([A-Z][a-z]{3})", qualifiers
    )
    if match is None:
        return None  # ldrtl, v21, ...: not a language
    language = _OLD_CODES.get(match[1], match[1])
    return f"{language}-{match[2]}" if match[2] else language


def resource_text(element: ET.Element) -> str:
    """A string resource's value as the app shows it: inner markup flattened, the outer
    quotes and the backslash escapes of aapt resolved."""
    raw = "".join(element.itertext()).strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        raw = raw[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), raw)


def read_strings(
    xml_text: str, words: dict[str, str], plurals: dict[str, str]
) -> dict[str, object]:
    root = ET.fromstring(xml_text)
    found: dict[str, object] = {}
    for element in root:
        name = element.get("name", "")
        if element.tag == "string" and name in words:
            found[name] = resource_text(element)
        elif element.tag == "plurals" and name in plurals:
            found[name] = {
                item.get("quantity", ""): resource_text(item) for item in element.iter("item")
            }
    return found


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def generate(app: str, repo: Path, commit: str) -> dict[str, object]:
    repository, words, plurals = APPS[app]
    sha = git(repo, "rev-parse", commit).strip()
    folders = [line for line in git(repo, "ls-tree", "--name-only", sha, "res/").split()]
    locales: dict[str, dict[str, object]] = {}
    for folder in sorted(folders):
        name = folder.removeprefix("res/")
        locale = locale_of(name)
        if locale is None:
            continue
        try:
            text = git(repo, "show", f"{sha}:{folder}/strings.xml")
        except subprocess.CalledProcessError:
            continue
        strings = read_strings(text, words, plurals)
        if strings:
            locales[locale] = strings
    default = locales["en"]
    for strings in locales.values():
        for key, value in default.items():
            strings.setdefault(key, value)
    return {
        "source": {
            "repository": repository,
            "commit": sha,
            "paths": "res/values*/strings.xml",
            "generated_by": "scripts/gen_messaging_words.py",
        },
        "meaning": {**words, **plurals},
        "locales": locales,
    }


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in APPS:
        print(__doc__, file=sys.stderr)
        return 2
    app = argv[0]
    part = generate(app, Path(argv[1]), argv[2] if len(argv) > 2 else "HEAD")
    tables = json.loads(OUT.read_text("utf-8")) if OUT.exists() else {}
    tables[app] = part
    OUT.write_text(json.dumps(tables, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    source = part["source"]
    print(
        f"{OUT} [{app}]: {len(part['locales'])} locales from {source['repository']}@{source['commit']}"
    )  # type: ignore[index]
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
