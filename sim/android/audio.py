"""Audio service model: streams, index ranges and per-output-device indexes; ``dumpsys audio``.

The volume command line tools (``cmd media_session volume``, ``media volume``) live in
``audio_cli.py`` (``registry.load_all`` imports both).

Sources (AOSP ``platform_frameworks_base``):

* stream names: ``media/java/android/media/AudioSystem.java`` ``STREAM_NAMES``
  (``STREAM_ASSISTANT`` exists from API 29).
* ranges: ``services/core/java/com/android/server/audio/AudioService.java``
  ``MAX_STREAM_VOLUME`` / ``MIN_STREAM_VOLUME`` (voice_call 1..5, system 0..7, ring 0..7,
  music 0..15, alarm 1..7, notification 0..7, bluetooth_sco 0..15, dtmf 0..15,
  accessibility 1..15). Pixels override some of them through ``ro.config.media_vol_steps``
  / ``ro.config.vc_call_vol_steps``; the simulated phone keeps the AOSP defaults because no
  profile sets those properties.
* default indexes: ``AudioSystem.DEFAULT_STREAM_VOLUME``.
* device codes and names: ``AudioSystem.DEVICE_OUT_*`` / ``getOutputDeviceName``
  (earpiece 0x1, speaker 0x2, wired_headset 0x4, wired_headphone 0x8, bt_sco 0x10,
  bt_a2dp 0x80, usb_headset 0x4000000, default 0x40000000).

Not modelled: stream aliasing (ring/notification/system sharing one index on voice-capable
phones), mute, ringer mode, safe-media-volume. Each stream keeps its own indexes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from phoned.sim.shell.registry import SimService, ToolIO, service

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

STREAM_NAMES = (
    "STREAM_VOICE_CALL",
    "STREAM_SYSTEM",
    "STREAM_RING",
    "STREAM_MUSIC",
    "STREAM_ALARM",
    "STREAM_NOTIFICATION",
    "STREAM_BLUETOOTH_SCO",
    "STREAM_SYSTEM_ENFORCED",
    "STREAM_DTMF",
    "STREAM_TTS",
    "STREAM_ACCESSIBILITY",
    "STREAM_ASSISTANT",
)
# Short names accepted by ``AudioService.get_index`` and friends.
STREAM_IDS = {name.removeprefix("STREAM_").lower(): i for i, name in enumerate(STREAM_NAMES)}

# AudioService.MIN_STREAM_VOLUME / MAX_STREAM_VOLUME, indexed by stream type.
MIN_INDEX = (1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0)
MAX_INDEX = (5, 7, 7, 15, 7, 7, 15, 7, 15, 15, 15, 15)
# AudioSystem.DEFAULT_STREAM_VOLUME.
DEFAULT_INDEX = (4, 7, 5, 5, 6, 5, 7, 7, 5, 5, 5, 5)

DEVICE_EARPIECE = 0x1
DEVICE_SPEAKER = 0x2
DEVICE_WIRED_HEADSET = 0x4
DEVICE_WIRED_HEADPHONE = 0x8
DEVICE_BT_SCO = 0x10
DEVICE_BT_A2DP = 0x80
DEVICE_USB_HEADSET = 0x4000000
DEVICE_DEFAULT = 0x40000000
DEVICE_NAMES = {
    DEVICE_EARPIECE: "earpiece",
    DEVICE_SPEAKER: "speaker",
    DEVICE_WIRED_HEADSET: "wired_headset",
    DEVICE_WIRED_HEADPHONE: "wired_headphone",
    DEVICE_BT_SCO: "bt_sco",
    DEVICE_BT_A2DP: "bt_a2dp",
    DEVICE_USB_HEADSET: "usb_headset",
    DEVICE_DEFAULT: "default",
}
_MEDIA_DEVICES = (
    DEVICE_SPEAKER,
    DEVICE_WIRED_HEADSET,
    DEVICE_WIRED_HEADPHONE,
    DEVICE_BT_A2DP,
    DEVICE_USB_HEADSET,
    DEVICE_DEFAULT,
)
_CALL_DEVICES = (
    DEVICE_EARPIECE,
    DEVICE_SPEAKER,
    DEVICE_WIRED_HEADSET,
    DEVICE_BT_SCO,
    DEVICE_DEFAULT,
)


class InvalidStream(ValueError):
    """The stream type does not exist (AudioService: ``Bad stream type N``)."""


@dataclass
class StreamState:
    """One ``VolumeStreamState``: its range and an index per output device."""

    stream: int
    min_index: int
    max_index: int
    indexes: dict[int, int] = field(default_factory=dict)
    active_device: int = DEVICE_SPEAKER


def num_stream_types(sdk: int) -> int:
    """``AudioSystem.getNumStreamTypes()``: STREAM_ASSISTANT (11) exists from API 29."""
    return 12 if sdk >= 29 else 11


def _new_stream(stream: int) -> StreamState:
    devices = _CALL_DEVICES if stream in (0, 6) else _MEDIA_DEVICES
    default = DEFAULT_INDEX[stream]
    state = StreamState(stream, MIN_INDEX[stream], MAX_INDEX[stream])
    state.indexes = {device: default for device in devices}
    state.active_device = DEVICE_EARPIECE if stream == 0 else DEVICE_SPEAKER
    if stream == 6:
        state.active_device = DEVICE_BT_SCO
    return state


class AudioService:
    """Stream volume state of the phone; callers take ``phone.lock`` around changes."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self.streams: list[StreamState] = [
            _new_stream(i) for i in range(num_stream_types(phone.sdk))
        ]
        music = phone.settings.get("system", "volume_music")
        if music is not None and music.isdigit():
            self._store(3, DEVICE_SPEAKER, int(music))

    def stream_id(self, stream: int | str) -> int:
        """The stream type for a number or a short name (``music``); raises InvalidStream."""
        sid = STREAM_IDS.get(stream, -1) if isinstance(stream, str) else stream
        if not 0 <= sid < len(self.streams):
            raise InvalidStream(f"Bad stream type {stream}")
        return sid

    def range(self, stream: int | str) -> tuple[int, int]:
        """(min, max) index of the stream."""
        state = self.streams[self.stream_id(stream)]
        return state.min_index, state.max_index

    def active_device(self, stream: int | str) -> int:
        """The output device the stream currently plays on (music: the speaker)."""
        return self.streams[self.stream_id(stream)].active_device

    def get_index(self, stream: int | str, device: int | None = None) -> int:
        """Index for ``device`` (default: the active device); falls back to the default entry."""
        state = self.streams[self.stream_id(stream)]
        target = state.active_device if device is None else device
        return state.indexes.get(target, state.indexes[DEVICE_DEFAULT])

    def set_index(self, stream: int | str, index: int) -> None:
        """``setStreamVolume``: store the index, clamped to the range, on the active device."""
        sid = self.stream_id(stream)
        state = self.streams[sid]
        self._store(sid, state.active_device, min(max(index, state.min_index), state.max_index))

    def adjust(self, stream: int | str, direction: int) -> None:
        """``adjustStreamVolume`` by one step (direction -1, 0 or +1), clamped to the range."""
        sid = self.stream_id(stream)
        self.set_index(sid, self.get_index(sid) + direction)

    def _store(self, sid: int, device: int, index: int) -> None:
        state = self.streams[sid]
        state.indexes[device] = index
        # AudioService persists the index as Settings.System "volume_<stream>_<device>".
        short = STREAM_NAMES[sid].removeprefix("STREAM_").lower()
        suffix = "" if device == DEVICE_DEFAULT else "_" + DEVICE_NAMES.get(device, "")
        self.phone.settings.put("system", f"volume_{short}{suffix}", str(index), notify=False)


