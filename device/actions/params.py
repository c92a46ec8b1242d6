"""Parameter types shared by several methods (SPEC §6).

A method's own params model lives in its action module, next to the functions that take it
(``DndSet`` in ``dnd.py``); this module keeps only what more than one method uses: the base
``Params`` (unknown fields refused, frozen), ``NoParams``, and the text types whose
patterns decide what may reach a phone's argv (phone numbers, package and permission
names, components). Each method's declaration (``device/actions/method.py``) names its model;
ingress validates a task's params with it and ``execute()`` hands the action the model.
"""

from __future__ import annotations

import re
from typing import Annotated

from phoned.device import phone_numbers
from pydantic import AfterValidator, BaseModel, ConfigDict

# Android package names: dot-separated Java identifiers, at least two segments.
PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+")
PERMISSION = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")
# ComponentName.flattenToString(): "pkg/cls" or "pkg/.Cls".
COMPONENT = re.compile(rf"{PACKAGE.pattern}/\.?[A-Za-z][A-Za-z0-9_$.]*")


class Params(BaseModel):
    """The base of every params model: unknown fields are refused, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(Params):
    """Methods that take no parameters."""


def _phone_number(value: str) -> str:
    if not phone_numbers.could_be_number(value):
        raise ValueError(
            "not a phone number (digits with spaces, dashes, dots or brackets, a leading + or "
            "trunk prefix: +1 (555) 123-4567, 8 916 123-45-67, 010-1234-5678)"
        )
    return value


# A recipient as people write it (``+1 (555) 123-4567``, ``8 916 123-45-67``): kept as given
# here, where no phone is known; read in the phone's region at run time
# (``device.phone_numbers.canonical``), and only that E.164 form reaches an argv.
PhoneNumber = Annotated[str, AfterValidator(_phone_number)]

MAX_CONTACT_NAME = 100  # characters; a display name longer than this is no name a person types


def is_phone_number(value: str) -> bool:
    """Whether ``value`` is written as a phone number ``PhoneNumber`` takes."""
    return phone_numbers.could_be_number(value)


def contact_name(value: str) -> str:
    """A contact's display name as a param: 1..100 characters, not blank, no control
    character (NUL, newline...), no unpaired surrogate. Any other text is fine, shell and SQL
    metacharacters included: a name is matched on the daemon and never reaches the phone."""
    if not value.strip():
        raise ValueError("a contact name must not be blank")
    if len(value) > MAX_CONTACT_NAME:
        raise ValueError(f"a contact name has at most {MAX_CONTACT_NAME} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise ValueError(
            "a contact name must not hold NUL, control characters or unpaired surrogates"
        )
    return value


def _recipient(value: str) -> str:
    # a name is a name only when it is not a number: ``(916) 123-45-67`` is a number. Text
    # that starts like a number (``+``, a digit, a bracket then a digit, a ``tel:`` link) is
    # meant as one and must be one, so a mistyped number (``+1555; reboot``) is refused,
    # never looked up
    if phone_numbers.could_be_number(value):
        return value
    link = phone_numbers.unlinked(value)  # a tel:/sms: link is meant as a number too
    head = link.lstrip().lstrip("([")[:1]
    if link != value or not head or head == "+" or head.isdigit():
        return _phone_number(value)
    return contact_name(value)


# A recipient: a phone number as ``PhoneNumber`` (exactly as that takes it), or a contact's
# name (``contact_name``), resolved to a number on the daemon at run time
# (``device.actions.recipient``); only a number reaches an argv.
NumberOrName = Annotated[str, AfterValidator(_recipient)]

# The recipient of the SMS tasks scripts/ci-emulator.sh runs: 555-0100..0199 are reserved for
# fiction (NANPA); the emulator has no SIM to send from anyway.
EMULATOR_NUMBER = "+15555550100"
