"""``notifications.list``: the notifications the phone shows now, read from its notification
service.

Read-only. One command, ``dumpsys notification --noredact`` (the shell uid holds DUMP;
``NotificationManagerService.DumpFilter.parseFromArguments`` takes ``--noredact`` / ``--reveal``
on every release phoned serves, API 28-35). Without it a release redacts the extras: up to
Android 11 the value is left out (``android.title=String``), from Android 12 its length is
printed (``android.title=String [length=11]``); a redacted record still yields its package,
key and time, with ``title``/``content_text`` None and ``redacted: true``.

The layout (``NotificationManagerService.dumpImpl``, ``NotificationRecord.dump``; AOSP
``platform_frameworks_base`` at the commits named in ``docs/android-variants.md`` C45):

* ``Current Notification Manager state:`` then, when anything is posted, ``  Notification
  List:`` and one record per notification at four spaces, the list closed by a line ``  ``.
  Nothing posted: no list at all.
* A record opens with ``NotificationRecord(0x%08x: pkg=P user=UserHandle{U} id=I tag=T
  importance=N key=K...: Notification(...))`` (Android 9 glues ``appImportanceLocked=`` to the
  key: ``key=Kappimportancelocked=false``, so the key is taken from the record's own
  ``key=`` line two spaces further in).
* Android 9-11 print the notification's fields flat at six spaces (``extras={`` there, its
  entries at ten); Android 12+ nest them under ``notification=`` at twelve spaces (entries
  at sixteen), followed by ``publicNotification=`` (the lock-screen version; not read).
* An extra prints as ``KEY=Type (value)``: ``String``, ``SpannableString``,
  ``SpannedString``... (``val.getClass().getSimpleName()`` then ``String.valueOf(val)``), or
  ``KEY=null``. A value holding a newline continues on the next lines as it is.
* The post time: ``mUpdateTimeMs=`` (``sbn.getPostTime()`` of the latest post; an update keeps
  ``mCreationTimeMs`` of the first) on every release; ``when=`` (the app's own timestamp) is
  the fallback.

Privacy: titles and texts are message content. The dump's stdout never enters the evidence
(``Recorder.read_private``); the observation holds counts only; the notifications, in
clear, are the method's value for the task's owner (stored under ``title`` and
``content_text``, which a bound viewer gets redacted, ``daemon/server/deps.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import PACKAGE, Params
from phoned.device.actions.reads import listed
from phoned.device.commands import Argv
from pydantic import Field, field_validator

# ---- params ------------------------------------------------------------------------------

MAX_LIMIT = 200  # notifications in one answer; a phone rarely shows more than a few dozen


class NotificationsList(Params):
    """Which notifications: every app's, or one package's; the newest ``limit`` of them."""

    package: str | None = Field(
        default=None,
        max_length=255,
        description="only this app's notifications (an Android package name)",
        examples=["org.telegram.messenger"],
    )
    limit: int = Field(
        default=50, ge=1, le=MAX_LIMIT, description="at most this many, newest first",
        examples=[20],
    )  # fmt: skip

    @field_validator("package")
    @classmethod
    def _package(cls, value: str | None) -> str | None:
        if value is not None and not PACKAGE.fullmatch(value):
            raise ValueError("package must be an Android package name such as com.example.app")
        return value


# ---- commands ----------------------------------------------------------------------------

DUMPSYS_NOTIFICATION: Argv = ("dumpsys", "notification", "--noredact")

# ---- parsers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PostedRecord:
    """One notification of the dump: what the phone shows for it."""

    package: str
    key: str
    title: str | None  # android.title; None when unset, null or redacted
    text: str | None  # android.text
    posted_ms: int | None  # mUpdateTimeMs, else when; None when neither was printed
    redacted: bool  # the dump held only the extras' types or lengths (no --noredact)


_STATE = "Current Notification Manager state"
_LIST = re.compile(r"^  Notification List:$", re.M)
_HEADER = re.compile(r"^(?P<indent> *)NotificationRecord\(0x[0-9a-fA-F]+: pkg=(?P<pkg>\S+) ", re.M)
_KEY_LINE = re.compile(r"^ +key=(?P<key>\S.*)$", re.M)
_HEADER_KEY = re.compile(r" key=(?P<key>.+?)(?:appImportanceLocked=\w+)?: Notification\(")
_UPDATE = re.compile(r"^ +mUpdateTimeMs=(\d+)", re.M)
_WHEN = re.compile(r"^ +when=(\d+)", re.M)
_EXTRAS = re.compile(r"^(?P<indent> *)extras=\{$", re.M)
_VALUE = re.compile(r"(?P<type>[A-Za-z_$][\w$]*) \((?P<value>.*)\)", re.S)
_REDACTED = re.compile(r"[A-Za-z_$][\w$]*( \[length=\d+\])?")


def _list_section(text: str) -> str:
    """The text of the ``Notification List:`` section: up to its closing ``  `` line."""
    found = _LIST.search(text)
    if found is None:
        return ""
    kept: list[str] = []
    for line in text[found.end() :].split("\n")[1:]:
        if line == "  ":
            break
        kept.append(line)
    return "\n".join(kept)


def _extras(record: str) -> dict[str, str]:
    """The first ``extras={`` block of a record (the notification's, not its public
    version's): each key with its raw value, continuation lines joined with newlines."""
    found = _EXTRAS.search(record)
    if found is None:
        return {}
    indent = found["indent"]
    entry = re.compile(rf"^{indent}    (?P<key>[^\s=]+)=(?P<value>.*)$")
    out: dict[str, str] = {}
    current: str | None = None
    for line in record[found.end() :].split("\n")[1:]:
        if line == f"{indent}}}":
            break
        matched = entry.match(line)
        if matched is not None:
            current = matched["key"]
            out[current] = matched["value"]
        elif current is not None:  # a value with a newline in it, or an array's items
            out[current] += "\n" + line
    return out


def _char_sequence(raw: str | None) -> tuple[str | None, bool]:
    """``String (v)`` -> (v, False); ``null`` or absent -> (None, False); a redacted form
    (``String`` alone, ``String [length=N]``) -> (None, True)."""
    if raw is None or raw == "null":
        return None, False
    found = _VALUE.fullmatch(raw)
    if found is not None:
        return found["value"], False
    return None, _REDACTED.fullmatch(raw) is not None


def parse_notifications(text: str) -> list[PostedRecord] | None:
    """``dumpsys notification [--noredact]``: every posted notification, in the list's order;
    [] when the service answered and nothing is posted; None when the text is not the
    service's dump (``Can't find service: notification``, a permission error)."""
    if _STATE not in text:
        return None
    section = _list_section(text.replace("\r\n", "\n"))  # an old adb's pty adds \r
    headers = list(_HEADER.finditer(section))
    records: list[PostedRecord] = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(section)
        body = section[header.start() : end]
        first_line, _, rest = body.partition("\n")
        key_line = _KEY_LINE.search(rest)
        header_key = _HEADER_KEY.search(first_line)
        key = key_line["key"] if key_line else header_key["key"] if header_key else ""
        extras = _extras(rest)
        title, title_hidden = _char_sequence(extras.get("android.title"))
        content, text_hidden = _char_sequence(extras.get("android.text"))
        time = _UPDATE.search(rest) or _WHEN.search(rest)
        records.append(
            PostedRecord(
                header["pkg"], key.strip(), title, content,
                int(time.group(1)) if time else None, title_hidden or text_hidden,
            )
        )  # fmt: skip
    return records


# ---- actions -----------------------------------------------------------------------------


def _iso(ms: int | None) -> str | None:
    if ms is None or ms <= 0:
        return None
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds")


def _entry(record: PostedRecord) -> dict[str, Any]:
    return {
        "package": record.package,
        "title": record.title,
        "content_text": record.text,
        "posted_at": _iso(record.posted_ms),
        "posted_ms": record.posted_ms,
        "key": record.key,
        "redacted": record.redacted,
    }


def list_notifications(ctx: ActionContext, params: NotificationsList) -> Outcome:
    """Read the notification service once; met with ``{notifications, total, shown}``
    (newest first, ``params.package``'s only when given, at most ``params.limit``);
    ``not_met`` when the dump could not be read."""
    argv = DUMPSYS_NOTIFICATION
    result = ctx.recorder.read_private(argv)
    records = parse_notifications(result.stdout)
    if records is None:
        ctx.recorder.observe("notifications", {"readable": False}, "read", argv)
        first = (result.stdout + result.stderr).strip().splitlines()[:1]
        return outcome(
            ctx,
            Status.NOT_MET,
            {"expected": {"notification_service": "readable"}, "observed": None, "met": False},
            f"the notification service could not be read: {first[0][:200] if first else 'no output'}",
        )
    chosen = [r for r in records if params.package is None or r.package == params.package]
    chosen.sort(key=lambda r: r.posted_ms or 0, reverse=True)
    shown = chosen[: params.limit]
    counts = {
        "posted": len(records),
        "matching": len(chosen),
        "shown": len(shown),
        "redacted": sum(r.redacted for r in shown),
    }
    ctx.recorder.observe("notifications", counts, "read", argv)  # counts only: no content
    value = {"notifications": [_entry(r) for r in shown], "total": len(chosen)}
    return listed(ctx, counts, f"{len(shown)} notification(s)", value)


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow.read_only(  # docs/actions.md
    reads=(
        "`dumpsys notification --noredact` (package, key, `android.title`/`android.text` "
        "extras, `mUpdateTimeMs`; filtered and limited on the daemon)"
    )
)

DECLARED = (
    Method(
        "notifications.list", NotificationsList, list_notifications, fixed("notifications.listed"),
        summary="List the notifications the phone shows now, newest first: app package, "
        "title, text, post time and key; optionally one app's only.",
        reads="the notification service's posted notifications (dumpsys notification)",
        emulator_params={"limit": 5},
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
