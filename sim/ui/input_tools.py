"""``input``, ``wm``, ``uiautomator dump`` and ``screencap``.

Sources:
- ``input`` (frameworks/base services/core/java/com/android/server/input/
  InputShellCommand.java; cmds/input before API 30): ``tap X Y`` and ``swipe`` parse floats;
  ``text`` turns ``%s`` into a space; ``keyevent`` takes ``KEYCODE_*`` names, bare names or
  numbers (``KeyEvent.keyCodeFromString``); characters the virtual keyboard map cannot type
  make ``text`` fail with a NullPointerException.
- ``wm size``/``wm density`` (WindowManagerShellCommand): ``Physical size: 1080x2400``,
  ``Physical density: 420``.
- ``uiautomator dump`` (frameworks/testing uiautomator DumpCommand.java): writes
  ``/sdcard/window_dump.xml`` and prints ``UI hierchary dumped to: <path>`` (sic) after
  ``waitForIdle(1000, 10000)``; to ``/dev/tty`` the XML itself comes first on standard
  output (see ``TERMINALS``). Its failures write no file and leave an older one in place:
  a screen that never idles prints ``ERROR: could not get idle state.`` on stderr after the
  10 s timeout and exits 0 (TencentQQGYLab/AppAgent#39); a killed dump exits 137 with
  ``Killed`` (dtmilano/AndroidViewClient#181); while the uiautomator2 server holds
  UiAutomation, connecting throws "already registered" (``automation.py``; the exit status
  of that case is not captured from a device: phoned does not rely on it). Costs and faults
  come from ``phone.ui.automation``.
- ``screencap`` (frameworks/base cmds/screencap/screencap.cpp): ``-p`` or a ``.png`` file
  name gives PNG; otherwise a raw header (width, height, format, and from API 28 the
  dataspace, little-endian u32) followed by RGBA pixels.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.ui import render
from phoned.sim.ui.automation import ALREADY_REGISTERED, DUMP_HOLDER
from phoned.sim.ui.model import Ui

KEYCODES: dict[str, int] = {
    "HOME": 3,
    "BACK": 4,
    "CALL": 5,
    "ENDCALL": 6,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "VOLUME_UP": 24,
    "VOLUME_DOWN": 25,
    "POWER": 26,
    "CAMERA": 27,
    "TAB": 61,
    "SPACE": 62,
    "ENTER": 66,
    "DEL": 67,
    "MENU": 82,
    "SEARCH": 84,
    "VOLUME_MUTE": 164,
    "APP_SWITCH": 187,
    "SLEEP": 223,
    "WAKEUP": 224,
}
NPE_TEXT = (
    "Exception occurred while executing 'text':\n"
    "java.lang.NullPointerException: Attempt to get length of null array\n"
)


def keycode(name: str) -> int:
    """``KeyEvent.keyCodeFromString``: 0 (KEYCODE_UNKNOWN) when it is not a key."""
    bare = name[len("KEYCODE_") :] if name.startswith("KEYCODE_") else name
    if bare in KEYCODES:
        return KEYCODES[bare]
    try:
        return int(name)
    except ValueError:
        return 0


def press_key(io: ToolIO, code: int) -> None:
    """What the phone does with one key press."""
    ui = io.phone.service(Ui)
    with io.phone.lock:
        actions: dict[int, Callable[[], None]] = {
            224: ui.wake,
            223: ui.sleep,
            26: ui.sleep if ui.screen_on else ui.wake,
            3: ui.go_home,
            4: ui.back,
            82: _menu_unlock(io),
        }
        if code in actions and (ui.screen_on or code in (224, 26)):
            actions[code]()


def _menu_unlock(io: ToolIO) -> Callable[[], None]:
    """KEYCODE_MENU dismisses an insecure keyguard (PhoneWindowManager)."""
    ui = io.phone.service(Ui)

    def run() -> None:
        if ui.locked and not ui.secure_lock:
            ui.locked = False

    return run


def _floats(values: list[str]) -> list[int]:
    return [int(float(v)) for v in values]


def _tap(io: ToolIO, args: list[str]) -> int:
    x, y = _floats(args[:2])
    io.phone.service(Ui).tap(x, y)
    return 0


def _swipe(io: ToolIO, args: list[str]) -> int:
    x1, y1, x2, y2 = _floats(args[:4])
    io.phone.service(Ui).swipe(x1, y1, x2, y2)
    return 0


def _text(io: ToolIO, args: list[str]) -> int:
    text = " ".join(args).replace("%s", " ")
    if any(not (0x20 <= ord(c) < 0x7F) for c in text):
        io.err(NPE_TEXT)
        return 255
    io.phone.service(Ui).type_text(text)
    return 0


def _keyevent(io: ToolIO, args: list[str]) -> int:
    for name in args:
        if name.startswith("--"):
            continue
        press_key(io, keycode(name))
    return 0


INPUT_COMMANDS: dict[str, tuple[int, Callable[[ToolIO, list[str]], int]]] = {
    "tap": (2, _tap),
    "swipe": (4, _swipe),
    "text": (1, _text),
    "keyevent": (1, _keyevent),
}
_SOURCES = {
    "touchscreen",
    "touchpad",
    "keyboard",
    "dpad",
    "gamepad",
    "mouse",
    "stylus",
    "trackball",
    "joystick",
    "touchnavigation",
    "rotaryencoder",
}


def _inject_denied(io: ToolIO, command: str) -> int:
    """MIUI without "USB debugging (Security settings)": InputManager refuses the shell's
    injection (tests/fixtures/android/real/input-29-xiaomi-inject_denied.txt, Android 10).
    Up to API 29 ``input`` is an app_process tool and the exception is uncaught (its stack on
    stderr; the captures do not show the exit status, 1 here); from API 30 it is a shell
    command and BasicShellCommandHandler.exec prints ``Exception occurred while executing``
    and returns -1 (exit 255)."""
    trace = (
        "java.lang.SecurityException: Injecting to another application requires "
        "INJECT_EVENTS permission\n"
        "\tat android.os.Parcel.createException(Parcel.java:2075)\n"
        "\tat android.hardware.input.InputManager.injectInputEvent(InputManager.java:886)\n"
    )
    if io.phone.sdk >= 30:
        io.err(f"Exception occurred while executing '{command}':\n{trace}")
        return 255
    io.err(trace)
    return 1


@tool("input")
def input_tool(io: ToolIO, argv: list[str]) -> int:
    """``input [SOURCE] COMMAND ARGS``."""
    args = argv[1:]
    if args and args[0] in _SOURCES:
        args = args[1:]
    if not args or args[0] not in INPUT_COMMANDS:
        io.err(
            f"Error: Unknown command: {args[0]}\n"
            if args
            else "Usage: input [<source>] <command> [<arg>...]\n"
        )
        return 1
    needed, run = INPUT_COMMANDS[args[0]]
    if len(args) - 1 < needed:
        io.err(f"Error: Invalid arguments for command: {args[0]}\n")
        return 1
    if io.phone.faults.inject_denied and args[0] in ("tap", "swipe", "keyevent", "text"):
        return _inject_denied(io, args[0])
    try:
        return run(io, args[1:])
    except ValueError as exc:
        io.err(
            f"Exception occurred while executing '{args[0]}':\n"
            f"java.lang.NumberFormatException: {exc}\n"
        )
        return 255


@tool("wm")
def wm(io: ToolIO, argv: list[str]) -> int:
    """``wm size`` / ``wm density`` (read-only here)."""
    ui = io.phone.service(Ui)
    verb = argv[1] if len(argv) > 1 else ""
    if verb == "size":
        io.out(f"Physical size: {ui.size[0]}x{ui.size[1]}\n")
        return 0
    if verb == "density":
        io.out(f"Physical density: {ui.density}\n")
        return 0
    io.err(f"Unknown command: {verb}\n")
    return 255


@tool("uiautomator")
def uiautomator(io: ToolIO, argv: list[str]) -> int:
    """``uiautomator dump [--compressed] [FILE]``."""
    args = [a for a in argv[1:] if a != "--compressed"]
    if not args or args[0] != "dump":
        io.err("Usage: uiautomator <subcommand> [options]\n")
        return 1
    path = args[1] if len(args) > 1 else "/sdcard/window_dump.xml"
    automation = io.phone.service(Ui).automation
    if not automation.acquire(DUMP_HOLDER):
        io.err(ALREADY_REGISTERED)
        return 1
    try:
        return _dump(io, path)
    finally:
        automation.release(DUMP_HOLDER)


# DumpCommand.java hands its file argument to AccessibilityNodeInfoDumper.dumpWindowToFile,
# which writes the XML (no newline after it) to that path; ``/dev/tty`` is the shell's own
# terminal, so the hierarchy comes out on standard output directly followed by DumpCommand's
# ``UI hierchary dumped to: /dev/tty`` line (what ``adb exec-out uiautomator dump /dev/tty``
# readers strip, e.g. mobile-next/mobile-mcp and mobilecli's Android dump).
TERMINALS = ("/dev/tty",)


def _dump(io: ToolIO, path: str) -> int:
    """One dump while holding UiAutomation: wait for idle, then write or fail."""
    ui = io.phone.service(Ui)
    automation = ui.automation
    if automation.faults.dump_killed:
        io.err("Killed\n")
        return 137
    if automation.faults.dump_not_idle:
        io.cancelled.wait(automation.costs.idle_timeout_s)
        io.err("ERROR: could not get idle state.\n")
        return 0
    if io.cancelled.wait(automation.costs.dump_s):
        return 137
    xml = ui.hierarchy_xml(u2=False)
    if path in TERMINALS:  # the caller's terminal: the XML, then the line, on one stream
        io.out(xml)
        io.out(f"UI hierchary dumped to: {path}\n")
        return 0
    target = io.phone.fs.normalize(path, io.cwd)
    with io.phone.lock:
        try:
            io.phone.fs.write(target, xml.encode("utf-8"))
        except (FileNotFoundError, IsADirectoryError):
            io.err(f"ERROR: could not write {path}\n")
            return 1
    io.out(f"UI hierchary dumped to: {path}\n")
    return 0


def _raw_screencap(io: ToolIO) -> bytes:
    image = io.phone.service(Ui).screenshot().convert("RGBA")
    header = struct.pack("<III", image.width, image.height, 1)
    if io.phone.sdk >= 28:
        header += struct.pack("<I", 0)
    return header + image.tobytes()


@tool("screencap")
def screencap(io: ToolIO, argv: list[str]) -> int:
    """``screencap [-p] [-d ID] [FILE]``."""
    args = argv[1:]
    png = "-p" in args
    files = [a for i, a in enumerate(args) if not a.startswith("-") and args[i - 1] != "-d"]
    if files and files[0].endswith(".png"):
        png = True
    data = render.png_bytes(io.phone.service(Ui).screenshot()) if png else _raw_screencap(io)
    if not files:
        io.stdout.write(data)
        return 0
    with io.phone.lock:
        try:
            io.phone.fs.write(io.phone.fs.normalize(files[0], io.cwd), data)
        except (FileNotFoundError, IsADirectoryError):
            io.err(f"Error opening file: {files[0]} (No such file or directory)\n")
            return 1
    return 0
