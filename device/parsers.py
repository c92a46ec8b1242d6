"""Pure parsers from raw device output to values. No I/O; tested on captured real output.

A method's own parsers live in its action module (``device/methods/wifi.py`` reads ``Wi-Fi
is <state>``); this module keeps the ones that code outside a single method module uses too:
the device layer's probes, settings values, the screen readers, the daemon's device context
and permission recheck (``docs/methods-registry.md``, "Where a fact lives").
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

_GETPROP_LINE = re.compile(r"^\[(?P<key>[^\]]+)\]: \[(?P<value>.*)\]$", re.DOTALL)


def parse_getprop(text: str) -> dict[str, str]:
    """``getprop`` without arguments: ``[key]: [value]`` per line into a dict.

    A value may span several lines (some vendor props hold newlines); continuation lines are
    joined back with ``\\n``.
    """
    props: dict[str, str] = {}
    pending: list[str] = []
    for line in text.splitlines():
        if pending:
            pending.append(line)
            joined = "\n".join(pending)
            match = _GETPROP_LINE.match(joined)
            if match:
                props[match["key"]] = match["value"]
                pending = []
            continue
        match = _GETPROP_LINE.match(line)
        if match:
            props[match["key"]] = match["value"]
        elif line.startswith("["):
            pending = [line]
    return props


def phone_locale(text: str) -> str:
    """The phone's language from ``getprop`` output: ``persist.sys.locale`` (written when the owner
    picks a language; ``zh-Hans-CN`` style BCP 47 tags in real captures), else
    ``ro.product.locale`` (the build's default), as AOSP ``core/jni/AndroidRuntime.cpp``
    ``readLocale`` reads them; "" when neither is set."""
    props = parse_getprop(text)
    for key in ("persist.sys.locale", "ro.product.locale"):
        value = props.get(key, "").strip()
        if value:
            return value
    return ""


def phone_region(text: str) -> str:
    """The phone's country for numbers (ISO 3166 upper case, ``RU``) from ``getprop`` output:
    the SIM's (``gsm.sim.operator.iso-country``, TelephonyManager.getSimCountryIso; on a
    dual-SIM phone a comma list, one per slot, empty for an empty slot: the first set one),
    else the network's (``gsm.operator.iso-country``, getNetworkCountryIso), else the
    region of the locale (``phone_locale``: ``ru-RU`` -> ``RU``); "" when none says."""
    props = parse_getprop(text)
    for key in ("gsm.sim.operator.iso-country", "gsm.operator.iso-country"):
        for value in props.get(key, "").split(","):
            if re.fullmatch(r"[A-Za-z]{2}", value.strip()):
                return value.strip().upper()
    subtags = re.split(r"[-_]", phone_locale(text))
    regions = [t for t in subtags[1:] if re.fullmatch(r"[A-Za-z]{2}", t)]
    return regions[0].upper() if regions else ""


def parse_service_list(text: str) -> frozenset[str]:
    """``cmd -l`` (``Currently running services:`` then one indented name per line)."""
    names = set()
    for line in text.splitlines():
        if line.startswith((" ", "\t")) and line.strip():
            names.add(line.strip())
    return frozenset(names)


def help_lists_command(help_text: str, command: str) -> bool:
    """Whether a ``cmd SERVICE help`` text documents ``command`` as a subcommand."""
    return re.search(rf"^\s*{re.escape(command)}\b", help_text, re.MULTILINE) is not None


def parse_features(text: str) -> frozenset[str]:
    """The adb ``features`` reply: a comma-separated list."""
    return frozenset(f.strip() for f in text.split(",") if f.strip())


# ---- settings ----------------------------------------------------------------------------


def parse_settings_value(text: str) -> str | None:
    """``settings get``: the value on one line; the word ``null`` means unset.

    SettingsService.java (packages/SettingsProvider) prints ``String.valueOf(value)``, so a
    missing key reads back as the four letters ``null``.
    """
    value = text.rstrip("\r\n")
    return None if value == "null" else value


def parse_settings_int(text: str) -> int | None:
    """``settings get`` of an integer setting (``zen_mode``, ``bluetooth_on``); None if unset
    or not a number."""
    value = parse_settings_value(text)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def parse_colon_list(text: str) -> list[str]:
    """A secure-settings list (``enabled_notification_listeners``,
    ``enabled_notification_policy_access_packages``): items joined by ``:``."""
    value = parse_settings_value(text) or ""
    return [item for item in value.strip().split(":") if item]


# ---- services ----------------------------------------------------------------------------

# The service manager's reply when SystemServer never registered the service (no hardware).
_CANT_FIND = re.compile(r"Can't find service: ?(\S+)")


def service_missing(text: str) -> bool:
    """Whether ``dumpsys``/``cmd`` answered that the service does not exist on this phone."""
    return _CANT_FIND.search(text) is not None


# ---- volume ------------------------------------------------------------------------------


@dataclass(frozen=True)
class VolumeReading:
    """One stream's index (for the active output device) and its range."""

    index: int
    min_index: int
    max_index: int


