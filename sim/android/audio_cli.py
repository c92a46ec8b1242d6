"""``cmd media_session volume`` (API 30+) and ``media volume`` (API 28): the VolumeCtrl tool.

Both print what AOSP ``VolumeCtrl.run`` prints:

* API 30+: ``services/core/java/com/android/server/media/VolumeCtrl.java`` run by
  ``MediaShellCommand`` (log tags ``[V]``; ``showError`` prints the help to stdout and the
  message to stderr). An out-of-range ``--set`` calls ``showError`` and *returns normally*, so
  the command exits 0 while the volume does not change (the quirk phoned must not trust). An
  exception (``Integer.decode`` failing, a bad stream type) is caught by ``onCommand``:
  help + ``e.toString()`` and exit code -1 (255).
* API 28: ``cmds/media/src/com/android/commands/media/VolumeCtrl.java`` run by the ``media``
  app_process tool (``BaseCommand``; log tags ``[v]``; usage and errors on stderr; every
  error path exits 0, an IllegalArgumentException prints ``Error: <message>``).
* The ``media`` binary was removed in Android 11 (its replacement, ``MediaShellCommand``, is
  copyright 2019): on API 30+ mksh answers ``media: inaccessible or not found`` (127).
  ``cmd media_session`` on API 28 reaches a binder without a shell command:
  ``Binder.onShellCommand`` prints ``No shell command implementation.`` and exits 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from phoned.sim.android.audio import STREAM_NAMES, AudioService, InvalidStream
from phoned.sim.shell.registry import ToolIO, service, tool

VOLUME_USAGE = (
    "the options are as follows: \n"
    "\t\t--stream STREAM selects the stream to control, see AudioManager.STREAM_*\n"
    "\t\t                controls AudioManager.STREAM_MUSIC if no stream is specified\n"
    "\t\t--set INDEX     sets the volume index value\n"
    "\t\t--adj DIRECTION adjusts the volume, use raise|same|lower for the direction\n"
    "\t\t--get           outputs the current volume\n"
    "\t\t--show          shows the UI during the volume change\n"
    "\texamples:\n"
    "\t\tadb shell media volume --show --stream 3 --set 11\n"
    "\t\tadb shell media volume --stream 0 --adj lower\n"
    "\t\tadb shell media volume --stream 3 --get\n"
)

# MediaShellCommand.onHelp (API 30+); the last println adds an empty line.
MEDIA_SESSION_HELP = (
    "usage: media_session [subcommand] [options]\n"
    "       media_session dispatch KEY\n"
    "       media_session dispatch KEY\n"
    "       media_session list-sessions\n"
    "       media_session monitor <tag>\n"
    "       media_session volume [options]\n"
    "\n"
    "media_session dispatch: dispatch a media key to the system.\n"
    "                KEY may be: play, pause, play-pause, mute, headsethook,\n"
    "                stop, next, previous, rewind, record, fast-forword.\n"
    "media_session list-sessions: print a list of the current sessions.\n"
    "media_session monitor: monitor updates to the specified session.\n"
    "                       Use the tag from list-sessions.\n"
    "media_session volume:  " + VOLUME_USAGE + "\n"
    "\n"
)

# Media.onShowUsage of Android 9 (cmds/media/.../Media.java with the volume lines).
MEDIA_USAGE = (
    "usage: media [subcommand] [options]\n"
    "       media dispatch KEY\n"
    "       media list-sessions\n"
    "       media monitor <tag>\n"
    "       media volume [options]\n"
    "\n"
    "media dispatch: dispatch a media key to the system.\n"
    "                KEY may be: play, pause, play-pause, mute, headsethook,\n"
    "                stop, next, previous, rewind, record, fast-forword.\n"
    "media list-sessions: print a list of the current sessions.\n"
    "media monitor: monitor updates to the specified session.\n"
    "                       Use the tag from list-sessions.\n"
    "media volume:  " + VOLUME_USAGE + "\n"
)

ADJUSTMENTS = {"raise": 1, "same": 0, "lower": -1}


class JavaException(Exception):
    """A Java exception VolumeCtrl would throw; ``str()`` is its ``toString()``."""

    def __init__(self, cls: str, message: str) -> None:
        super().__init__(f"{cls}: {message}")
        self.cls = cls
        self.message = message


class ShowError(Exception):
    """VolumeCtrl called ``showError(msg)`` and returned."""


def java_decode(text: str) -> int:
    """``java.lang.Integer.decode``: optional sign, ``0x``/``#`` hex, leading-``0`` octal."""
    m = re.fullmatch(r"([+-]?)(0[xX]|#|0(?=.)|)(.*)", text, re.DOTALL)
    assert m is not None
    sign, prefix, digits = m.groups()
    base = 16 if prefix in ("0x", "0X", "#") else 8 if prefix == "0" else 10
    if not text:
        raise JavaException("java.lang.NumberFormatException", "Zero length string")
    valid = "0123456789abcdef"[:base]
    if not digits or digits[0] in "+-" or any(c not in valid for c in digits.lower()):
        raise JavaException("java.lang.NumberFormatException", f'For input string: "{digits}"')
    value = int(digits, base) * (-1 if sign == "-" else 1)
    if not -(2**31) <= value < 2**31:
        raise JavaException("java.lang.NumberFormatException", f'For input string: "{digits}"')
    return value


