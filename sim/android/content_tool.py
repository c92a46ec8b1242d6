"""The ``content`` tool for ``content://sms`` (``query``, ``insert``) and
``content://com.android.contacts`` (``query`` of ``phone_lookup/<number>`` and ``data/phones``).

Behaviour of AOSP ``cmds/content/src/com/android/commands/content/Content.java``:

* argument errors print ``[ERROR] <message>`` on stdout (after the usage text, which the
  simulator leaves out) and the tool still exits 0;
* provider errors print ``Error while accessing provider:<authority>`` and the stack trace on
  stderr, exit 0 as well (``main`` returns normally);
* ``--projection a:b`` splits on ``:``; a row prints as ``Row: N col=value, col=value`` with
  values verbatim: a comma or a newline inside a value is NOT escaped (a body with a newline
  continues on the next output line), SQL NULL prints ``NULL``, integers print in full
  (``getLong``);
* no rows: ``No result found.``; a successful insert prints nothing.

``--where`` supports the subset the simulator needs (documented, not SQLite): clauses
``column = value`` / ``column != value`` joined by ``AND``, where a value is an integer, a
single-quoted string (``''`` escapes a quote) or a double-quoted string. ``--sort`` takes
``column [ASC|DESC]``. Other authorities answer ``Could not find provider``.

Contacts, as ContactsProvider2 (packages/providers/ContactsProvider) answers:

* ``phone_lookup/<number>``: the segment is URI-decoded (``Uri.getLastPathSegment``), any
  ``--where`` is ignored ("Phone lookup cannot be combined with a selection"), rows sort by
  ``length(normalized_number) DESC`` unless ``--sort`` says otherwise, and a projection
  without ``number`` gets it appended (the provider needs it to filter ``*`` numbers);
* ``data/phones``: the ``--where`` subset above over its columns, no default order;
* ``?limit=N`` bounds the rows (``ContactsProvider2.getLimit``; not a non-negative integer:
  ignored); an unknown column is ``IllegalArgumentException: Invalid column X`` (strict
  projection maps, SQLiteQueryBuilder); an unknown path is LegacyApiSupport's
  ``IllegalArgumentException: URI: <uri>, calling user: android.uid.shell:2000, calling
  package:com.android.shell`` (``ContactsDatabaseHelper.exceptionMessage``; the format as
  quoted in jberkel/sms-backup-plus#175). Paths the real provider serves but the simulator
  does not (``contacts``, ``raw_contacts``, ``data``, ``data/phones/<id>``...) answer as
  unknown too, and ``insert`` is not simulated for contacts.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable

from phoned.sim.android.contacts import LOOKUP_COLUMNS, PHONE_COLUMNS, ContactsProvider
from phoned.sim.android.packages import PackageManager
from phoned.sim.android.sms import BOX_TYPES, COLUMNS, SmsProvider, Value
from phoned.sim.shell.registry import ToolIO, tool

# Providers a variant's build adds: authority -> (the package whose presence brings it,
# the query). Samsung's telephony provider serves ``im`` (``sim/variants/samsung.py``).
ExtraQuery = Callable[[ToolIO, str, str, dict[str, str]], str]
EXTRA_PROVIDERS: dict[str, tuple[str, ExtraQuery]] = {}

CONTACTS_AUTHORITY = "com.android.contacts"
# pm.getNameForUid of the shell's shared uid, and its package (PackageManagerService).
_SHELL_CALLER = "calling user: android.uid.shell:2000, calling package:com.android.shell"

_CLAUSE = re.compile(
    r"\s*(\w+)\s*(=|==|!=|<>)\s*('(?:[^']|'')*'|\"[^\"]*\"|-?\d+)\s*", re.IGNORECASE
)


class ArgumentError(Exception):
    """Content.Parser rejected the arguments (printed as ``[ERROR] message``)."""


class ProviderError(Exception):
    """The provider threw; ``str()`` is the Java exception's ``toString()``."""


def _literal(token: str) -> Value:
    if token[0] == "'":
        return token[1:-1].replace("''", "'")
    if token[0] == '"':
        return token[1:-1]
    return int(token)


def parse_where(
    where: str | None, columns: tuple[str, ...] = COLUMNS
) -> list[tuple[str, bool, Value]]:
    """``[(column, equal?, value)]``; raises ProviderError for syntax outside the subset or a
    column not in ``columns`` (the sms table's by default)."""
    if not where:
        return []
    clauses = []
    for part in re.split(r"\s+AND\s+", where, flags=re.IGNORECASE):
        m = _CLAUSE.fullmatch(part)
        if m is None or m.group(1) not in columns:
            raise ProviderError(
                "android.database.sqlite.SQLiteException: unsupported where clause in the "
                f"simulator: {where}"
            )
        clauses.append((m.group(1), m.group(2) in ("=", "=="), _literal(m.group(3))))
    return clauses