_STREAM_HEAD = re.compile(r"^- (STREAM_\w+):\s*$")
_STREAM_FIELD = re.compile(r"^\s+(Min|Max|streamVolume):\s*(-?\d+)\s*$")
_STREAM_CURRENT = re.compile(r"^\s+Current:\s*(.*)$")
_CURRENT_ENTRY = re.compile(r"[0-9a-fA-F]+ \(([\w-]+)\): (-?\d+)")
_STREAM_DEVICES = re.compile(r"^\s+Devices:\s*(.+?)\s*$")


def parse_audio_streams(text: str) -> dict[str, VolumeReading]:
    """``dumpsys audio`` ``Stream volumes`` section: per ``STREAM_X`` its ``streamVolume``
    (index on the active device) and ``Min``/``Max`` (AudioService VolumeStreamState.dump;
    layouts of API 28 to 35 in tests/fixtures/android/dumpsys-*-audio-*.txt).

    Layouts without ``streamVolume:`` (an Android TV capture, python-androidtv#148) give the
    index per device in ``Current: HEX (name): I, ...``; the stream's device is the one
    ``Devices:`` names. With no ``streamVolume`` and more than one device named, the stream's
    index is ambiguous and the stream is left out.
    """
    fields: dict[str, dict[str, int]] = {}
    current_map: dict[str, dict[str, int]] = {}
    devices: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        head = _STREAM_HEAD.match(line)
        if head:
            current = head[1]
            fields[current] = {}
            continue
        if current is None:
            continue
        if field_match := _STREAM_FIELD.match(line):
            fields[current][field_match[1]] = int(field_match[2])
        elif per_device := _STREAM_CURRENT.match(line):
            current_map[current] = {m[1]: int(m[2]) for m in _CURRENT_ENTRY.finditer(per_device[1])}
        elif named := _STREAM_DEVICES.match(line):
            devices[current] = [d.strip() for d in named[1].split(",") if d.strip()]
    for name, f in fields.items():
        routed = devices.get(name, [])
        if "streamVolume" not in f and len(routed) == 1 and routed[0] in current_map.get(name, {}):
            f["streamVolume"] = current_map[name][routed[0]]
    return {
        name: VolumeReading(f["streamVolume"], f["Min"], f["Max"])
        for name, f in fields.items()
        if {"streamVolume", "Min", "Max"} <= f.keys()
    }


# ---- roles, packages, permissions --------------------------------------------------------


_PACKAGE_NAME = re.compile(r"^[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+$")


def parse_role_holders(text: str) -> list[str]:
    """``cmd role get-role-holders ROLE``: holders joined by ``;`` on one line (RoleShellCommand);
    empty output means no holder. Anything that is not a package name (``Unknown command:
    get-role-holders`` on Android 10/11, an exception) is no holder, never a package."""
    holders = [p.strip() for p in text.strip().split(";") if p.strip()]
    return [h for h in holders if _PACKAGE_NAME.match(h)]


_PERM_LINE = re.compile(r"^\s+([\w.]+): granted=(true|false)")
_USER_HEAD = re.compile(r"^\s+User (\d+):")


