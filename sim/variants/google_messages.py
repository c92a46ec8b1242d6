"""Google Messages (``com.google.android.apps.messaging``): both generations of its
conversation screen, as one variant record.

The default SMS app of the simulated Pixel. Its conversation screen comes in two
generations, chosen per phone with ``google-messages:GENERATION`` (``docs/simulator.md``,
"Variants"); a phone set up with nothing shows the View generation, as it always did.

**View generation** (``views``, older builds; ``docs/android-variants.md`` V66, V155):
a ``MultiAutoCompleteTextView`` ``recipient_text_view``, the ``EditText``
``compose_message_text`` (hint "Text message") and the ``ImageView``
``send_message_button_icon`` described "Send SMS", clickable once the field holds text;
each sent message a ``message_text`` with its ``message_status`` line under it. Sources:
Appium and UiAutomator page objects addressing these ids (code index ids 1324715174,
1879833646, 14301594719, 4634801952) and the "Send SMS" locator (54971151193, 49712672407);
the bubble follows AOSP Messaging's ``conversation_message_view.xml``, from which the app
descends (V113).

**Compose generation** (``compose``, ``compose-rcs``; current builds, Jetpack Compose; V156-
V162): nothing in the composer row has a resource id. The row holds, in layout order, the
attach control (described "Show attach content screen"), the ``EditText`` whose text is
"Text message" while empty ("RCS message" with chat features on), the emoji and gallery
controls ("Show attach emoji and stickers screen", "Show attach media screen"), and at
the row's end one control that is the voice recorder ("Show record a voice message
screen") while the field is empty and the send button once it holds text: an ``ImageView``
described "Send SMS" in an SMS conversation and "Send end-to-end encrypted message" in an
encrypted chat (``compose-rcs``). Sources: a published accessibility map of Google Messages
on a Pixel 9 Pro XL, Android 15 (code index id 53523427102: the ``ComposeRowIcon:*`` and
``Compose:Draft:Send`` controls, their descriptions, the voice control turning into send,
"RCS message" / "Text message"); uiautomator2 and Appium scripts addressing the field as
``EditText`` with text "Text message" (10179497360) and the button by "Send SMS" / "Send
MMS" (54971151193, 54218582806); issue #33 for "Send end-to-end encrypted message". Each
sent message is a ``message_text`` node (a Compose test tag, so the bare tag is its
resource id, as the accessibility map shows) followed by a status line without an id:
"Now • SMS" for an SMS (scripts waiting for "Now • SMS" / "Now • MMS", 14614909429,
27195523824), and for a chat message the status words AOSP Messaging ships ("Sending…",
"Delivered", "Not sent. Tap to try again."; V113), in the phone's language.

Words: the English ones above are the only public ones (``android_data/google_messages.json``,
each with its source). On a phone in another language the Compose generation's hint and
descriptions are words nobody outside Google knows; the simulator draws each as
``⟦NAME:LOCALE⟧``, a text no dictionary holds, so a reader that needs those words fails
as it would on the real phone. Right-to-left languages (CLDR's character order) mirror the
Compose row, as Compose mirrors a ``Row`` under ``LayoutDirection.Rtl``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import phoned.android_data as android_data
from phoned.sim.android import phone_numbers
from phoned.sim.ui import labels, messaging_text
from phoned.sim.ui.apps import COMPOSE_ROLE, MessagingApp, register_messaging_app
from phoned.sim.ui.model import Ui
from phoned.sim.ui.screens import (
    STATUS_BAR_BOTTOM,
    WIDTH,
    ActivityRecord,
    ScreenContext,
    app_frame,
    toolbar,
)
from phoned.sim.ui.sent_messages import SentEntry, conversation_message_view, message_list
from phoned.sim.ui.views import View
from phoned.sim.variants.base import SmsAppRow, Variant

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

PKG = labels.MESSAGING_PKG
NAME = "google-messages"
GENERATIONS = ("views", "compose", "compose-rcs")
ROW_TOP, ROW_BOTTOM = 2050, 2190


def word(locale: str, name: str) -> str:
    """Google Messages' word ``name`` on a phone speaking ``locale``: the public English one,
    else a placeholder no reader can know (its translations are not public)."""
    language = locale.replace("_", "-").split("-")[0].lower()
    shipped = android_data.google_messages_words()["locales"]
    if language in shipped:
        return str(shipped[language][name])
    return f"⟦{name}:{locale}⟧"


def _mirrored(view: View, width: int) -> View:
    """``view`` laid out right to left: every box reflected about the screen's middle."""
    left, top, right, bottom = view.bounds
    view.bounds = (width - right, top, width - left, bottom)
    view.children = [_mirrored(child, width) for child in view.children]
    return view


