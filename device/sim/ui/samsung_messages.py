"""Samsung Messages' conversation screen on the simulated phone (``samsung-messages`` scenario).

Ids, layouts and words are the app's own, from the apktool decompile of Samsung Messages
16.2.10.27 (``Android-Artisan/Samsung-Messages-Mod`` at e8eec18f):

- ``AndroidManifest.xml``: ``SENDTO smsto:`` opens ``ui.view.main.WithActivity``.
- ``composer_toolbar_layout.xml``: ``composer_title`` (the contact's name, else the number)
  over ``composer_title_number``.
- ``message_editor_holder.xml``: ``message_edit_text`` (hint ``enter_message_hint``).
- ``send_buttons_layout.xml``: one ``send_button`` (description ``send_description``), the
  SIM picked by ``editor_sim_button`` (description: the SIM's name). Older builds draw one
  button per SIM instead, ``send_button1`` / ``send_button2`` (public Appium and adb scripts
  that tap ``send_button2`` and fall back to ``send_button1``); ``per_sim=True`` draws those.
- ``bubble_text_view.xml``: the text in ``content_text_view``; ``bubble_info_bottom_view.xml``:
  ``base_list_item_info_status_text``, ``base_list_item_info_progress_text`` ("Pending"),
  ``base_list_item_info_date`` (the time) and the ``base_list_item_info_sim_slot`` mark.
- Words: ``res/values*/strings.xml`` (``device/messaging_words.json``, ``samsung``):
  ``status_sending``, ``status_failed``, ``rcs_send_status_delivered``.
"""

from __future__ import annotations

import time

from device.sim.services.im_chat import CHAT_SEND_S
from device.sim.ui import messaging_text
from device.sim.ui.sent_messages import SentEntry, message_list
from device.sim.ui.views import View

PKG = "com.samsung.android.messaging"
WITH_ACTIVITY = "com.samsung.android.messaging.ui.view.main.WithActivity"
WIDTH = 1080


def word(locale: str, name: str) -> str:
    """One of Samsung Messages' strings on a phone speaking ``locale``."""
    return messaging_text.word(locale, name, app="samsung")


def _status(kind: str, age_s: float, locale: str) -> tuple[str, str]:
    """(status text, progress text) of a sent message of ``kind`` ``age_s`` seconds old."""
    if kind == "sms":
        return "", ""
    if kind == "chat-stuck" or age_s < CHAT_SEND_S:
        return word(locale, "status_sending"), ""
    if kind == "chat-fail":
        return word(locale, "status_failed"), ""
    return word(locale, "rcs_send_status_delivered"), ""


def _bubble(entry: SentEntry, top: int, locale: str, sims: int) -> View:
    age = time.monotonic() - entry.at  # the clock of Phone.now()
    status, progress = _status(entry.kind, age, locale)
    info = [
        View(
            "android.widget.TextView",
            (330, top + 125, 700, top + 180),
            resource_id=f"{PKG}:id/base_list_item_info_status_text",
            text=status,
        ),
        View(
            "android.widget.TextView",
            (720, top + 125, 1010, top + 180),
            resource_id=f"{PKG}:id/base_list_item_info_date",
            text=messaging_text.clock(locale, age),
        ),
    ]
    if progress:
        info.insert(1, View("android.widget.TextView", (330, top + 125, 700, top + 180),
                            resource_id=f"{PKG}:id/base_list_item_info_progress_text", text=progress))  # fmt: skip
    if sims > 1:
        info.append(
            View(
                "android.widget.ImageView",
                (300, top + 130, 325, top + 175),
                resource_id=f"{PKG}:id/base_list_item_info_sim_slot",
                desc=word(locale, f"sim_{entry.sim}_default_name"),
            )
        )
    text = View(
        "android.widget.TextView",
        (330, top + 10, 1010, top + 120),
        resource_id=f"{PKG}:id/content_text_view",
        text=entry.body,
    )
    return View(
        "android.view.ViewGroup",
        (300, top, 1040, top + 190),
        resource_id=f"{PKG}:id/bubble_text_view",
        children=[text, *info],
    )


def composer(state: dict[str, str], locale: str, *, sims: int, per_sim: bool) -> list[View]:
    """The children of WithActivity's conversation screen for ``state`` (recipient, body,
    sent messages), as ``screens.composer`` takes them."""

    recipient, body = state.get("recipient", ""), state.get("body", "")
    title = state.get("title") or recipient
    toolbar = View(
        "android.view.ViewGroup",
        (0, 118, WIDTH, 265),
        resource_id=f"{PKG}:id/composer_toolbar",
        children=[
            View("android.widget.TextView", (189, 130, 900, 200),
                 resource_id=f"{PKG}:id/composer_title", text=title),
            View("android.widget.TextView", (189, 200, 900, 250),
                 resource_id=f"{PKG}:id/composer_title_number",
                 text=recipient if title != recipient else ""),
        ],
    )  # fmt: skip
    listing = message_list(
        state.get("sent", ""),
        f"{PKG}:id/bubble_list_view",
        lambda entry, y: _bubble(entry, y, locale, sims),
    )
    edit = View(
        "android.widget.EditText",
        (147, 2050, 760 if per_sim else 880, 2190),
        resource_id=f"{PKG}:id/message_edit_text",
        text=body,
        clickable=True,
        focusable=True,
        focused=True,
        action="focus",
    )
    ready = bool(body) and bool(recipient)
    if per_sim and sims > 1:
        sends = [
            View(
                "android.widget.ImageButton",
                (780 + 150 * (slot - 1), 2050, 920 + 150 * (slot - 1), 2190),
                resource_id=f"{PKG}:id/send_button{slot}",
                desc=f"{word(locale, f'sim_{slot}_default_name')} {word(locale, 'send_description')}",
                enabled=ready,
                clickable=ready,
                action=f"send:{slot}",
            )
            for slot in (1, 2)
        ]
    else:
        sends = [
            View(
                "android.widget.ImageButton",
                (900, 2050, 1060, 2190),
                resource_id=f"{PKG}:id/send_button",
                desc=word(locale, "send_description"),
                enabled=ready,
                clickable=ready,
                action="send",
            )
        ]
    return [toolbar, listing, edit, *sends]
