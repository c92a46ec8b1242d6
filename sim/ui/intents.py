"""Intents as ``am start`` builds and prints them.

Parsing follows AOSP ``Intent.parseCommandArgs`` (frameworks/base core/java/android/content/
Intent.java): ``-a -d -t -c -n -f -p -e/--es --ez --ei --el --ef``, a trailing argument that
is a URI (has ``:``), a component (has ``/``) or a package. Printing follows
``Intent.toShortString`` (``act= cat=[..] dat= typ= flg=0x.. pkg= cmp= (has extras)``) with
the data URI passed through ``Uri.toSafeString`` (frameworks/base core/java/android/net/
Uri.java): for tel/sip/sms/smsto/mailto/nfc every character but ``-@.`` becomes ``x``;
http(s)/ftp/rtsp keep only ``//host/...``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

FLAG_ACTIVITY_NEW_TASK = 0x10000000
_REDACTED_SCHEMES = ("tel", "sip", "sms", "smsto", "mailto", "nfc")
_HOST_ONLY_SCHEMES = ("http", "https", "ftp", "rtsp")
_NO_VALUE_OPTIONS = {
    "-W",
    "-S",
    "-D",
    "-N",
    "--activity-clear-top",
    "--activity-new-task",
    "--activity-single-top",
    "--activity-clear-task",
    "--activity-no-history",
    "--grant-read-uri-permission",
    "--receiver-foreground",
    "--track-allocation",
}
_ONE_VALUE_OPTIONS = {
    "--user",
    "--display",
    "--windowingMode",
    "--activityType",
    "--task",
    "--start-profiler",
    "--sampling",
    "-P",
    "--attach-agent",
    "-R",
}


class IntentError(ValueError):
    """``am`` rejected its arguments (the message is what ``am`` says)."""


@dataclass
class Intent:
    """An Android Intent with the fields ``am start`` can set."""

    action: str | None = None
    data: str | None = None
    mime_type: str | None = None
    categories: list[str] = field(default_factory=list)
    package: str | None = None
    component: tuple[str, str] | None = None  # (package, full class name)
    flags: int = 0
    extras: dict[str, str | bool | int | float] = field(default_factory=dict)
    wait: bool = False  # -W
    stop_first: bool = False  # -S

    def to_short_string(self) -> str:
        parts: list[str] = []
        if self.action is not None:
            parts.append(f"act={self.action}")
        if self.categories:
            parts.append("cat=[" + ",".join(self.categories) + "]")
        if self.data is not None:
            parts.append(f"dat={safe_uri(self.data)}")
        if self.mime_type is not None:
            parts.append(f"typ={self.mime_type}")
        if self.flags:
            parts.append(f"flg=0x{self.flags:x}")
        if self.package is not None:
            parts.append(f"pkg={self.package}")
        if self.component is not None:
            parts.append(f"cmp={flatten_short(*self.component)}")
        if self.extras:
            parts.append("(has extras)")
        return " ".join(parts)

    def __str__(self) -> str:
        return "Intent { " + self.to_short_string() + " }"


def flatten_short(package: str, cls: str) -> str:
    """``ComponentName.flattenToShortString``."""
    if cls.startswith(package + "."):
        return f"{package}/{cls[len(package) :]}"
    return f"{package}/{cls}"


def unflatten(text: str) -> tuple[str, str] | None:
    """``ComponentName.unflattenFromString``: ``pkg/.Cls`` expands to ``pkg/pkg.Cls``."""
    sep = text.find("/")
    if sep < 0 or sep + 1 >= len(text):
        return None
    pkg, cls = text[:sep], text[sep + 1 :]
    return pkg, pkg + cls if cls.startswith(".") else cls


def safe_uri(uri: str) -> str:
    """``Uri.toSafeString``: phone numbers and addresses masked for logs."""
    scheme, sep, ssp = uri.partition(":")
    if not sep:
        return uri
    lowered = scheme.lower()
    if lowered in _REDACTED_SCHEMES:
        return scheme + ":" + "".join(c if c in "-@." else "x" for c in ssp)
    if lowered in _HOST_ONLY_SCHEMES:
        host = ssp[2:].split("/", 1)[0].split("?", 1)[0] if ssp.startswith("//") else ""
        return f"{scheme}://{host}/..."
    return uri


def _parse_bool(value: str) -> bool:
    """``--ez`` values as ``Intent.parseCommandArgs`` accepts them."""
    low = value.lower()
    if low in ("true", "t"):
        return True
    if low in ("false", "f"):
        return False
    try:
        return int(low, 0) != 0
    except ValueError as exc:
        raise IntentError(f"Invalid boolean value: {value}") from exc


def _put(intent: Intent, opt: str, key: str, value: str) -> None:
    converters: dict[str, Callable[[str], bool | int | float]] = {
        "--ez": _parse_bool,
        "--ei": int,
        "--el": int,
        "--ef": float,
    }
    conv = converters.get(opt)
    try:
        intent.extras[key] = conv(value) if conv else value
    except ValueError as exc:
        raise IntentError(f'For input string: "{value}"') from exc


def _apply_option(intent: Intent, opt: str, take: list[str]) -> None:
    """Apply one option whose value(s) are in ``take``."""
    setters = {
        "-a": lambda v: setattr(intent, "action", v),
        "-d": lambda v: setattr(intent, "data", v),
        "-t": lambda v: setattr(intent, "mime_type", v),
        "-c": lambda v: intent.categories.append(v),
        "-p": lambda v: setattr(intent, "package", v),
        "-f": lambda v: setattr(intent, "flags", intent.flags | int(v, 0)),
    }
    if opt in setters:
        setters[opt](take[0])
    elif opt == "-n":
        comp = unflatten(take[0])
        if comp is None:
            raise IntentError(f"Bad component name: {take[0]}")
        intent.component = comp
    else:
        _put(intent, opt, take[0], take[1])


_TWO_VALUE_OPTIONS = {"-e", "--es", "--ez", "--ei", "--el", "--ef"}
_SINGLE = {"-a", "-d", "-t", "-c", "-p", "-f", "-n"}


def parse_start_args(args: list[str]) -> Intent:
    """Parse ``am start`` arguments (after ``start``) into an Intent."""
    intent = Intent()
    i = 0
    while i < len(args) and args[i].startswith("-"):
        opt = args[i]
        arity = (
            2
            if opt in _TWO_VALUE_OPTIONS
            else 1
            if opt in _SINGLE | _ONE_VALUE_OPTIONS
            else 0
            if opt in _NO_VALUE_OPTIONS
            else -1
        )
        if arity < 0:
            raise IntentError(f"Unknown option: {opt}")
        take = args[i + 1 : i + 1 + arity]
        if len(take) < arity:
            raise IntentError(f'Argument expected after "{opt}"')
        intent.wait |= opt == "-W"
        intent.stop_first |= opt == "-S"
        if opt in _SINGLE or opt in _TWO_VALUE_OPTIONS:
            _apply_option(intent, opt, take)
        i += 1 + arity
    if i < len(args):
        _apply_trailing(intent, args[i])
    elif not _has_info(intent):
        raise IntentError("No intent supplied")
    return intent


def _has_info(intent: Intent) -> bool:
    return any(
        (
            intent.action,
            intent.data,
            intent.mime_type,
            intent.categories,
            intent.package,
            intent.component,
            intent.extras,
            intent.flags,
        )
    )


def _apply_trailing(intent: Intent, arg: str) -> None:
    """The trailing argument: a URI, a component name or a package name."""
    if ":" in arg:
        intent.data = intent.data or arg
        return
    intent.action = intent.action or "android.intent.action.MAIN"
    if not intent.categories:
        intent.categories.append("android.intent.category.LAUNCHER")
    comp = unflatten(arg) if "/" in arg else None
    if comp is not None:
        intent.component = comp
    else:
        intent.package = arg
