"""A variant record: what one manufacturer's build or one app changes on the simulated phone.

Each module of ``sim/variants`` declares ``VARIANT = Variant(...)`` and keeps everything
that variant changes in that one file: its system properties, its services (a
``SIM_SERVICE``), its screens and words (a ``MessagingApp`` registered with the UI), and the
scenario names that put it on a phone (``phoned sim --scenario samsung-messages``). The UI,
the services and the shell never import a variant; ``registry.load_all`` imports them all,
and ``scenarios`` offers every variant's scenario names beside its own. Adding a variant is
one file plus its tests (``docs/simulator.md``, "Variants").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

# A scenario's handler: set the phone up, given the text after ``NAME:`` ("" when none).
ScenarioHandler = Callable[["PhoneState", str], None]


@dataclass(frozen=True)
class SmsAppRow:
    """One SMS app set-up of the variant matrix (``tests/scenarios/test_variant_matrix.py``):
    every phone language, recipient and outcome is run on it. A new SMS app variant is one
    such row; every combination it makes is then tested."""

    spec: str  # the --scenario names that put the app on a phone ("" for the default)
    label: str  # how the matrix names it ("google-messages:compose")
    outcomes: tuple[str, ...] = ("sms", "chat", "failed")  # how a send can end on it
    # When the app cannot be told which control sends without a param the matrix gives no
    # (two SIMs, a button each), the words phoned's refusal names; nothing may be tapped.
    send_refused: str | None = None


@dataclass(frozen=True)
class Variant:
    """One manufacturer's or app's variant of the simulated phone."""

    name: str  # e.g. "samsung"
    kind: str  # "manufacturer" or "sms-app"
    summary: str  # one line: what a phone of this variant is
    sources: tuple[str, ...]  # where each thing it models was read (public captures, sources)
    props: Mapping[str, str] = field(default_factory=dict)  # system properties it sets
    scenarios: Mapping[str, ScenarioHandler] = field(default_factory=dict)  # --scenario names
    sms_apps: tuple[SmsAppRow, ...] = ()  # its rows of the variant matrix (SMS apps only)

    def set_props(self, phone: PhoneState) -> None:
        """Give ``phone`` this variant's system properties (``ro.product.*``...)."""
        phone.props.update(self.props)
