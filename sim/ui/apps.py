"""Where an app variant plugs into the simulated screen (``sim/variants/*``).

The UI draws the apps every simulated phone has (launcher, Settings, Messages, the notes
app). A variant (a manufacturer's or an SMS app's, ``docs/simulator.md`` "Variants")
brings its own SMS app by registering a ``MessagingApp`` here when its module is imported
(``registry.load_all`` imports every variant); the UI then routes ``SENDTO smsto:`` to its
conversation activity, draws that activity with the variant's builder, types into its
compose field and hands a chat message to its store. The UI never imports a variant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim.ui import screens

if TYPE_CHECKING:
    from sim.phone_state import PhoneState

# (phone, recipient, body, kind, SIM slot): a chat message the app stores on its own.
ChatSink = Callable[["PhoneState", str, str, str, int], None]


@dataclass(frozen=True)
class MessagingApp:
    """An SMS app's conversation screen as the simulated phone runs it."""

    package: str
    conversation_activity: str  # what SENDTO smsto: opens (the app's manifest)
    composer: screens.Builder  # draws the conversation activity
    compose_field_ids: tuple[str, ...]  # ids (without the package) of fields holding the text
    chat_sink: ChatSink | None = None  # where a chat (RCS) message goes; None: nowhere visible


MESSAGING_APPS: dict[str, MessagingApp] = {}


def register_messaging_app(app: MessagingApp) -> MessagingApp:
    """Make ``app`` part of every simulated phone's UI (its screen drawn, SENDTO routed)."""
    MESSAGING_APPS[app.package] = app
    screens.BUILDERS[app.conversation_activity] = app.composer
    return app


def messaging_app(package: str) -> MessagingApp | None:
    """The registered variant app ``package``, if one is."""
    return MESSAGING_APPS.get(package)
