"""Samsung: the manufacturer's build and its SMS app, Samsung Messages, as one variant.

What a Samsung phone changes on the simulated phone, all here:

- **Properties**: ``ro.product.manufacturer``/``brand`` ``samsung``, a Galaxy S24 model.
- **Power** (``samsung-power``): One UI's ``dumpsys power`` prints ``getWakefulnessLocked()=``
  where AOSP prints ``mWakefulness=`` (``ui.samsung_power``, drawn by ``ui/dumpsys_ui.py``).
- **Samsung Messages** (``samsung-messages[:dual]``) as the default SMS app: its conversation
  screen, its words and its chat store (below).

Samsung Messages' ids, layouts and words are the app's own, from the apktool decompile of
Samsung Messages 16.2.10.27 (``Android-Artisan/Samsung-Messages-Mod`` at e8eec18f):

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
- Words: ``res/values*/strings.xml`` (``android_data/messaging_words.json``, ``samsung``):
  ``status_sending``, ``status_failed``, ``rcs_send_status_delivered``.

Its chat (RCS) store, ``content://im/chat``: Samsung Messages keeps chat messages out of
``content://sms``: its
``RemoteMessageContentContract`` (Samsung Messages 16.2.10.27, apktool decompile in
``Android-Artisan/Samsung-Messages-Mod`` e8eec18f) names ``content://im/chat/`` served by
``com.android.providers.telephony``; Samsung's IMS service writes there too
(``TelephonyDbHelper.MSGAPP_CHATCONTENT_URI``). Columns as ``$Chat`` lists them (a subset);
``type`` is ``$RcsBoxType``: PENDING 0, INBOX 1, SENTBOX 2, DRAFT 3, OUTBOX 4, FAILED 5,
QUEUE 6, UNDELIVERED 9. A message waits in OUTBOX until the chat server took it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from phoned.sim.android.content_tool import EXTRA_PROVIDERS, ProviderError, format_row
from phoned.sim.android.packages import PackageManager
from phoned.sim.shell.registry import SimService, ToolIO
from phoned.sim.ui import messaging_text
from phoned.sim.ui.apps import MessagingApp, field_with_ids, register_messaging_app
from phoned.sim.ui.model import Ui
from phoned.sim.ui.screens import ActivityRecord, ScreenContext, app_frame
from phoned.sim.ui.sent_messages import CHAT_SEND_S, SentEntry, message_list
from phoned.sim.ui.views import View
from phoned.sim.variants.base import SmsAppRow, Variant

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

Value = int | str | None


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


COLUMNS = ("_id", "thread_id", "address", "body", "date", "type", "status", "sim_slot", "sub_id")
OUTBOX, SENTBOX, FAILED = 4, 2, 5


class ImChatStore:
    """Chat messages the Samsung app sent; ``type`` follows each one's fate over time."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self._rows: list[tuple[dict[str, Value], str, float]] = []  # row, kind, sent at

    def insert(self, address: str, body: str, kind: str, slot: int) -> int:
        """A chat message sent from SIM ``slot`` (``kind``: chat, chat-stuck, chat-fail)."""
        with self.phone.lock:
            new_id = len(self._rows) + 1
            row: dict[str, Value] = {
                "_id": new_id, "thread_id": 1, "address": address, "body": body,
                "date": int(time.time() * 1000), "type": OUTBOX, "status": 0,
                "sim_slot": slot - 1, "sub_id": slot,
            }  # fmt: skip
            self._rows.append((row, kind, self.phone.now()))
            return new_id

    def rows(self) -> list[dict[str, Value]]:
        """Every row as a query sees it now."""
        now = self.phone.now()
        out = []
        with self.phone.lock:
            for row, kind, at in self._rows:
                current = dict(row)
                if kind != "chat-stuck" and now - at >= CHAT_SEND_S:
                    current["type"] = FAILED if kind == "chat-fail" else SENTBOX
                out.append(current)
        return out


SIM_SERVICE = SimService("im_chat", ImChatStore)  # phone.service(ImChatStore)


def _im_chat_query(io: ToolIO, operation: str, path: str, opts: dict[str, str]) -> str:
    """``content query --uri content://im/chat``: query only, no where or sort."""
    if operation != "query" or path.rstrip("/") != "/chat":
        raise ProviderError(f"java.lang.IllegalArgumentException: Unknown URL content://im{path}")
    projection = [c for c in opts.get("--projection", "").split(":") if c] or list(COLUMNS)
    unknown = [c for c in projection if c not in COLUMNS]
    if unknown:
        raise ProviderError(
            f"android.database.sqlite.SQLiteException: no such column: {unknown[0]}"
        )
    rows = io.phone.service(ImChatStore).rows()
    if not rows:
        return "No result found.\n"
    return "".join(format_row(i, row, projection) + "\n" for i, row in enumerate(rows))


def _draw_composer(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """WithActivity's conversation screen."""
    children = composer(rec.state, ctx.locale, sims=ctx.sims, per_sim=ctx.per_sim_send)
    return app_frame(rec.package, children)


def _store_chat(phone: PhoneState, recipient: str, body: str, kind: str, slot: int) -> None:
    phone.service(ImChatStore).insert(recipient, body, kind, slot)


MESSAGES = register_messaging_app(
    MessagingApp(
        package=PKG,
        conversation_activity=WITH_ACTIVITY,
        composer=_draw_composer,
        compose_field=field_with_ids(PKG, "message_edit_text"),
        chat_sink=_store_chat,
    )
)
EXTRA_PROVIDERS["im"] = (PKG, _im_chat_query)

PROPS = {
    "ro.product.manufacturer": "samsung",
    "ro.product.brand": "samsung",
    "ro.product.model": "SM-S921N",
}


def _samsung_messages(phone: PhoneState, value: str) -> None:
    """Samsung Messages as the default SMS app (its manifest's SENDTO handler, its layouts
    and words); ``dual``: two SIMs and an older build's send button per SIM
    (``send_button1`` / ``send_button2``)."""
    if value not in ("", "dual"):
        raise ValueError("samsung-messages takes no value or dual")
    VARIANT.set_props(phone)
    phone.service(PackageManager).install_sms_app(PKG, WITH_ACTIVITY)
    if value == "dual":
        ui = phone.service(Ui)
        ui.sims, ui.per_sim_send = 2, True


def _samsung_power(phone: PhoneState, _: str) -> None:
    phone.service(Ui).samsung_power = True


VARIANT = Variant(
    name="samsung",
    kind="manufacturer",
    summary="A Samsung Galaxy: One UI's dumpsys power, Samsung Messages and its chat store",
    sources=(
        "Samsung Messages 16.2.10.27, apktool decompile: Android-Artisan/Samsung-Messages-Mod "
        "e8eec18f (manifest, layouts, res/values*/strings.xml, RemoteMessageContentContract)",
        "docs/android-variants.md: Samsung rows",
    ),
    props=PROPS,
    sms_apps=(
        SmsAppRow("samsung-messages", "samsung-messages"),
        SmsAppRow("samsung-messages:dual", "samsung-messages:dual", send_refused="params.sim"),
    ),
    scenarios={"samsung-messages": _samsung_messages, "samsung-power": _samsung_power},
)
