#!/usr/bin/env python3
"""The way users script a phone in Python without phoned: stock adbutils, one
``device.shell2(argv)`` per command (adbutils quotes a list with ``shlex.quote``).

    ANDROID_ADB_SERVER_PORT=N SERIAL=127.0.0.1:7401 [PHONE_SDK=34] \\
        python bench/baselines/stock_adbutils.py METHOD [ARGS...]

Same methods, commands, polling and verification as ``adb_shell.sh`` (and as phoned's
actions, see device/commands.py); output parsing is written here from the formats, without
phoned's parsers. Prints ``value=...`` and ``round_trips=N``; exits 0 when the target was
observed, 1 when not, 2 on a usage error.
"""

from __future__ import annotations

import os
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import adbutils

POLL_S = 0.05
SETTLE_S = 5.0
ZEN = {"off": 0, "priority": 1, "total_silence": 2, "alarms": 3}
DND_WORD = {"off": "off", "priority": "priority", "alarms": "alarms", "total_silence": "none"}
VOLUME_LINE = re.compile(r"volume is (\d+) in range")
BT_STATE = re.compile(r"^  state: ([A-Z_]+)", re.MULTILINE)


class NotMet(Exception):
    """The target was not observed (the message says what was)."""


@dataclass
class Phone:
    """A stock adbutils device, counting one round trip per ``shell2`` call."""

    device: Any  # adbutils.AdbDevice
    sdk: int = 34
    poll_s: float = POLL_S
    settle_s: float = SETTLE_S
    trips: int = 0

    def sh(self, *argv: str) -> tuple[str, int]:
        """Run one command; its stdout (stderr merged, as adbutils v1 shell gives it) and exit."""
        self.trips += 1
        ret = self.device.shell2(list(argv))
        return str(ret.output), int(ret.returncode)