def _matches(row: dict[str, Value], clauses: list[tuple[str, bool, Value]]) -> bool:
    for column, equal, value in clauses:
        cell = row[column]
        same = cell == value or (cell is not None and str(cell) == str(value))
        if same != equal:
            return False
    return True


def _sorted(
    rows: list[dict[str, Value]],
    sort: str | None,
    columns: tuple[str, ...] = COLUMNS,
    default: str | None = "date DESC",
) -> list[dict[str, Value]]:
    if not (sort or default):
        return rows
    column, _, direction = (sort or default or "").strip().partition(" ")
    if column not in columns:
        raise ProviderError(f"android.database.sqlite.SQLiteException: no such column: {column}")
    desc = direction.strip().upper() == "DESC"

    def key(row: dict[str, Value]) -> tuple[int, int, str]:
        # NULLs sort first in SQLite's ascending order; integers before text.
        cell = row[column]
        if cell is None:
            return (0, 0, "")
        return (1, cell, "") if isinstance(cell, int) else (2, 0, cell)

    return sorted(rows, key=key, reverse=desc)


def _box_rows(sms: SmsProvider, path: str) -> list[dict[str, Value]]:
    """Rows selected by the URI path: ``""``, ``inbox``... or a message ``_id``."""
    if path in ("", "/"):
        return sms.messages()
    segment = path.strip("/")
    if segment in BOX_TYPES:
        return sms.messages(segment)
    if segment.isdigit():
        return [r for r in sms.messages() if r["_id"] == int(segment)]
    raise ProviderError(f"java.lang.IllegalArgumentException: Unknown URL content://sms{path}")


def format_row(index: int, row: dict[str, Value], projection: list[str]) -> str:
    """One ``Row: N ...`` line exactly as Content.QueryCommand builds it."""
    cells = ", ".join(f"{col}={'NULL' if row[col] is None else row[col]}" for col in projection)
    return f"Row: {index} {cells}"


def query(sms: SmsProvider, path: str, opts: dict[str, str]) -> str:
    """What ``content query`` prints on stdout for ``content://sms<path>``."""
    projection = (
        re.split(r"\s*:\s*", opts["--projection"]) if "--projection" in opts else list(COLUMNS)
    )
    for col in projection:
        if col not in COLUMNS:
            raise ProviderError(
                f"android.database.sqlite.SQLiteException: no such column: {col} "
                "(code 1 SQLITE_ERROR)"
            )
    clauses = parse_where(opts.get("--where"))
    rows = [r for r in _box_rows(sms, path) if _matches(r, clauses)]
    rows = _sorted(rows, opts.get("--sort"))
    if not rows:
        return "No result found.\n"
    return "".join(format_row(i, r, projection) + "\n" for i, r in enumerate(rows))


def _contacts_rows(
    contacts: ContactsProvider, path: str, opts: dict[str, str]
) -> tuple[list[dict[str, Value]], tuple[str, ...]]:
    """The rows a contacts path selects, filtered and sorted, and the columns it has."""
    route = path.partition("?")[0]
    segments = [s for s in route.split("/") if s]  # Uri.getPathSegments skips empty ones
    if len(segments) == 2 and segments[0] == "phone_lookup":
        number = urllib.parse.unquote(segments[1], errors="replace")
        rows = sorted(
            contacts.lookup_rows(number),
            key=lambda r: len(str(r["normalized_number"])) if r["normalized_number"] else -1,
            reverse=True,
        )
        return _sorted(rows, opts.get("--sort"), LOOKUP_COLUMNS, None), LOOKUP_COLUMNS
    if segments == ["data", "phones"]:
        clauses = parse_where(opts.get("--where"), PHONE_COLUMNS)
        rows = [r for r in contacts.phone_rows() if _matches(r, clauses)]
        return _sorted(rows, opts.get("--sort"), PHONE_COLUMNS, None), PHONE_COLUMNS
    raise ProviderError(
        f"java.lang.IllegalArgumentException: URI: content://{CONTACTS_AUTHORITY}{path}, "
        f"{_SHELL_CALLER}"
    )


def query_contacts(contacts: ContactsProvider, path: str, opts: dict[str, str]) -> str:
    """What ``content query`` prints on stdout for ``content://com.android.contacts<path>``."""
    rows, columns = _contacts_rows(contacts, path, opts)
    projection = (
        re.split(r"\s*:\s*", opts["--projection"]) if "--projection" in opts else list(columns)
    )
    for col in projection:
        if col not in columns:
            raise ProviderError(f"java.lang.IllegalArgumentException: Invalid column {col}")
    if columns == LOOKUP_COLUMNS and "number" not in projection:
        projection.append("number")  # the provider adds it (removeNonStarMatchesFromCursor)
    limit = urllib.parse.parse_qs(path.partition("?")[2]).get("limit", [""])[0]
    if limit.isdecimal() and limit.isascii():
        rows = rows[: int(limit)]
    if not rows:
        return "No result found.\n"
    return "".join(format_row(i, r, projection) + "\n" for i, r in enumerate(rows))


