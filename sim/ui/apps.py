"""Where an app variant plugs into the simulated screen (``sim/variants/*``).

The UI draws the apps every simulated phone has (launcher, Settings, Messages, the notes
app). A variant (a manufacturer's or an SMS app's, ``docs/simulator.md`` "Variants")
brings its own SMS app by registering a ``MessagingApp`` here when its module is imported
(``registry.load_all`` imports every variant); the UI then routes ``SENDTO smsto:`` to its
conversation activity, draws that activity with the variant's builder, types into its
compose field (the view its ``compose_field`` accepts: by default one the builder marked
``role="compose"``, which no dump shows, since a Jetpack Compose field has no resource id)
and hands a chat message to its store. The UI never imports a variant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoned.sim.ui import screens
from phoned.sim.ui.views import View

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

# (phone, recipient, body, kind, SIM slot): a chat message the app stores on its own.
ChatSink = Callable[["PhoneState", str, str, str, int], None]
# Is this view the app's compose field (where typed and set text goes)?
FieldTest = Callable[[View], bool]
COMPOSE_ROLE = "compose"


def marked_compose(view: View) -> bool:
    """The view the builder marked as the compose field (``View.role``, never dumped)."""
    return view.role == COMPOSE_ROLE


def field_with_ids(package: str, *ids: str) -> FieldTest:
    """A compose field found by its resource ids (without the package), for apps whose
    field has one."""
    wanted = {f"{package}:id/{i}" for i in ids}
    return lambda view: view.resource_id in wanted


@dataclass(frozen=True)
class MessagingApp:
    """An SMS app's conversation screen as the simulated phone runs it."""

    package: str
    conversation_activity: str  # what SENDTO smsto: opens (the app's manifest)
    composer: screens.Builder  # draws the conversation activity
    compose_field: FieldTest = marked_compose  # which view holds the message text
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