# ----------------------------------------------------------------------------- dumpsys audio


def _current_line(state: StreamState) -> str:
    """``Current:`` entries in SparseIntArray order (ascending device code), hex codes."""
    parts = [
        f"{device:x} ({DEVICE_NAMES[device]}): {index}"
        for device, index in sorted(state.indexes.items())
    ]
    return ", ".join(parts)


def _devices_line(state: StreamState, sdk: int) -> str:
    """Up to API 30 the device bitmask is printed as names; from API 31
    ``AudioSystem.deviceSetToString`` prints ``name(hex)`` (captured:
    ``Devices: bt_a2dp(80)``, google bttc ``log_parser.py`` docstring)."""
    name = DEVICE_NAMES[state.active_device]
    return name if sdk <= 30 else f"{name}({state.active_device:x})"


def dump_stream(state: StreamState, audio: AudioService, sdk: int) -> list[str]:
    """The lines ``VolumeStreamState.dump`` prints for one stream on this SDK.

    API 28/30: Muted, Min, Max, streamVolume, Current, Devices (capture of an Android 9
    dump: https://modelers.csdn.net/68ecb40d4b11580edfa30e77.html). API 31+: adds
    ``Muted Internally``; API 34+: adds ``Volume Group`` (AudioService.java
    ``VolumeStreamState.dump`` of Android 14; capture ``Volume Group:
    AUDIO_STREAM_VOICE_CALL`` in bttc ``log_parser.py``).
    """
    lines = ["   Muted: false"]
    if sdk >= 31:
        lines.append("   Muted Internally: false")
    lines += [
        f"   Min: {state.min_index}",
        f"   Max: {state.max_index}",
        f"   streamVolume:{audio.get_index(state.stream)}",
        f"   Current: {_current_line(state)}",
        f"   Devices: {_devices_line(state, sdk)}",
    ]
    if sdk >= 34:
        lines.append(f"   Volume Group: AUDIO_{STREAM_NAMES[state.stream]}")
    return lines


def dump_audio(audio: AudioService) -> str:
    """The ``Stream volumes`` section of ``dumpsys audio`` (``AudioService.dumpStreamStates``)."""
    sdk = audio.phone.sdk
    out = ["", "Stream volumes (device: index)"]
    for state in audio.streams:
        out.append(f"- {STREAM_NAMES[state.stream]}:")
        out += dump_stream(state, audio, sdk)
        out.append("")
    out += ["", "- mute affected streams = 0x2f"]
    return "\n".join(out) + "\n"


@service("dumpsys", "audio")
def dumpsys_audio(io: ToolIO, argv: list[str]) -> int:
    """``dumpsys audio``: the stream volume section in the layout of the phone's SDK."""
    with io.phone.lock:
        io.out(dump_audio(io.phone.service(AudioService)))
    return 0


SIM_SERVICE = SimService("audio", AudioService)  # phone.service(AudioService)