def poll(read: Callable[[], Any], done: Callable[[Any], bool], timeout: float, step: float) -> Any:
    """Read until ``done`` or the deadline; the last value (NotMet when never done)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() >= deadline:
            raise NotMet(f"last read {value!r}")
        time.sleep(step)


def read_zen(p: Phone) -> str:
    return p.sh("settings", "get", "global", "zen_mode")[0].strip()


def dnd_get(p: Phone) -> str:
    zen = read_zen(p)
    names = {str(v): k for k, v in ZEN.items()}
    if zen not in names:
        raise NotMet(f"zen_mode {zen!r}")
    return names[zen]


def dnd_set(p: Phone, mode: str) -> str:
    want = str(ZEN[mode])
    if read_zen(p) == want:
        return mode
    if p.sdk < 29:
        raise NotMet("cmd notification set_dnd needs API 29")
    out, code = p.sh("cmd", "notification", "set_dnd", DND_WORD[mode])
    if code != 0 or "Error occurred" in out:
        raise NotMet(f"set_dnd: {out.strip()}")
    poll(lambda: read_zen(p), lambda z: z == want, p.settle_s, p.poll_s)
    time.sleep(p.poll_s)
    if (zen := read_zen(p)) != want:  # ZenModeHelper may put its own value back
        raise NotMet(f"zen_mode {zen} after settling")
    return mode


def read_bt(p: Phone) -> tuple[str | None, str]:
    match = BT_STATE.search(p.sh("dumpsys", "bluetooth_manager")[0])
    setting = p.sh("settings", "get", "global", "bluetooth_on")[0].strip()
    return (match[1] if match else None), setting


def bluetooth_set(p: Phone, onoff: str) -> str:
    enable = {"on": True, "off": False}[onoff]
    want = ("ON" if enable else "OFF", "1" if enable else "0")
    before = read_bt(p)
    if before[0] is None:
        raise NotMet("no bluetooth_manager")
    if before == want:
        return want[0]
    verb = "enable" if enable else "disable"
    if p.sdk >= 33:
        p.sh("cmd", "bluetooth_manager", verb)
    else:
        p.sh("svc", "bluetooth", verb)
    poll(lambda: read_bt(p), lambda s: s == want, p.settle_s, p.poll_s)
    return want[0]


def volume_tool(p: Phone) -> tuple[str, ...]:
    return ("cmd", "media_session", "volume") if p.sdk >= 30 else ("media", "volume")


def read_volume(p: Phone, stream: str) -> int | None:
    match = VOLUME_LINE.search(p.sh(*volume_tool(p), "--stream", stream, "--get")[0])
    return int(match[1]) if match else None


def volume_get(p: Phone, stream: str) -> str:
    level = read_volume(p, stream)
    if level is None:
        raise NotMet("volume unreadable")
    return str(level)


def volume_set(p: Phone, stream: str, level: str) -> str:
    before = read_volume(p, stream)
    if before is None:
        raise NotMet("volume unreadable")
    if before == int(level):
        return level
    p.sh(*volume_tool(p), "--stream", stream, "--set", level)
    poll(lambda: read_volume(p, stream), lambda v: v == int(level), 2.0, p.poll_s)
    return level


def dump_ui(p: Phone) -> ET.Element:
    for line in p.sh("ps", "-A", "-o", "PID,USER,ARGS")[0].splitlines():  # a left u2 server
        if " com.wetest.uia2.Main" in line:
            p.sh("kill", line.split()[0])
    p.sh("rm", "-f", "/sdcard/window_dump.xml")  # a failed dump writes none: never read an old one
    p.sh("uiautomator", "dump", "/sdcard/window_dump.xml")
    return ET.fromstring(p.sh("cat", "/sdcard/window_dump.xml")[0].encode())


def draft_shown(root: ET.Element, pkg: str, to: str, body: str) -> bool:
    """App in front, recipient shown, compose field holds exactly the body."""
    nodes = list(root.iter("node"))
    front = bool(nodes) and nodes[0].get("package") == pkg
    # the app formats the number its own way (a US phone: "(555) 123-4567"): the last 7
    # digits, as PhoneNumberUtils.MIN_MATCH compares caller IDs
    tail = re.sub(r"\D", "", to)[-7:]
    recipient = any(
        n.get("package") == pkg and re.sub(r"\D", "", n.get("text") or "").endswith(tail)
        for n in nodes
    )
    compose = [n for n in nodes if n.get("resource-id") == f"{pkg}:id/compose_message_text"]
    return front and recipient and bool(compose) and compose[0].get("text") == body


def sms_draft(p: Phone, to: str, body: str) -> str:
    if p.sdk >= 31:  # get-role-holders exists from Android 12
        out = p.sh("cmd", "role", "get-role-holders", "android.app.role.SMS")[0]
    else:
        out = p.sh("settings", "get", "secure", "sms_default_application")[0]
    pkg = out.strip().splitlines()[0] if out.strip() else ""
    if not pkg or pkg == "null":
        raise NotMet("no default SMS app")
    if "mWakefulness=Awake" not in p.sh("dumpsys", "power")[0]:
        p.sh("input", "keyevent", "KEYCODE_WAKEUP")
    if re.search(r"showing=true|mShowingLockscreen=true", p.sh("dumpsys", "window", "policy")[0]):
        raise NotMet("locked")
    if draft_shown(dump_ui(p), pkg, to, body):
        return pkg
    p.sh("am", "start", "-W", "-a", "android.intent.action.SENDTO", "-d", f"smsto:{to}",
         "--es", "sms_body", body, "-p", pkg)  # fmt: skip
    if not draft_shown(dump_ui(p), pkg, to, body):
        raise NotMet("draft not shown")
    return pkg


def screen_fingerprint(p: Phone) -> str:
    # the focus lines moved to `dumpsys window displays` in API 29 (appium/appium#13420)
    windows = p.sh("dumpsys", "window", "displays" if p.sdk >= 29 else "windows")[0]
    front = re.search(r"mCurrentFocus=Window\{\S+ \S+ ([^/\s}]+/[^\s}]+)\}", windows)
    on = re.search(r"mWakefulness=(\w+)", p.sh("dumpsys", "power")[0])
    policy = p.sh("dumpsys", "window", "policy")[0]
    locked = re.search(r"^\s*showing=(\w+)|mShowingLockscreen=(\w+)", policy, re.MULTILINE)
    if not (front and on and locked):
        raise NotMet("unreadable")
    return f"front={front[1]} wakefulness={on[1]} locked={locked[1] or locked[2]}"


METHODS: dict[str, Callable[..., str]] = {
    "dnd.get": dnd_get,
    "dnd.set": dnd_set,
    "bluetooth.set": bluetooth_set,
    "volume.get": volume_get,
    "volume.set": volume_set,
    "sms.draft": sms_draft,
    "screen.fingerprint": screen_fingerprint,
}


def run(p: Phone, method: str, args: list[str]) -> tuple[bool, str]:
    """(target observed, value or what was seen instead) for one method call."""
    try:
        return True, METHODS[method](p, *args)
    except NotMet as exc:
        return False, str(exc)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in METHODS:
        print(f"usage: stock_adbutils.py {{{'|'.join(METHODS)}}} [ARGS...]", file=sys.stderr)
        return 2
    port = int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
    client = adbutils.AdbClient(host="127.0.0.1", port=port)
    phone = Phone(client.device(os.environ["SERIAL"]), sdk=int(os.environ.get("PHONE_SDK", "34")))
    ok, value = run(phone, argv[0], argv[1:])
    print(f"value={value}")
    print(f"round_trips={phone.trips}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
