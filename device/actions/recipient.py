"""Who an ``sms.*`` task writes to: the number ``to`` gives, or the one a contact name means.

A number as ``to`` is read in the phone's region (``DeviceIdentity.region``, the SIM's
country) and used in one canonical form, E.164 (``phoned.device.phone_numbers.canonical``:
``8 916 123-45-67`` on a phone in Russia is ``+79161234567``); a number that is no possible
number there is ``invalid_params`` naming ``to`` with the reason, before anything is done on
the phone. With no ``contact`` nothing else is read. A name is resolved here, at run time, against the phone book read once
(``phoned.device.contacts.phones_query``: every phone row, by the shell uid; the name is matched on
the daemon with ``contacts.matches_for`` and never reaches the phone, not even as a
``--where``):

* the contacts whose display name equals the name (after NFC and case folding) if any, else
  those it starts or whose words it starts (``Ivan`` finds ``Ivan Petrov``);
* exactly one such contact with exactly one number: that number, with the contact's name and
  the number's type (``Recipient``);
* several contacts, or one with several numbers: ``waiting`` for a choice of ``to``
  (``detail.choice``, read by ``daemon/runtime/attempt/verify.py::waiting_for``), each
  candidate (display name, number, type) in ``detail.candidates``; nothing is drafted or
  sent. The answer is an amendment with the chosen number as ``to`` and the contact's name
  as ``contact`` (a new revision);
* none: ``invalid_params`` naming ``to`` (a cut-off book says the name may lie beyond it).

A number with a ``contact`` (the answer to a choice) is checked against the book: the contact
of that name must hold that number, else ``invalid_params`` naming ``contact``.

Privacy: a number the book gave becomes a secret of the evidence (``add_sensitive``), as
``to`` is; the contact's name is kept as ``to`` (the name asked for) is; the candidates of a choice are what the task waits on and keep their numbers in
clear under ``number`` (redacted for bound viewers, as ``contacts.find``'s matches are).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from phoned.device import contacts, parsers, phone_numbers, private
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.params import is_phone_number

CHOICE_FIELD = "to"


@dataclass(frozen=True)
class Recipient:
    """The number a task writes to; with the contact it came from when a name gave it."""

    number: str
    name: str | None = None  # the contact's display name
    number_type: str | None = None  # ``mobile``, ``work``... (``PhoneEntry.type_name``)
    given: bool = True  # the number is the task's ``to`` (else the phone book gave it)

    @property
    def shown(self) -> str:
        """The number as a preview shows it: as given, or, when the phone book gave it, in
        its redacted form (``<number •••4567>``): evidence keeps no number in clear and the
        approver's copy is rebuilt from the task's params, which do not hold this one."""
        return self.number if self.given else private.redact_number(self.number)

    def preview_data(self) -> dict[str, Any]:
        """What a preview adds for a contact (nothing for a plain number: as before)."""
        if self.name is None:
            return {}
        return {"contact": self.name, "number_type": self.number_type}

    def detail(self) -> dict[str, Any]:
        """The outcome detail naming the contact and the number used (redacted at rest)."""
        if self.name is None:
            return {}
        return {"recipient": {"contact": self.name, "to": self.number, "type": self.number_type}}


def candidate(contact: contacts.Contact, entry: contacts.PhoneEntry) -> dict[str, Any]:
    """One number a name may mean, as a choice lists it."""
    return {
        "display_name": contact.display_name,
        "contact_id": contact.contact_id,
        "number": entry.number,
        "type": entry.type,
        "type_name": entry.type_name,
        "label": entry.label,
    }


def read_book(ctx: ActionContext, phase: str, why: str = "") -> contacts.PhoneBook | Outcome:
    """The phone book, read once with its fixed argv (``contacts.phones_query``; a name never
    reaches the phone), or ``not_met`` with the provider's error when it answered one
    (``content query`` exits 0 then). The caller observes what it found in the book."""
    argv = contacts.phones_query()
    result = ctx.recorder.read(argv)
    text = result.stdout + result.stderr
    book = contacts.parse_phones(text)
    if book is not None:
        return book
    error = parsers.content_query_error(text) or "unreadable"
    ctx.recorder.observe("phone_book", {"readable": False}, phase, argv)
    return outcome(
        ctx, Status.NOT_MET, {"expected": {"phone_book": "readable"}, "observed": None,
        "met": False}, f"the phone book could not be read{why}: {error}",
    )  # fmt: skip


def _read_book(ctx: ActionContext) -> contacts.PhoneBook | Outcome:
    book = read_book(ctx, "before", ", so the name cannot be resolved")
    if not isinstance(book, Outcome):
        counts = {"contacts": len(book.contacts), "complete": book.complete}
        ctx.recorder.observe("phone_book", counts, "before", contacts.phones_query())
    return book


def _refused(ctx: ActionContext, field: str, message: str) -> Outcome:
    target = {"expected": {field: "a contact in the phone book"}, "observed": None, "met": False}
    return outcome(ctx, Status.INVALID_PARAMS, target, message, field=field)


def resolve(ctx: ActionContext, to: str, contact: str | None = None) -> Recipient | Outcome:
    """The recipient ``to`` (and ``contact``) mean, or the outcome that stops the task:
    waiting for a choice, ``invalid_params`` (no such contact), ``not_met`` (no book)."""
    if is_phone_number(to):
        return _number(ctx, to, contact)
    book = _read_book(ctx)
    if isinstance(book, Outcome):
        return book
    matches = contacts.matches_for(to, book.contacts)
    exact = [m for m in matches if m.kind is contacts.MatchKind.EXACT]
    chosen = [m.contact for m in (exact or matches)]
    pairs = [(c, e) for c in chosen for e in c.numbers]
    if not pairs:
        cut = "" if book.complete else f" (the read stopped at {contacts.PHONES_LIMIT} rows)"
        return _refused(ctx, "to", f"to: no contact with a number is named {to!r}{cut}")
    if len(pairs) == 1:
        person, entry = pairs[0]
        ctx.recorder.add_sensitive(entry.number)
        return Recipient(entry.number, person.display_name, entry.type_name, given=False)
    found = [candidate(c, e) for c, e in pairs]
    ctx.recorder.note(f"{len(chosen)} contact(s) with {len(pairs)} numbers fit the name")
    target = {
        "expected": {"candidates": 1},
        "observed": {"candidates": len(pairs)},
        "met": False,
    }
    return outcome(
        ctx, Status.WAITING, target,
        f"the name fits {len(pairs)} numbers of {len(chosen)} contact(s): amend the task "
        "with the chosen number as to (and its contact's name as contact)",
        choice=CHOICE_FIELD, candidates=found,
    )  # fmt: skip


def region(ctx: ActionContext) -> str:
    """The country the phone reads numbers in (``DeviceIdentity.region``; "" unknown)."""
    return str(ctx.device.identity.region)


def regions(ctx: ActionContext) -> tuple[str, ...]:
    """The countries the phone reads numbers in, for comparing renderings of a number:
    its region, then its locale's (``phone_numbers.reading_regions``)."""
    identity = ctx.device.identity
    return phone_numbers.reading_regions(str(identity.region), str(identity.locale))