def _bind(values: dict[str, Value], binding: str) -> None:
    """``--bind column:type:value`` (types s, i, l, b, f, d as Content.parseBindValue)."""
    parts = binding.split(":", 2)
    if len(parts) < 3 or not binding:
        raise ArgumentError(f"Binding not well formed: {binding}")
    column, kind, raw = parts
    converters: dict[str, Callable[[str], Value]] = {
        "s": str,
        "i": int,
        "l": int,
        "b": lambda v: int(v.lower() == "true"),
        "f": str,
        "d": str,
    }
    convert = converters.get(kind if kind == "s" else kind.lower())
    if convert is None:
        raise ArgumentError(f"Unsupported type: {kind}")
    try:
        values[column] = convert(raw)
    except ValueError as exc:  # Long.parseLong: NumberFormatException (an IAE) -> [ERROR]
        raise ArgumentError(f'For input string: "{raw}"') from exc


def insert(sms: SmsProvider, path: str, values: dict[str, Value]) -> None:
    """``content insert``: the URI box decides the type unless ``type`` is bound."""
    box = path.strip("/")
    if box and box not in BOX_TYPES:
        raise ProviderError(f"java.lang.IllegalArgumentException: Unknown URL content://sms{path}")
    if box:
        values.setdefault("type", BOX_TYPES[box])
    sms.insert_values(values)


def parse_args(args: list[str]) -> tuple[dict[str, str], dict[str, Value]]:
    """Options of query/insert; raises ArgumentError with Content.Parser's messages."""
    opts: dict[str, str] = {}
    values: dict[str, Value] = {}
    known = ("--uri", "--user", "--where", "--sort", "--projection")
    while args:
        arg = args.pop(0)
        if arg == "--bind":
            _bind(values, args.pop(0) if args else "")
            continue
        if arg not in known:
            raise ArgumentError(f"Unsupported argument: {arg}")
        value = args.pop(0) if args else ""
        if not value or value.startswith("--"):
            raise ArgumentError(f"No value for argument: {arg}")
        opts[arg] = value
    if "--uri" not in opts:
        raise ArgumentError("Content provider URI not specified. Did you specify --uri argument?")
    return opts, values


def _run(io: ToolIO, operation: str, args: list[str]) -> None:
    opts, values = parse_args(args)
    if operation == "insert" and not values:
        raise ArgumentError("Bindings not specified. Did you specify --bind argument(s)?")
    m = re.fullmatch(r"content://([^/]*)(.*)", opts["--uri"], re.DOTALL)
    authority, path = (m.group(1), m.group(2)) if m else ("", "")
    try:
        extra = EXTRA_PROVIDERS.get(authority)
        if extra is not None and not io.phone.service(PackageManager).is_installed(extra[0]):
            extra = None  # e.g. a Pixel's telephony provider has no im tables
        if authority not in ("sms", CONTACTS_AUTHORITY) and extra is None:
            raise ProviderError(
                f"java.lang.IllegalStateException: Could not find provider: {authority}"
            )
        with io.phone.lock:
            if authority == CONTACTS_AUTHORITY:
                io.out(_contacts_operation(io, operation, path, opts))
            elif extra is not None:
                io.out(extra[1](io, operation, path, opts))
            elif operation == "query":
                io.out(query(io.phone.service(SmsProvider), path, opts))
            else:
                insert(io.phone.service(SmsProvider), path, values)
    except ProviderError as exc:
        io.err(f"Error while accessing provider:{authority}\n{exc}\n")


def _contacts_operation(io: ToolIO, operation: str, path: str, opts: dict[str, str]) -> str:
    if operation != "query":
        raise ProviderError(
            "java.lang.UnsupportedOperationException: the simulator's contacts provider "
            f"answers query only, not {operation}"
        )
    return query_contacts(io.phone.service(ContactsProvider), path, opts)


@tool("content")
def content(io: ToolIO, argv: list[str]) -> int:
    """``content query|insert ...``; every outcome exits 0, as the real tool does."""
    operation = argv[1] if len(argv) > 1 else ""
    try:
        if operation not in ("query", "insert"):
            raise ArgumentError(f"Unsupported operation: {operation}")
        _run(io, operation, list(argv[2:]))
    except ArgumentError as exc:
        io.out(f"[ERROR] {exc}\n")
    return 0
