"""``volume.set`` / ``volume.get``: one stream's index through VolumeCtrl.

The range and the current index come from the device, never from a table:
``cmd media_session volume --stream N --get`` (API 30+) or ``media volume --stream N --get``
(below) prints ``volume is I in range [MIN..MAX]`` where I is the index for the stream's
active output device (AudioService.getStreamVolume); ``dumpsys audio`` (``streamVolume``,
``Min``, ``Max``) is the fallback when that line is missing. The set command exits 0 even for
an index out of range (it prints an error and changes nothing), so the range is checked
before anything is sent and the index is read back afterwards.

``percent`` maps onto the stream's own range: ``level = min + round_half_up((max - min) *
percent / 100)``, so 0 % is the minimum, 100 % the maximum, and 50 % of music 0..15 is 8.

Sources of the commands: ``cmd media_session volume``: services/core/java/com/android/server/
media/VolumeCtrl.java (API 30+); ``media volume``: cmds/media VolumeCtrl.java (API <= 29,
removed in Android 11). ``dumpsys audio`` and the stream numbers: ``device/commands.py``
(the device context reads them too).
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from phoned.device import commands, parsers
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method
from phoned.device.actions.params import Params
from phoned.device.actions.reads import got, invalid, target
from phoned.device.actions.setting import Change, Setting
from phoned.device.commands import Argv
from phoned.device.parsers import VolumeReading
from phoned.device.probes import CMD_MEDIA_SESSION, SERVICES, service_running
from pydantic import Field, StrictInt, model_validator

# ---- params ------------------------------------------------------------------------------

Stream = Literal["music", "ring", "alarm", "notification", "voice_call", "system"]
_STREAM = "audio stream: music, ring, alarm, notification, voice_call or system"


class VolumeGet(Params):
    """The audio stream to read."""

    stream: Stream = Field(description=_STREAM, examples=["ring"])


class VolumeSet(Params):
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


# ---- commands ----------------------------------------------------------------------------

MEDIA_SESSION_VOLUME_SINCE_SDK = 30


def _volume_tool(sdk: int) -> Argv:
    if sdk >= MEDIA_SESSION_VOLUME_SINCE_SDK:
        return ("cmd", "media_session", "volume")
    return ("media", "volume")


def volume_get(sdk: int, stream: int) -> Argv:
    """``... volume --stream N --get``: prints ``volume is I in range [MIN..MAX]``."""
    return (*_volume_tool(sdk), "--stream", str(stream), "--get")


def volume_set(sdk: int, stream: int, index: int) -> Argv:
    """``... volume --stream N --set I`` (exits 0 even for an index out of range)."""
    return (*_volume_tool(sdk), "--stream", str(stream), "--set", str(index))


# ---- parsers -----------------------------------------------------------------------------
# ``dumpsys audio`` (``parsers.parse_audio_streams``) is shared with the device context.

_VOLUME_IS = re.compile(r"volume is (-?\d+) in range \[(-?\d+)\.\.(-?\d+)\]")


def parse_volume_get(text: str) -> VolumeReading | None:
    """``cmd media_session volume --stream N --get`` (``[V]``) or ``media volume`` (``[v]``):
    the line ``volume is I in range [MIN..MAX]`` (VolumeCtrl.java). None when missing."""
    match = _VOLUME_IS.search(text)
    if match is None:
        return None
    return VolumeReading(int(match[1]), int(match[2]), int(match[3]))


# ---- actions -----------------------------------------------------------------------------

STREAM_DUMP_NAMES = {name: f"STREAM_{name.upper()}" for name in commands.STREAMS}


def _uses_media_session(ctx: ActionContext) -> bool:
    return bool(ctx.device.capabilities[CMD_MEDIA_SESSION.name])


def read_volume(ctx: ActionContext, stream: str, phase: str) -> VolumeReading | None:
    """The stream's index on its active device and its range, observed as evidence."""
    sdk = 30 if _uses_media_session(ctx) else min(ctx.device.sdk, 29)
    argv = volume_get(sdk, commands.STREAMS[stream])
    reading = parse_volume_get(ctx.recorder.read(argv).stdout)
    if reading is None:  # tool missing or unparsable: dumpsys audio has the same values
        argv = commands.DUMPSYS_AUDIO
        streams = parsers.parse_audio_streams(ctx.recorder.read(argv).stdout)
        reading = streams.get(STREAM_DUMP_NAMES[stream])
    value = None if reading is None else _as_json(reading)
    ctx.recorder.observe(f"volume.{stream}", value, phase, argv)
    return reading


def _as_json(reading: VolumeReading) -> dict[str, int]:
    return {"level": reading.index, "min": reading.min_index, "max": reading.max_index}


def percent_to_level(percent: float, low: int, high: int) -> int:
    """``percent`` (0..100) of the range [low..high], rounded half up."""
    return low + math.floor((high - low) * percent / 100 + 0.5)


def get(ctx: ActionContext, params: VolumeGet) -> Outcome:
    """The stream's level, range and percent of the range."""
    stream = params.stream
    reading = read_volume(ctx, stream, "read")
    if reading is None:
        return outcome(ctx, Status.NOT_MET, target(None, None), "volume unreadable")
    span = reading.max_index - reading.min_index
    pct = round(100 * (reading.index - reading.min_index) / span) if span else 100
    return got(ctx, {"stream": stream, **_as_json(reading), "percent": pct})


