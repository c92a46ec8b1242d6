"""Parameter schemas of the v1 methods (SPEC §6), one pydantic model per method.

Each method's declaration (``device/actions/method.py``) names its model; ingress validates
a task's params with it and ``execute()`` hands the action the validated model.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

# E.164: '+', country code not starting with 0, at most 15 digits in all (ITU-T E.164 §6.1).
_E164 = re.compile(r"\+[1-9][0-9]{1,14}")
# Local dialling: digits only (short codes such as 900 included), at most 15.
_LOCAL = re.compile(r"[0-9]{2,15}")
# Android package names: dot-separated Java identifiers, at least two segments.
PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+")
PERMISSION = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")
# ComponentName.flattenToString(): "pkg/cls" or "pkg/.Cls".
COMPONENT = re.compile(rf"{PACKAGE.pattern}/\.?[A-Za-z][A-Za-z0-9_$.]*")
MAX_BODY = 10_000  # characters of an SMS body

Stream = Literal["music", "ring", "alarm", "notification", "voice_call", "system"]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(_Params):
    """Methods that take no parameters."""


class DndSet(_Params):
    """The Do Not Disturb mode to set."""

    mode: Literal["off", "priority", "alarms", "total_silence"] = Field(
        description="off; priority (priority interruptions only); alarms (alarms only); "
        "total_silence (nothing)",
        examples=["priority"],
    )


class BluetoothSet(_Params):
    """Turn Bluetooth on or off."""

    enabled: StrictBool = Field(description="true: on, false: off", examples=[True])


class WifiSet(_Params):
    """Turn Wi-Fi on or off."""

    enabled: StrictBool = Field(description="true: on, false: off", examples=[False])


_STREAM = "audio stream: music, ring, alarm, notification, voice_call or system"


class VolumeGet(_Params):
    """The audio stream to read."""

    stream: Stream = Field(description=_STREAM, examples=["ring"])


class VolumeSet(_Params):
    """Exactly one of ``level`` (device steps) or ``percent`` (0..100)."""

    stream: Stream = Field(description=_STREAM, examples=["alarm"])
    level: StrictInt | None = Field(
        default=None, ge=0, description="volume in the device's own steps (0..its maximum)"
    )
    percent: StrictInt | None = Field(
        default=None, ge=0, le=100, description="volume in percent of the maximum", examples=[50]
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> VolumeSet:
        if (self.level is None) == (self.percent is None):
            raise ValueError("give exactly one of level or percent")
        return self


class Sms(_Params):
    """Recipient as E.164 (+4915112345678) or local digits; body 1..10000 chars."""

    to: str = Field(
        description="recipient: E.164 (+4915112345678) or local digits (2..15)",
        examples=["+15551234567"],
    )
    body: str = Field(
        min_length=1, max_length=MAX_BODY, description="message text", examples=["See you at 8"]
    )

    @field_validator("to")
    @classmethod
    def _phone_number(cls, value: str) -> str:
        if not (_E164.fullmatch(value) or _LOCAL.fullmatch(value)):
            raise ValueError("not a phone number (E.164 like +4915112345678, or digits)")
        return value

    @field_validator("body")
    @classmethod
    def _one_argv_element(cls, value: str) -> str:
        # a NUL ends a C string on the phone; an unpaired surrogate has no UTF-8 form
        if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise ValueError("body holds a NUL or an unpaired surrogate")
        return value


class Permission(_Params):
    """A runtime permission (package + permission) or a special access."""

    package: str = Field(
        pattern=rf"^{PACKAGE.pattern}$",
        description="Android package name",
        examples=["com.example.notes"],
    )
    permission: str | None = Field(
        default=None,
        pattern=rf"^{PERMISSION.pattern}$",
        description="a runtime permission (give this or special)",
        examples=["android.permission.CAMERA"],
    )
    special: Literal["notification_listener", "dnd_access"] | None = Field(
        default=None, description="a special access (give this or permission)"
    )
    component: str | None = Field(
        default=None,
        pattern=rf"^{COMPONENT.pattern}$",
        description="the listener service (pkg/.Cls), only for special notification_listener",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Permission:
        if (self.permission is None) == (self.special is None):
            raise ValueError("give exactly one of permission or special")
        if self.special == "notification_listener" and self.component is None:
            raise ValueError("special notification_listener needs component")
        if self.special != "notification_listener" and self.component is not None:
            raise ValueError("component is only for special notification_listener")
        return self