def _number(ctx: ActionContext, to: str, contact: str | None) -> Recipient | Outcome:
    """``to`` in E.164 in the phone's region (checked against the book with a ``contact``),
    or ``invalid_params`` naming ``to`` with libphonenumber's reason."""
    where = region(ctx)
    try:
        number = phone_numbers.canonical(to, where)
    except phone_numbers.NumberRefused as exc:
        target = {"expected": {"to": f"a phone number in {where or 'any region'}"},
                  "observed": None, "met": False}  # fmt: skip
        return outcome(
            ctx, Status.INVALID_PARAMS, target, f"to: {exc}", field="to", region=where,
        )  # fmt: skip
    if number != to:
        ctx.recorder.add_sensitive(number)
        ctx.recorder.note(f"to read in region {where or 'unknown'} as E.164")
    if contact is None:
        return Recipient(number)
    book = _read_book(ctx)
    if isinstance(book, Outcome):
        return book
    return _checked(ctx, book, number, contact)


def _checked(
    ctx: ActionContext, book: contacts.PhoneBook, number: str, name: str
) -> Recipient | Outcome:
    """``number`` as the contact ``name`` holds it (the answer to a choice), or refused."""
    where = regions(ctx)
    for person in book.contacts:
        if not contacts.same_display_name(person.display_name, name):
            continue
        for entry in person.numbers:
            if phone_numbers.same_number(entry.number, number, where):
                return Recipient(number, person.display_name, entry.type_name)
    return _refused(ctx, "contact", f"contact: no contact named {name!r} holds the number to")


def number_for(ctx: ActionContext, to: str, contact: str | None = None) -> str | None:
    """The number ``to`` resolves to now, for a reconciler (reads only); None when it does
    not resolve to exactly one."""
    found = resolve(ctx, to, contact)
    return found.number if isinstance(found, Recipient) else None
