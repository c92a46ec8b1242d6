"""``contacts.find``: which contacts a name may mean, with their numbers and number types.

Read-only. The name never reaches the phone: the whole phone book is read with
``phoned.device.contacts.phones_query`` (``content query --uri content://com.android.contacts/
data/phones?limit=N --projection contact_id:data1:data2:data3:display_name``, run by the
shell uid, which holds READ_CONTACTS; sources in ``device/contacts.py``) and the rows are
matched here (``contacts.matches_for``: exact, prefix, then word prefixes, after NFC and
case folding, so Cyrillic and Hangul names match as typed). A ``--where`` with the name
would be SQL the provider splices into its query (ContactsProvider2), and the name would
then be shell text too: neither happens.

Each match carries its display name, how it matched, and each number with its
``ContactsContract.CommonDataKinds.Phone.TYPE_*`` code and name (``mobile``, ``home``,
``work``...; the owner's own label for ``TYPE_CUSTOM``). ``complete`` is False when the
read hit ``PHONES_LIMIT`` rows (``ContactsProvider2.getLimit`` honours ``?limit=``): more
contacts may exist beyond them, and a name not found is then not proven absent.

Privacy: the query (the ``name`` param) is sensitive, so no command's stdout excerpt (the
phone book) enters the evidence; the observation holds counts, never names or numbers. The
matches, numbers in clear, are the method's value: what the planner asked for.
A provider error (``SecurityException`` on a build without the shell's grant) ends
``not_met`` with the error line.
"""

from __future__ import annotations

from typing import Any

from phoned.device import contacts
from phoned.device.actions.base import ActionContext, Outcome
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import Params
from phoned.device.actions.reads import listed
from phoned.device.actions.recipient import read_book
from pydantic import Field, field_validator

# ---- params ------------------------------------------------------------------------------

MAX_NAME = 100  # characters; a display name longer than this is no query a person types


class ContactsFind(Params):
    """A name query: any script, matched on the daemon, never sent to the phone."""

    name: str = Field(
        min_length=1,
        max_length=MAX_NAME,
        description="the name (or its start, or words of it) to look up; never sent to the phone",
        examples=["Анна"],
    )

    @field_validator("name")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a name must not be blank")
        if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise ValueError("a name must not hold NUL or unpaired surrogates")
        return value


# ---- commands and parsers: the phone book's own ``device.contacts.phones_query`` /
# ``parse_phones`` / ``matches_for`` and ``device.parsers.content_query_error``.

# ---- actions -----------------------------------------------------------------------------


def _number(entry: contacts.PhoneEntry) -> dict[str, Any]:
    return {
        "number": entry.number,
        "type": entry.type,
        "type_name": entry.type_name,
        "label": entry.label,
    }


def _match(found: contacts.NameMatch) -> dict[str, Any]:
    return {
        "display_name": found.contact.display_name,
        "contact_id": found.contact.contact_id,
        "match": found.kind.name.lower(),
        "numbers": [_number(e) for e in found.contact.numbers],
    }


def find(ctx: ActionContext, params: ContactsFind) -> Outcome:
    """Read the phone book once, match the name here; met with ``{matches, complete}``
    (possibly no matches), ``not_met`` when the provider answered with an error."""
    book = read_book(ctx, "read")
    if isinstance(book, Outcome):
        return book
    matches = contacts.matches_for(params.name, book.contacts)
    counts = {"contacts": len(book.contacts), "complete": book.complete, "matches": len(matches)}
    ctx.recorder.observe("phone_book", counts, "read", contacts.phones_query())
    if not book.complete:
        ctx.recorder.note(
            f"the phone book read stopped at {contacts.PHONES_LIMIT} rows: more contacts may exist"
        )
    value = {"matches": [_match(m) for m in matches], "complete": book.complete}
    return listed(ctx, counts, f"{len(matches)} contact(s) match", value)


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow.read_only(  # docs/actions.md
    reads=(
        "`content query --uri content://com.android.contacts/data/phones?limit=2000 "
        "--projection contact_id:data1:data2:data3:display_name` (the name is matched on the "
        "daemon, never sent)"
    )
)

DECLARED = (
    Method(
        "contacts.find", ContactsFind, find, fixed("contacts.found"),
        sensitive=("name",),
        summary="Find the contacts a name may mean, each with its numbers and their types "
        "(mobile, home, work...); the name is matched on the daemon, never sent to the phone.",
        reads="the phone book (contacts provider phone rows)",
        emulator_params={"name": "Test"},
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
