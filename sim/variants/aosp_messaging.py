"""AOSP Messaging (``com.android.messaging``): the SMS app of AOSP and LineageOS builds.

Its own package, activity, ids and words, from its sources
(``LineageOS/android_packages_apps_Messaging`` @ ``46d8c06e``, the translations
``android_data/messaging_words.json`` ``aosp`` were generated from; GrapheneOS
``platform_packages_apps_Messaging`` @ ``85a1ca48`` for layouts and code;
``docs/android-variants.md`` V163):

- ``AndroidManifest.xml``: ``SENDTO smsto:`` opens ``.ui.conversation.ConversationActivity``.
- ``res/layout/compose_message_view.xml``: the ``EditText`` ``compose_message_text`` and the
  ``ImageButton`` ``send_message_button`` (``android:visibility="gone"``, described
  ``sendButtonContentDescription``), which ``ComposeMessageView`` shows once the draft holds
  text; a gone view is in no hierarchy.
- ``res/layout/conversation_message_view.xml``: each message's ``message_text`` and its
  ``message_status`` line (``ConversationMessageView.updateViewContent``: the sending and
  failure words, else the time; V113).
- Words: the app's own translations in every locale it ships (``messaging_text``), the send
  button's description included: unlike Google Messages, every word of this screen is public.

It differs from Google Messages' View generation in its package, its activity, the send
button's id (``send_message_button``, not ``send_message_button_icon``) and its words, so
it is its own record: ``aosp-messaging`` makes it the default SMS app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoned.sim.android import phone_numbers
from phoned.sim.android.packages import PackageManager
from phoned.sim.ui import messaging_text
from phoned.sim.ui.apps import COMPOSE_ROLE, MessagingApp, register_messaging_app
from phoned.sim.ui.screens import ActivityRecord, ScreenContext, app_frame, toolbar
from phoned.sim.ui.sent_messages import conversation_message_view, message_list
from phoned.sim.ui.views import View
from phoned.sim.variants.base import SmsAppRow, Variant

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

PKG = "com.android.messaging"
CONVERSATION = "com.android.messaging.ui.conversation.ConversationActivity"


def composer(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """ConversationActivity: title, messages, the compose field and, once it holds text,
    the send button."""
    recipient, body = rec.state.get("recipient", ""), rec.state.get("body", "")
    # a saved contact: its name; else the number as Messaging formats it (formatForDisplay)
    shown = rec.state.get("title") or phone_numbers.format_for_display(recipient, ctx.region)
    messages = message_list(
        rec.state.get("sent", ""),
        f"{PKG}:id/conversation_messages",
        lambda entry, y: conversation_message_view(PKG, entry, y, ctx.locale),
    )
    compose = View(
        "android.widget.EditText", (40, 2050, 900, 2190),
        resource_id=f"{PKG}:id/compose_message_text", text=body,
        clickable=True, long_clickable=True, focusable=True, focused=True, action="focus",
        role=COMPOSE_ROLE,
    )  # fmt: skip
    children = [toolbar(PKG, shown), messages, compose]
    if body:  # visibility gone until the draft holds text (ComposeMessageView)
        send = View(
            "android.widget.ImageButton", (920, 2050, 1060, 2190),
            resource_id=f"{PKG}:id/send_message_button",
            desc=messaging_text.word(ctx.locale, "sendButtonContentDescription"),
            clickable=True, enabled=bool(recipient), focusable=True, action="send",
        )  # fmt: skip
        children.append(send)
    return app_frame(PKG, children)


MESSAGES = register_messaging_app(
    MessagingApp(package=PKG, conversation_activity=CONVERSATION, composer=composer)
)


def _aosp_messaging(phone: PhoneState, value: str) -> None:
    """AOSP Messaging as the default SMS app."""
    if value:
        raise ValueError("aosp-messaging takes no value")
    phone.service(PackageManager).install_sms_app(PKG, CONVERSATION)


VARIANT = Variant(
    name="aosp-messaging",
    kind="sms-app",
    summary="AOSP Messaging (AOSP and LineageOS builds): its own ids and translated words",
    sources=(
        "LineageOS/android_packages_apps_Messaging 46d8c06e (res/values*/strings.xml); "
        "GrapheneOS/platform_packages_apps_Messaging 85a1ca48 (AndroidManifest.xml, "
        "res/layout/compose_message_view.xml, conversation_message_view.xml)",
    ),
    sms_apps=(SmsAppRow("aosp-messaging", "aosp-messaging", ("sms",)),),  # no chat features
    scenarios={"aosp-messaging": _aosp_messaging},
)
