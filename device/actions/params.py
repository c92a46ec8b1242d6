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

from pydantic import AfterValidator, BaseModel, ConfigDict

# E.164: '+', country code not starting with 0, at most 15 digits in all (ITU-T E.164 §6.1).
_E164 = re.compile(r"\+[1-9][0-9]{1,14}")
# Local dialling: digits only (short codes such as 900 included), at most 15.
_LOCAL = re.compile(r"[0-9]{2,15}")
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
    if not (_E164.fullmatch(value) or _LOCAL.fullmatch(value)):
        raise ValueError("not a phone number (E.164 like +4915112345678, or digits)")
    return value


# A recipient: E.164 (+4915112345678) or local digits (2..15); nothing else reaches an argv.
PhoneNumber = Annotated[str, AfterValidator(_phone_number)]

MAX_CONTACT_NAME = 100  # characters; a display name longer than this is no name a person types


def is_phone_number(value: str) -> bool:
    """Whether ``value`` is a phone number ``PhoneNumber`` takes (E.164 or local digits)."""
    return bool(_E164.fullmatch(value) or _LOCAL.fullmatch(value))


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
    # text that starts like a number (``+``, a digit) is meant as one and must be one, so a
    # mistyped number (``+1555; reboot``) is refused, never looked up as a name
    head = value.lstrip()[:1]
    if not head or head == "+" or head.isdigit():
        return _phone_number(value)
    return contact_name(value)


# A recipient: a phone number as ``PhoneNumber`` (exactly as that takes it), or a contact's
# name (``contact_name``), resolved to a number on the daemon at run time
# (``device.actions.recipient``); only a number reaches an argv.
NumberOrName = Annotated[str, AfterValidator(_recipient)]

# The recipient of the SMS tasks scripts/ci-emulator.sh runs: 555-0100..0199 are reserved for
# fiction (NANPA); the emulator has no SIM to send from anyway.
EMULATOR_NUMBER = "+15555550100"