# ---- View generation (older builds) -----------------------------------------------------


def view_composer(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """The View generation's conversation screen: recipient chip, messages, compose field
    and send button (ids as public scripts address them)."""
    recipient, body = rec.state.get("recipient", ""), rec.state.get("body", "")
    # a saved contact: its name; else the number as Messaging formats it (formatForDisplay)
    shown = rec.state.get("title") or phone_numbers.format_for_display(recipient, ctx.region)
    chip = View(
        "android.widget.MultiAutoCompleteTextView", (189, 150, 1000, 240),
        resource_id=f"{PKG}:id/recipient_text_view", text=shown,
        focusable=True, clickable=True, long_clickable=True,
    )  # fmt: skip
    messages = message_list(
        rec.state.get("sent", ""),
        f"{PKG}:id/messages_list",
        lambda entry, y: conversation_message_view(PKG, entry, y, ctx.locale),
    )
    compose = View(
        "android.widget.EditText", (147, ROW_TOP, 900, ROW_BOTTOM),
        resource_id=f"{PKG}:id/compose_message_text", text=body, hint="Text message",
        clickable=True, long_clickable=True, focusable=True, focused=True, action="focus",
        role=COMPOSE_ROLE,
    )  # fmt: skip
    send = View(
        "android.widget.ImageView", (920, ROW_TOP, 1060, ROW_BOTTOM),
        resource_id=f"{PKG}:id/send_message_button_icon", desc="Send SMS",
        clickable=bool(body), enabled=bool(body) and bool(recipient), focusable=True,
        action="send",
    )  # fmt: skip
    title = toolbar(PKG, shown or "New conversation")
    return app_frame(PKG, [title, chip, messages, compose, send])


# ---- Compose generation (current builds) ------------------------------------------------


def _compose_status(entry: SentEntry, locale: str) -> str:
    """The status line under a sent message: "Now • SMS" for an SMS (the stamp in AOSP's
    words, then the protocol), a chat message's sending / delivered / not sent words."""
    status = entry.status(time.monotonic(), locale)  # the clock of Phone.now()
    return f"{status} • SMS" if entry.kind == "sms" else status


def _compose_bubble(entry: SentEntry, top: int, locale: str) -> View:
    """One message: a clickable container, the bubble, its ``message_text`` (a Compose test
    tag: the bare tag is the resource id) and the status line, which has no id."""
    text = View(
        "android.widget.TextView", (330, top + 10, 1010, top + 120),
        resource_id="message_text", text=entry.body,
    )  # fmt: skip
    status = View(
        "android.widget.TextView", (330, top + 125, 1010, top + 180),
        text=_compose_status(entry, locale),
    )  # fmt: skip
    bubble = View("android.view.View", (300, top, 1040, top + 120), clickable=True,
                  children=[text])  # fmt: skip
    return View("android.view.View", (300, top, 1040, top + 190), clickable=True,
                children=[bubble, status])  # fmt: skip


def _compose_row(body: str, ready: bool, locale: str, rcs: bool) -> list[View]:
    """The composer row, left to right: attach, field, emoji, gallery, voice-or-send."""

    def control(left: int, right: int, name: str) -> View:
        return View("android.view.View", (left, ROW_TOP + 10, right, ROW_BOTTOM - 10),
                    desc=word(locale, name), clickable=True, focusable=True)  # fmt: skip

    hint = word(locale, "compose_hint_rcs" if rcs else "compose_hint_sms")
    field = View(
        "android.widget.EditText", (150, ROW_TOP, 700, ROW_BOTTOM), text=body or hint,
        clickable=True, long_clickable=True, focusable=True, focused=True, action="focus",
        role=COMPOSE_ROLE,
    )  # fmt: skip
    end = View(
        "android.widget.ImageView", (950, ROW_TOP, 1070, ROW_BOTTOM),
        desc=word(locale, ("send_encrypted" if rcs else "send_sms") if body else "voice"),
        clickable=True, enabled=ready or not body, focusable=True,
        action="send" if body else None,
    )  # fmt: skip
    return [
        control(20, 140, "attach"),
        field,
        control(710, 820, "emoji"),
        control(830, 940, "gallery"),
        end,
    ]


def compose_composer(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """The Compose generation's conversation screen (module docstring)."""
    recipient, body = rec.state.get("recipient", ""), rec.state.get("body", "")
    # a saved contact: its name; else the number as Messaging formats it (formatForDisplay)
    shown = rec.state.get("title") or phone_numbers.format_for_display(recipient, ctx.region)
    rcs = ctx.options.get(NAME) == "compose-rcs"
    top_bar = View(
        "android.view.View", (0, STATUS_BAR_BOTTOM, WIDTH, 265),
        children=[
            View("android.view.View", (20, 140, 140, 250), desc="Back", clickable=True),
            View("android.widget.TextView", (189, 160, 800, 224), text=shown),
        ],
    )  # fmt: skip
    messages = message_list(
        rec.state.get("sent", ""),
        "message_list",
        lambda entry, y: _compose_bubble(entry, y, ctx.locale),
    )
    row = _compose_row(body, bool(body) and bool(recipient), ctx.locale, rcs)
    screen = View(
        "android.view.View", (0, 0, WIDTH, 2337), resource_id="ConversationScreenUi",
        children=[messages, *row, top_bar],
    )  # fmt: skip
    if messaging_text.right_to_left(ctx.locale):
        screen = _mirrored(screen, WIDTH)
    return app_frame(PKG, [screen])


def composer(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """ConversationActivity in the phone's generation of the app (views by default)."""
    if ctx.options.get(NAME, "views") == "views":
        return view_composer(rec, ctx)
    return compose_composer(rec, ctx)


MESSAGES = register_messaging_app(
    MessagingApp(
        package=PKG, conversation_activity=labels.MESSAGING_CONVERSATION, composer=composer
    )
)


def _google_messages(phone: PhoneState, value: str) -> None:
    """``google-messages[:views|compose|compose-rcs]``: the generation of the conversation
    screen; ``compose-rcs`` turns chat features on (an encrypted chat: the message goes as a
    chat message, ``chat-send`` unless another ``chat-send:*`` already chose its fate)."""
    generation = value or "views"
    if generation not in GENERATIONS:
        raise ValueError(f"google-messages takes {', '.join(GENERATIONS)}")
    ui = phone.service(Ui)
    ui.app_options[NAME] = generation
    if generation == "compose-rcs" and ui.chat_send is None:
        ui.chat_send = "chat"


VARIANT = Variant(
    name=NAME,
    kind="sms-app",
    summary="Google Messages: its View-based (older) and Jetpack Compose (current) screens",
    sources=(
        "Appium / UiAutomator page objects and scripts addressing compose_message_text, "
        "send_message_button_icon, message_text, message_status (docs/android-variants.md V155)",
        "a published accessibility map of Google Messages, Pixel 9 Pro XL, Android 15 "
        "(code index id 53523427102); uiautomator2 / Appium scripts (10179497360, "
        "54971151193, 54218582806, 14614909429): V156-V162",
        "android_data/google_messages.json (English words, each with its source)",
    ),
    sms_apps=(
        SmsAppRow("", "google-messages:views (default)"),
        SmsAppRow("google-messages:compose", "google-messages:compose"),
        # chat features on: every message goes as chat (sent or failed), none as SMS
        SmsAppRow("google-messages:compose-rcs", "google-messages:compose-rcs", ("chat", "failed")),
    ),
    scenarios={NAME: _google_messages},
)