def _level(params: VolumeSet, reading: VolumeReading) -> int:
    """The level asked for: ``level`` as given, or ``percent`` of the device's range (the
    model holds exactly one of them)."""
    if params.level is not None:
        return params.level
    return percent_to_level(float(params.percent or 0), reading.min_index, reading.max_index)


def _wanted_level(ctx: ActionContext, params: VolumeSet, reading: VolumeReading) -> int | Outcome:
    """The level asked for, checked against the device's range, or an invalid_params."""
    low, high = reading.min_index, reading.max_index
    level = _level(params, reading)
    if params.level is not None and not low <= level <= high:
        return invalid(ctx, "level", f"level must be an integer in [{low}..{high}], got {level!r}")
    return level


def set_level(ctx: ActionContext, params: VolumeSet) -> Outcome:
    """Set the stream's index; met when ``--get`` reads the new index back."""
    return SETTING.run(ctx, params)


def reconcile(ctx: ActionContext, params: VolumeSet, hint: dict[str, Any]) -> str:
    """Did an interrupted ``volume.set`` take effect? Compares the index with the target."""
    return SETTING.reconcile(ctx, params, hint)


def _read(ctx: ActionContext, params: VolumeSet, phase: str) -> VolumeReading | None:
    return read_volume(ctx, params.stream, phase)


def _reached(params: VolumeSet, reading: VolumeReading | None) -> bool | None:
    """The index is the level asked for (a level outside the range is never reached)."""
    return None if reading is None else reading.index == _level(params, reading)


def _already(ctx: ActionContext, params: VolumeSet, before: VolumeReading | None) -> Outcome:
    level = before.index if before is not None else None
    return outcome(ctx, Status.MET, target(level, level), "already at level", value=level)


def _unsupported(
    ctx: ActionContext, params: VolumeSet, before: VolumeReading | None
) -> Outcome | None:
    if before is not None:
        return None
    return outcome(ctx, Status.UNSUPPORTED, target(None, None), "the stream's volume is unreadable")


def _apply(ctx: ActionContext, params: VolumeSet, before: VolumeReading | None) -> Outcome:
    assert before is not None  # unsupported otherwise
    stream = params.stream
    level = _wanted_level(ctx, params, before)
    if isinstance(level, Outcome):
        return level
    sdk = 30 if _uses_media_session(ctx) else min(ctx.device.sdk, 29)
    argv = volume_set(sdk, commands.STREAMS[stream], level)
    ctx.effect("volume.set", f"{stream}={level}", argv, {"stream": stream, "level": level})
    after, ok = ctx.poll(
        f"volume.{stream}", lambda: read_volume(ctx, stream, "after"),
        lambda r: r is not None and r.index == level, timeout=min(ctx.settle_timeout, 2.0),
    )  # fmt: skip
    observed = after.index if after is not None else None
    status = Status.MET if ok else Status.NOT_MET
    return outcome(
        ctx,
        status,
        target(level, observed),
        f"{stream} {observed} (wanted {level})",
        value=observed,
        before=before.index,
        after=observed,
    )


def name_target(params: dict[str, Any], observed: Any) -> str:
    """``volume.<stream>.<level>`` (a ``volume.get`` reading names its ``level``)."""
    level = observed.get("level") if isinstance(observed, dict) else observed
    return f"volume.{params.get('stream', 'music')}.{level}"


def _change(params: VolumeSet, before: VolumeReading | None) -> Change:
    """``volume music 5 -> 9``, for the preview of an approval."""
    name = f"volume {params.stream}"
    if before is None:
        return Change(
            name, "unknown", str(params.level if params.level is not None else f"{params.percent}%")
        )
    return Change(name, str(before.index), str(_level(params, before)))


SETTING = Setting(_read, _reached, _already, _apply, _unsupported, change=_change)


# ---- declaration -------------------------------------------------------------------------


_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads=(
        "`cmd media_session volume --stream N --get` (API 30+) / `media volume ...` (below), "
        "`dumpsys audio` as fallback"
    ),
    effect="`... --set I`",
    verified="`--get` reads the index for the active output device",
)

DECLARED = (
    Method(
        "volume.set",
        VolumeSet,
        set_level,
        name_target,
        reconcile=reconcile,
        previews=True,
        probes=(SERVICES, CMD_MEDIA_SESSION),
        needs=service_running("audio"),
        summary="Set one audio stream's volume (device steps or percent), verified by read-back.",
        reads="the stream's volume and range (dumpsys audio)",
        changes="one stream's volume",
        emulator_params={"stream": "music", "percent": 40},
        actions_row=_ACTIONS_ROW,
    ),
    Method(
        "volume.get",
        VolumeGet,
        get,
        name_target,
        probes=(SERVICES, CMD_MEDIA_SESSION),
        needs=service_running("audio"),
        summary="Read one audio stream's volume and its range.",
        reads="the stream's volume and range (dumpsys audio)",
        emulator_params={"stream": "music"},
    ),
)