@dataclass
class VolumeRequest:
    """Options VolumeCtrl read from its arguments."""

    stream: int = 3  # AudioManager.STREAM_MUSIC
    index: int = 5
    mode: str = ""  # "", "set" or "adj"
    adjustment: str | None = None
    get: bool = False


def _stream_name(stream: int) -> str:
    return STREAM_NAMES[stream] if 0 <= stream < len(STREAM_NAMES) else "invalid stream"


def _next_arg(args: list[str], option: str) -> str:
    if not args:
        # ShellCommand.getNextArgRequired / BaseCommand.nextArgRequired
        raise JavaException(
            "java.lang.IllegalArgumentException", f'Argument expected after "{option}"'
        )
    return args.pop(0)


def parse_volume_args(args: list[str], log: Callable[[str], None]) -> VolumeRequest:
    """Read options the way VolumeCtrl's option loop does, logging each ``[V]`` line."""
    req = VolumeRequest()
    while args:
        option = args.pop(0)
        if option == "--show":
            continue
        if option == "--get":
            req.get = True
            log("will get volume")
        elif option == "--stream":
            req.stream = java_decode(_next_arg(args, option))
            log(f"will control stream={req.stream} ({_stream_name(req.stream)})")
        elif option == "--set":
            req.index = java_decode(_next_arg(args, option))
            req.mode = "set"
            log(f"will set volume to index={req.index}")
        elif option == "--adj":
            req.mode = "adj"
            req.adjustment = _next_arg(args, option)
            log("will adjust volume")
        else:
            raise JavaException("java.lang.IllegalArgumentException", f"Unknown argument {option}")
    return req


def run_volume(audio: AudioService, args: list[str], log: Callable[[str], None]) -> None:
    """VolumeCtrl.run against the model; raises ShowError or JavaException like the tool."""
    req = parse_volume_args(args, log)
    if req.mode == "adj" and req.adjustment not in ADJUSTMENTS:
        raise ShowError(
            f"Error: no valid volume adjustment, was {req.adjustment}, expected lower|same|raise"
        )
    log("Connecting to AudioService")
    try:
        if req.mode == "set":
            low, high = audio.range(req.stream)
            if not low <= req.index <= high:
                raise ShowError(
                    f"Error: invalid volume index {req.index} for stream {req.stream} "
                    f"(should be in [{low}..{high}])"
                )
            audio.set_index(req.stream, req.index)
        elif req.mode == "adj":
            audio.adjust(req.stream, ADJUSTMENTS[req.adjustment or ""])
        if req.get:
            low, high = audio.range(req.stream)
            log(f"volume is {audio.get_index(req.stream)} in range [{low}..{high}]")
    except InvalidStream as exc:
        raise JavaException("java.lang.IllegalArgumentException", str(exc)) from exc


@service("cmd", "media_session")
def cmd_media_session(io: ToolIO, argv: list[str]) -> int:
    """``cmd media_session``: help and ``volume`` (API 30+)."""
    if io.phone.sdk < 30:
        io.err("No shell command implementation.\n")  # Binder.onShellCommand default
        return 0
    sub = argv[1] if len(argv) > 1 else ""
    if sub in ("", "help", "-h"):
        io.out(MEDIA_SESSION_HELP)  # ShellCommand.handleDefaultCommands -> onHelp
        return 0
    if sub != "volume":
        io.out(MEDIA_SESSION_HELP)
        io.err(f"Error: unknown command '{sub}'\n")
        return 255
    with io.phone.lock:
        try:
            run_volume(io.phone.service(AudioService), argv[2:], lambda msg: io.out(f"[V] {msg}\n"))
        except ShowError as exc:
            io.out(MEDIA_SESSION_HELP)
            io.err(f"{exc}\n")
        except JavaException as exc:
            io.out(MEDIA_SESSION_HELP)
            io.err(f"{exc}\n")
            return 255
    return 0


def _media_volume(io: ToolIO, args: list[str]) -> int:
    with io.phone.lock:
        try:
            run_volume(io.phone.service(AudioService), args, lambda msg: io.out(f"[v] {msg}\n"))
        except ShowError as exc:  # BaseCommand.showError
            io.err(MEDIA_USAGE + "\n" + f"{exc}\n")
        except JavaException as exc:  # BaseCommand.run catches IllegalArgumentException
            io.err(MEDIA_USAGE + "\n" + f"Error: {exc.message}\n")
    return 0


@tool("media")
def media(io: ToolIO, argv: list[str]) -> int:
    """``media`` (API 28 only): ``volume`` through VolumeCtrl; other subcommands: usage."""
    if io.phone.sdk >= 30:
        io.err("/system/bin/sh: media: inaccessible or not found\n")
        return 127
    sub = argv[1] if len(argv) > 1 else None
    if sub == "volume":
        return _media_volume(io, argv[2:])
    if sub is None:
        io.out(MEDIA_USAGE)  # BaseCommand.run: no arguments -> usage on stdout
        return 0
    io.err(MEDIA_USAGE + "\n" + f"Error: unknown command '{sub}'\n")
    return 0
