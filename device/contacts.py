"""The phone's contacts, read through ``content query``: who a number belongs to, and which
numbers a name stands for. Argv builders and pure functions; no I/O here.

Two reads, both by the shell uid, which may read contacts on every supported SDK:
``com.android.shell`` requests ``READ_CONTACTS`` (frameworks/base
``packages/Shell/AndroidManifest.xml``) and, as an app id below 10000, holds it as a
system-fixed runtime grant (``DefaultPermissionGrantPolicy.
grantPermissionsToSysComponentsAndPrivApps``). An OEM build without the grant answers with a
``SecurityException``, which ``parsers.content_query_error`` reports as unreadable.

* ``phone_lookup_query(number)``: ``ContactsContract.PhoneLookup.CONTENT_FILTER_URI`` with the
  number ``Uri.encode``d as one path segment (``content://com.android.contacts/
  phone_lookup/<number>``). ContactsProvider2 (packages/providers/ContactsProvider) matches it
  as caller ID does (E.164, then ``phone_number_compare_loose``) and ignores any selection.
* ``phones_query()``: every phone row of ``CommonDataKinds.Phone.CONTENT_URI``
  (``content://com.android.contacts/data/phones``), at most ``PHONES_LIMIT`` of them
  (``ContactsContract.LIMIT_PARAM_KEY``, ``?limit=N``, read by ``ContactsProvider2.getLimit``).
  A name is never sent to the phone: a ``--where "display_name LIKE '...'"`` is SQL the
  provider splices into its query, so a name such as ``x' OR 1=1 --`` would change what
  is asked. The rows are filtered here instead (``matches_for``); when the limit was reached
  the book may be cut off and a name not found there is not proven absent
  (``PhoneBook.complete``).

Columns (ContactsContract.java): PhoneLookup has ``_id`` (the contact), ``number``, ``type``,
``label`` (``PhoneLookupColumns``) and ``display_name``; the phones view has ``contact_id``,
``data1`` (``Phone.NUMBER``), ``data2`` (``Phone.TYPE``), ``data3`` (``Phone.LABEL``) and
``display_name``. ``content`` prints values verbatim and the last column takes the rest of a
row, so ``display_name`` (free text) comes last: a name holding ``", number="`` cannot shift
the columns. SQL NULL prints as ``NULL``.
"""

from __future__ import annotations

import enum
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

from phoned.android_data.contacts import PhoneType
from phoned.device import parsers, phone_numbers
from phoned.device.commands import Argv

AUTHORITY = "com.android.contacts"
PHONE_LOOKUP_URI = f"content://{AUTHORITY}/phone_lookup"
PHONES_URI = f"content://{AUTHORITY}/data/phones"

# display_name last: free text, and the last column takes the rest of the row.
LOOKUP_PROJECTION = ("_id", "number", "type", "label", "display_name")
PHONES_PROJECTION = ("contact_id", "data1", "data2", "data3", "display_name")
# Phone rows asked for at most; an address book this size prints a few hundred KB.
PHONES_LIMIT = 2000

# android.net.Uri.encode: letters, digits and "_-!.~'()*" stay, the rest is %XX of UTF-8.
_URI_UNRESERVED = "_-!.~'()*"
_NULL = "NULL"


@dataclass(frozen=True)
class PhoneEntry:
    """One phone number of a contact, as the owner entered it."""

    number: str
    type: int | None  # a PhoneType code; None when the row said NULL or no number
    label: str | None  # the owner's own label (type CUSTOM); None when NULL

    @property
    def kind(self) -> PhoneType | None:
        """The named type, or None for NULL or a code this module does not know."""
        if self.type is None:
            return None
        try:
            return PhoneType(self.type)
        except ValueError:
            return None

    @property
    def type_name(self) -> str:
        """``mobile``, ``work``...; the label for a custom type; ``type N`` for unknown codes."""
        if self.kind is PhoneType.CUSTOM and self.label:
            return self.label
        if self.kind is not None:
            return self.kind.name.lower()
        return "unknown" if self.type is None else f"type {self.type}"


@dataclass(frozen=True)
class Contact:
    """An aggregated contact: its display name and the phone numbers the rows gave for it."""

    display_name: str
    numbers: tuple[PhoneEntry, ...]
    contact_id: int | None = None  # the provider's contact _id; None when the row had none


@dataclass(frozen=True)
class PhoneBook:
    """The phone rows of ``phones_query``, grouped by contact."""

    contacts: tuple[Contact, ...]
    complete: bool  # False when PHONES_LIMIT rows came back: more may exist beyond them


class MatchKind(enum.IntEnum):
    """How a display name matched a name query; lower is closer."""

    EXACT = 0  # the whole display name equals the query
    PREFIX = 1  # the display name starts with the query
    WORD = 2  # each word of the query starts a word of the display name


@dataclass(frozen=True)
class NameMatch:
    """A contact found for a name query, and how."""

    contact: Contact
    kind: MatchKind


# ---- commands ------------------------------------------------------------------------------


def uri_encode(text: str) -> str:
    """``android.net.Uri.encode(text)``: letters, digits and ``_-!.~'()*`` kept, everything else
    (``+``, ``#``, space, non-ASCII) as ``%XX`` of its UTF-8 bytes, hex in upper case. A lone
    surrogate becomes ``?`` first, as Java's UTF-8 encoder replaces it."""
    return urllib.parse.quote(text, safe=_URI_UNRESERVED, encoding="utf-8", errors="replace")


