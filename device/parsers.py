"""Pure parsers from raw device output to values. No I/O; tested on captured real output."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


# ---- cmd output that exits 0 on failure --------------------------------------------------

# NotificationShellCmd catches every exception and prints this prefix with exit 0.
NOTIFICATION_ERROR_PREFIX = "Error occurred. Check logcat for details."


def notification_cmd_failed(stdout: str) -> bool:
    """Whether a ``cmd notification`` reply reports a failure despite its exit code 0."""
    return NOTIFICATION_ERROR_PREFIX in stdout or stdout.startswith("Unknown command")


# ---- Bluetooth ---------------------------------------------------------------------------

_BT_STATE = re.compile(r"^\s*state:\s*(\S+)\s*$", re.MULTILINE)
_BT_ENABLED = re.compile(r"^\s*enabled:\s*(true|false)\s*$", re.MULTILINE)
# The service manager's reply when SystemServer never registered the service (no hardware).
_CANT_FIND = re.compile(r"Can't find service: ?(\S+)")


def parse_bluetooth_state(text: str) -> str | None:
    """``dumpsys bluetooth_manager``: the adapter state (``OFF``, ``TURNING_ON``, ``ON``,
    ``TURNING_OFF``, ``BLE_ON``...), from BluetoothManagerService.dump's ``  state: X`` line
    (``BluetoothAdapter.nameForState`` without ``STATE_``). None when absent."""
    match = _BT_STATE.search(text)
    return match[1] if match else None


def parse_bluetooth_enabled(text: str) -> bool | None:
    """``dumpsys bluetooth_manager``: the ``  enabled: true|false`` line."""
    match = _BT_ENABLED.search(text)
    return match[1] == "true" if match else None


def service_missing(text: str) -> bool:
    """Whether ``dumpsys``/``cmd`` answered that the service does not exist on this phone."""
    return _CANT_FIND.search(text) is not None


# ---- volume ------------------------------------------------------------------------------

_VOLUME_IS = re.compile(r"volume is (-?\d+) in range \[(-?\d+)\.\.(-?\d+)\]")


@dataclass(frozen=True)
class VolumeReading:
    """One stream's index (for the active output device) and its range."""

    index: int
    min_index: int
    max_index: int


def parse_volume_get(text: str) -> VolumeReading | None:
    """``cmd media_session volume --stream N --get`` (``[V]``) or ``media volume`` (``[v]``):
    the line ``volume is I in range [MIN..MAX]`` (VolumeCtrl.java). None when missing."""
    match = _VOLUME_IS.search(text)
    if match is None:
        return None
    return VolumeReading(int(match[1]), int(match[2]), int(match[3]))


_STREAM_HEAD = re.compile(r"^- (STREAM_\w+):\s*$")
_STREAM_FIELD = re.compile(r"^\s+(Min|Max|streamVolume):\s*(-?\d+)\s*$")
_STREAM_DEVICES = re.compile(r"^\s+Devices:\s*(\S+)")


def parse_audio_streams(text: str) -> dict[str, VolumeReading]:
    """``dumpsys audio`` ``Stream volumes`` section: per ``STREAM_X`` its ``streamVolume``
    (index on the active device) and ``Min``/``Max`` (AudioService VolumeStreamState.dump;
    layouts of API 28 to 35 in tests/fixtures/android/dumpsys-*-audio-*.txt)."""
    fields: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in text.splitlines():
        head = _STREAM_HEAD.match(line)
        if head:
            current = head[1]
            fields[current] = {}
            continue
        field_match = _STREAM_FIELD.match(line) if current else None
        if field_match and current is not None:
            fields[current][field_match[1]] = int(field_match[2])
    return {
        name: VolumeReading(f["streamVolume"], f["Min"], f["Max"])
        for name, f in fields.items()
        if {"streamVolume", "Min", "Max"} <= f.keys()
    }


# ---- roles, packages, permissions --------------------------------------------------------


def parse_role_holders(text: str) -> list[str]:
    """``cmd role get-role-holders ROLE``: holders joined by ``;`` on one line (RoleShellCommand);
    empty output means no holder."""
    return [p.strip() for p in text.strip().split(";") if p.strip()]


_PERM_LINE = re.compile(r"^\s+([\w.]+): granted=(true|false)")


def parse_package_permissions(text: str) -> dict[str, dict[str, bool]]:
    """``dumpsys package PKG``: ``{"install": {perm: granted}, "runtime": {perm: granted}}``.

    Settings.java dumpPackageLPr prints ``install permissions:`` then, per user, ``runtime
    permissions:``, each line ``PERM: granted=BOOL[, flags=[ ...]]``. Only the first package
    block is read (``dumpsys package PKG`` prints one).
    """
    sections: dict[str, dict[str, bool]] = {"install": {}, "runtime": {}}
    section: str | None = None
    packages_seen = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Package ["):
            packages_seen += 1
            if packages_seen > 1:
                break
        if stripped in ("install permissions:", "runtime permissions:"):
            section = stripped.split()[0]
            continue
        match = _PERM_LINE.match(line)
        if match and section is not None:
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


_WAKEFULNESS = re.compile(r"mWakefulness=(\w+)")


def parse_screen_on(text: str) -> bool | None:
    """``dumpsys power``: ``mWakefulness=Awake`` means the screen is on (PowerManagerService)."""
    match = _WAKEFULNESS.search(text)
    return match[1] == "Awake" if match else None


_CURRENT_FOCUS = re.compile(r"mCurrentFocus=Window\{\S+ \S+ ([^/\s}]+)/([^\s}]+)\}")
_FOCUSED_APP = re.compile(r"mFocusedApp=.*?ActivityRecord\{\S+ \S+ ([^/\s]+)/(\S+)")


def parse_foreground(text: str) -> tuple[str, str] | None:
    """``dumpsys window windows``: (package, activity) in front.

    From ``mCurrentFocus=Window{HASH u0 PKG/ACTIVITY}``, else ``mFocusedApp=...ActivityRecord{
    HASH u0 PKG/.Activity tN}`` (WindowState.toString, DisplayContent.dump). A relative
    activity (``.Cls``) is expanded with the package.
    """
    for pattern in (_CURRENT_FOCUS, _FOCUSED_APP):
        match = pattern.search(text)
        if match:
            package, activity = match[1], match[2]
            return package, package + activity if activity.startswith(".") else activity
    return None


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


# ---- am start ----------------------------------------------------------------------------


def am_start_failed(text: str) -> str | None:
    """``am start`` output: the ``Error: ...`` line when the start failed, else None
    (ActivityManagerShellCommand.runStartActivity exits 0 on errors before API 33)."""
    for line in text.splitlines():
        if line.startswith(("Error:", "Error type")):
            return line
    return None