def parse_package_permissions(text: str, user: int = 0) -> dict[str, dict[str, bool]]:
    """``dumpsys package PKG``: ``{"install": {perm: granted}, "runtime": {perm: granted}}``.

    Settings.java dumpPackageLPr prints ``install permissions:`` once, then a ``User N:``
    block per Android user (owner 0, a work profile or secondary user 10+), each with its own
    ``runtime permissions:``, each line ``PERM: granted=BOOL[, flags=[ ...]]``. Runtime
    grants are per user: only ``user``'s block is read, so a work profile's denial never
    overwrites the owner's grant (or the reverse). Only the first package block is read
    (``dumpsys package PKG`` prints one).
    """
    sections: dict[str, dict[str, bool]] = {"install": {}, "runtime": {}}
    section: str | None = None
    current_user: int | None = None
    packages_seen = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Package ["):
            packages_seen += 1
            if packages_seen > 1:
                break
        head = _USER_HEAD.match(line)
        if head:
            current_user, section = int(head[1]), None
            continue
        if stripped in ("install permissions:", "runtime permissions:"):
            section = stripped.split()[0]
            continue
        match = _PERM_LINE.match(line)
        if match and section is not None:
            if section == "install" or current_user in (None, user):
                sections[section][match[1]] = match[2] == "true"
        elif section is not None and not match:
            section = None
    return sections


def package_listed(text: str, package: str) -> bool:
    """Whether ``dumpsys package PKG`` shows a block for ``package`` (unknown: no block)."""
    return f"Package [{package}]" in text


# ---- screen, keyguard, foreground --------------------------------------------------------

_SHOWING_LOCKSCREEN = re.compile(r"mShowingLockscreen=(true|false)")
_KEYGUARD_SHOWING = re.compile(r"KeyguardServiceDelegate\s*\n\s+showing=(true|false)")
_DREAMING_LOCKSCREEN = re.compile(r"mDreamingLockscreen=(true|false)")


def parse_keyguard_showing(text: str) -> bool | None:
    """``dumpsys window policy``: is the keyguard showing?

    API 28 PhoneWindowManager.dump prints ``mShowingLockscreen=``; API 29+ prints the
    ``KeyguardServiceDelegate`` block with ``showing=``. ``mDreamingLockscreen=`` (all
    releases) is the fallback. None when none of them is present.
    """
    for pattern in (_KEYGUARD_SHOWING, _SHOWING_LOCKSCREEN, _DREAMING_LOCKSCREEN):
        match = pattern.search(text)
        if match:
            return match[1] == "true"
    return None


# AOSP PowerManagerService.dump prints ``mWakefulness=``; some Samsung builds print
# ``getWakefulnessLocked()=`` instead (flutter/flutter#97235 and PR #98146).
_WAKEFULNESS = re.compile(r"(?:mWakefulness|getWakefulnessLocked\(\))=(\w+)")


def parse_screen_on(text: str) -> bool | None:
    """``dumpsys power``: wakefulness ``Awake`` means the screen is on (PowerManagerService;
    ``Asleep``/``Dreaming``/``Dozing`` are off). None when no wakefulness line is present."""
    match = _WAKEFULNESS.search(text)
    return match[1] == "Awake" if match else None


# A window's toString: ``Window{HASH uUSER TITLE[ EXITING]}`` (WindowState.toString); an app
# window's title is ``package/activity``, others a name (``NotificationShade``, ``StatusBar``,
# ``PopupWindow:1a2b``) or a bare package. An activity: ``ActivityRecord{HASH uUSER
# package/.Cls tTASK}``, on API 28-29 wrapped in ``AppWindowToken{... token=Token{...}}``, and
# on some Android 13/14 builds ``ActivityRecord{HASH u0 package/.Cls} tTASK}`` (captured in
# openatx/uiautomator2#952).
_WINDOW = re.compile(r"^Window\{\S+ u(\d+) (.+?)(?: EXITING)?\}")
_APP_TITLE = re.compile(r"^([A-Za-z][\w.]*)/([^\s}]+)$")
_ACTIVITY_RECORD = re.compile(r"ActivityRecord\{\S+ u(\d+) ([A-Za-z][\w.]*)/([^\s}]+)")
_FOCUS_LINE = re.compile(r"^\s*(mCurrentFocus|mFocusedApp)=(.*?)\s*$", re.MULTILINE)
_DISPLAY_HEAD = re.compile(r"^\s*Display: mDisplayId=(\d+)", re.MULTILINE)
_TOP_FOCUSED_DISPLAY = re.compile(r"^\s*mTopFocusedDisplayId=(-?\d+)", re.MULTILINE)


@dataclass(frozen=True)
class Foreground:
    """What has focus on the phone's top focused display.

    ``package``/``activity`` name the app in front (None when no app has focus: screen off,
    nothing resumed, mid-transition); ``user`` is its Android user (0 for the owner, 10+ for
    a work profile or secondary user); ``window`` is the focused window's title when that
    window is not the app's own (``NotificationShade`` over a locked app, ``StatusBar``,
    a popup).
    """

    package: str | None
    activity: str | None
    user: int | None = None
    window: str | None = None
    display: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field by its name: the record is its own JSON form."""
        return asdict(self)


def _expand(package: str, activity: str) -> str:
    return package + activity if activity.startswith(".") else activity


def _display_blocks(text: str) -> list[tuple[int | None, str]]:
    """The text cut at each ``Display: mDisplayId=N`` head (DisplayContent.dump, API 29+);
    text before the first head (the API 28 windows section) is display None."""
    heads = list(_DISPLAY_HEAD.finditer(text))
    if not heads:
        return [(None, text)]
    blocks: list[tuple[int | None, str]] = [(None, text[: heads[0].start()])]
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        blocks.append((int(head[1]), text[head.start() : end]))
    return blocks


def _focus_in(block: str, display: int | None) -> Foreground | None:
    """The focus lines of one display block; None when it has none."""
    lines: dict[str, str] = {}
    for match in _FOCUS_LINE.finditer(block):
        lines.setdefault(match[1], match[2])
    if not lines:
        return None
    window_title, user = None, None
    current = _WINDOW.match(lines.get("mCurrentFocus", ""))
    if current is not None:
        user, window_title = int(current[1]), current[2]
        app = _APP_TITLE.match(window_title)
        if app is not None:
            return Foreground(app[1], _expand(app[1], app[2]), user, None, display)
    record = _ACTIVITY_RECORD.search(lines.get("mFocusedApp", ""))
    if record is not None:
        package = record[2]
        return Foreground(
            package, _expand(package, record[3]), int(record[1]), window_title, display
        )
    return Foreground(None, None, user, window_title, display)


def parse_foreground(text: str) -> Foreground | None:
    """``dumpsys window displays`` (API 29+) or ``dumpsys window windows`` (API 28): the app in
    front, or None when the text shows no focus line at all (cannot tell).

    From API 29 the focus lines are printed by DisplayContent.dump, once per display, under
    ``dumpsys window displays`` (RootWindowContainer.dumpDisplayContents); the windows section
    no longer has them (appium/appium#13420; appium-adb ``dumpWindows`` picks ``displays`` for
    API >= 29). Per display: ``mCurrentFocus=`` is the focused window; when it is no app's
    window (keyguard shade, status bar, popup) ``mFocusedApp=`` names the app behind it.
    With several displays (foldables, DeX, casting) the one named by
    ``mTopFocusedDisplayId=`` wins, else display 0, else the first display with a focus; a
    display may print ``mCurrentFocus=null`` (SonicCloudOrg/sonic-agent#359). A relative
    activity (``.Cls``) is expanded with the package.
    """
    found = {
        display: f for display, block in _display_blocks(text) if (f := _focus_in(block, display))
    }
    if not found:
        return None
    top = _TOP_FOCUSED_DISPLAY.search(text)
    if top is not None and int(top[1]) in found:
        return found[int(top[1])]
    candidates = [found[d] for d in (0, None) if d in found] + list(found.values())
    return next((f for f in candidates if f.package is not None), candidates[0])


# ---- input -----------------------------------------------------------------------------

# Xiaomi (MIUI/HyperOS) without Developer options > "USB debugging (Security settings)":
# InputManager refuses the shell's injection with a SecurityException naming INJECT_EVENTS
# (tests/fixtures/android/real/input-29-xiaomi-inject_denied.txt; STFService.apk#144,
# scrcpy#3824). API 28-29 print the uncaught stack; from API 30 ``input`` is a shell command
# and BasicShellCommandHandler prints ``Exception occurred while executing ...`` first.
_INJECT_DENIED = re.compile(r"^.*SecurityException: .*INJECT_EVENTS permission.*$", re.MULTILINE)


def input_refused(text: str) -> str | None:
    """The refusal line when ``input keyevent|tap`` was denied (it then did nothing)."""
    match = _INJECT_DENIED.search(text)
    return match[0].strip() if match else None


# ---- content query -----------------------------------------------------------------------


def parse_content_rows(text: str, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """``content query --projection a:b:c``: one dict per ``Row: N a=.., b=.., c=..``.

    Content.java prints values verbatim (a comma or newline inside a value is not escaped),
    so a row starts only at a line ``Row: N FIRST=`` with the next index N, columns are split
    at the known ``, NAME=`` separators in projection order and the last column takes the
    rest of the row, newlines included. ``No result found.``: no rows.
    """
    starts: list[tuple[int, int]] = []
    for index in range(len(text) + 1):
        head = re.compile(rf"^Row: {index} (?={re.escape(columns[0])}=)", re.MULTILINE)
        match = head.search(text, starts[-1][1] if starts else 0)
        if match is None:
            break
        starts.append((match.start(), match.end()))
    rows = []
    for i, (_, body_start) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        chunk = text[body_start:end]
        chunk = chunk[:-1] if chunk.endswith("\n") else chunk
        row = _split_row(chunk, columns)
        if row is not None:
            rows.append(row)
    return rows


def _split_row(chunk: str, columns: tuple[str, ...]) -> dict[str, str] | None:
    row: dict[str, str] = {}
    rest = chunk
    for i, name in enumerate(columns):
        prefix = f"{name}="
        if not rest.startswith(prefix):
            return None
        rest = rest[len(prefix) :]
        if i + 1 == len(columns):
            row[name] = rest
            break
        sep = rest.find(f", {columns[i + 1]}=")
        if sep < 0:
            return None
        row[name], rest = rest[:sep], rest[sep + 2 :]
    return row


_CONTENT_ERROR = re.compile(r"^(Error while accessing provider:.*|.*Exception: .*)$", re.MULTILINE)


def content_query_error(text: str) -> str | None:
    """The error a ``content query`` printed instead of rows, else None.

    Content.java catches every exception, prints ``Error while accessing provider:AUTHORITY``
    and the stack trace (stderr) and exits 0; a missing READ_SMS is a ``SecurityException``
    line. Read stdout and stderr together: empty rows and an error are different answers.
    """
    match = _CONTENT_ERROR.search(text)
    return match[1].strip() if match else None


# ---- am start ----------------------------------------------------------------------------


def am_start_failed(text: str) -> str | None:
    """``am start`` output: the ``Error: ...`` line when the start failed, else None
    (ActivityManagerShellCommand.runStartActivity exits 0 on errors before API 33)."""
    for line in text.splitlines():
        if line.startswith(("Error:", "Error type")):
            return line
    return None


_COMPONENT = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+)/(\S+)\s*$")


def parse_components(text: str) -> list[tuple[str, str]]:
    """``cmd package query-activities --components`` / ``resolve-activity --brief``: every
    ``PKG/CLS`` line as (package, full class name; ``.Cls`` is relative to the package);
    ``No activities found``: none (PackageManagerShellCommand.printResolveInfo)."""
    found = []
    for line in text.splitlines():
        match = _COMPONENT.match(line)
        if match:
            package, cls = match[1], match[2]
            found.append((package, package + cls if cls.startswith(".") else cls))
    return found