def phone_lookup_query(number: str) -> Argv:
    """The contacts the phone itself would show for ``number``:
    ``Row: N _id=.., number=.., type=.., label=.., display_name=..``, one per matching phone.

    Raises ValueError for a blank number: ``phone_lookup/`` with no segment is an unknown
    URI to the provider (an ``IllegalArgumentException``, jberkel/sms-backup-plus#175).
    """
    if not number.strip():
        raise ValueError("a phone lookup needs a number")
    return (
        "content", "query", "--uri", f"{PHONE_LOOKUP_URI}/{uri_encode(number)}",
        "--projection", ":".join(LOOKUP_PROJECTION),
    )  # fmt: skip


def phones_query(limit: int = PHONES_LIMIT) -> Argv:
    """Every phone row of the address book, at most ``limit``: ``Row: N contact_id=..,
    data1=.., data2=.., data3=.., display_name=..``. Takes no name: filtering is
    ``matches_for``'s job."""
    if limit < 1:
        raise ValueError("the phone row limit must be positive")
    return (
        "content", "query", "--uri", f"{PHONES_URI}?limit={limit}",
        "--projection", ":".join(PHONES_PROJECTION),
    )  # fmt: skip


# ---- parsers -------------------------------------------------------------------------------


def _text(value: str | None) -> str | None:
    return None if value is None or value == _NULL else value


def _int(value: str | None) -> int | None:
    text = _text(value)
    return int(text) if text is not None and re.fullmatch(r"-?\d+", text) else None


def _contacts(rows: list[dict[str, str]], columns: tuple[str, ...]) -> tuple[Contact, ...]:
    """Rows (id, number, type, label, name columns in ``columns`` order) grouped by contact id
    (by display name when the id is NULL), in the order their first row came."""
    id_col, number_col, type_col, label_col, name_col = columns
    order: list[tuple[int | None, str]] = []
    names: dict[tuple[int | None, str], str] = {}
    numbers: dict[tuple[int | None, str], list[PhoneEntry]] = {}
    for row in rows:
        contact_id = _int(row[id_col])
        name = _text(row[name_col]) or ""
        key = (contact_id, "" if contact_id is not None else name)
        if key not in names:
            order.append(key)
            names[key], numbers[key] = name, []
        number = _text(row[number_col])
        if number is not None:
            entry = PhoneEntry(number, _int(row[type_col]), _text(row[label_col]))
            if entry not in numbers[key]:
                numbers[key].append(entry)
    return tuple(Contact(names[k], tuple(numbers[k]), k[0]) for k in order)


def parse_lookup(text: str) -> tuple[Contact, ...] | None:
    """The contacts ``phone_lookup_query`` printed (``No result found.``: none); None when
    ``content`` printed a provider error instead (read stdout and stderr together). A display
    name that itself looks like a Java exception line makes the answer None too: unreadable,
    never a wrong contact."""
    if parsers.content_query_error(text) is not None:
        return None
    return _contacts(parsers.parse_content_rows(text, LOOKUP_PROJECTION), LOOKUP_PROJECTION)


def parse_phones(text: str, limit: int = PHONES_LIMIT) -> PhoneBook | None:
    """The address book ``phones_query(limit)`` printed, grouped by contact; ``complete`` is
    False when ``limit`` rows came back. None when ``content`` printed a provider error."""
    if parsers.content_query_error(text) is not None:
        return None
    rows = parsers.parse_content_rows(text, PHONES_PROJECTION)
    return PhoneBook(_contacts(rows, PHONES_PROJECTION), complete=len(rows) < limit)


# ---- matching ------------------------------------------------------------------------------


def normalize_name(name: str) -> str:
    """A display name as matching compares it: Unicode NFC (a Hangul syllable typed as jamo
    equals the precomposed one), case-folded (``Ё``/``ё``, ``ß``/``ss``), runs of whitespace
    collapsed to one space, outer whitespace dropped."""
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())
    return " ".join(folded.split())


def same_display_name(a: str, b: str) -> bool:
    """Whether two renderings name the same person's display name (``normalize_name`` equal,
    and not blank): the check for a recipient a screen shows by name."""
    na = normalize_name(a)
    return bool(na) and na == normalize_name(b)


def _words(normalized: str) -> list[str]:
    return re.findall(r"\w+", normalized)


def _match_kind(query: str, name: str) -> MatchKind | None:
    if name == query:
        return MatchKind.EXACT
    if name.startswith(query):
        return MatchKind.PREFIX
    query_words, name_words = _words(query), _words(name)
    if query_words and all(any(w.startswith(q) for w in name_words) for q in query_words):
        return MatchKind.WORD
    return None


def names_for(
    number: str, contacts: Iterable[Contact], region: phone_numbers.Regions = ""
) -> tuple[str, ...]:
    """The display names of the contacts holding ``number`` (the same number on a phone in
    ``region``, ``phone_numbers.same_number``), each once, in the order given. Works on a
    ``parse_lookup`` answer and on a ``PhoneBook``'s contacts alike; a blank name is left out."""
    found: list[str] = []
    for contact in contacts:
        held = any(phone_numbers.same_number(e.number, number, region) for e in contact.numbers)
        if held and contact.display_name and contact.display_name not in found:
            found.append(contact.display_name)
    return tuple(found)


def matches_for(name_query: str, contacts: Iterable[Contact]) -> tuple[NameMatch, ...]:
    """The contacts ``name_query`` may mean, closest first: exact display names, then names
    starting with the query, then names where every query word starts a word
    (``ivan`` finds ``Petrov Ivan``); ties keep the order given. Compared after
    ``normalize_name``; the query is data only, never a pattern. A blank query matches
    nothing."""
    query = normalize_name(name_query)
    if not query:
        return ()
    found = []
    for index, contact in enumerate(contacts):
        kind = _match_kind(query, normalize_name(contact.display_name))
        if kind is not None:
            found.append((kind, index, contact))
    found.sort(key=lambda item: (item[0], item[1]))
    return tuple(NameMatch(contact, kind) for kind, _, contact in found)
