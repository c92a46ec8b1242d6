"""Contacts provider model (``content://com.android.contacts``). The ``content`` tool that reads
it lives in ``content_tool.py`` (``registry.load_all`` imports both).

Raw contacts with a display name and phone data rows, as AOSP
``packages/providers/ContactsProvider`` keeps them, with two simplifications: raw contacts
with exactly the same display name are one aggregated contact (ContactAggregator2 also weighs
phones, emails and nicknames), and one raw contact per display name holds all its numbers,
unless the scenario keeps two people of the same name apart (``add(separate=True)``, as
``AggregationExceptions.TYPE_KEEP_SEPARATE`` does): then each is a contact of its own, and
the phone rows of both print the same ``display_name`` with their own ``contact_id``.

Columns are a subset of ContactsProvider2's projection maps: ``sPhoneLookupProjectionMap``
for ``phone_lookup/<number>`` (``_id`` and ``contact_id`` are the contact, ``number``/
``type``/``label``/``normalized_number`` are the phone's data1..data4) and the data view for
``data/phones`` (``Phone.NUMBER`` = ``data1``, ``TYPE`` = ``data2``, ``LABEL`` = ``data3``,
``NORMALIZED_NUMBER`` = ``data4``; mimetype ``vnd.android.cursor.item/phone_v2``). Phone
types are ``ContactsContract.CommonDataKinds.Phone.TYPE_*`` (1 home, 2 mobile, 3 work...).
A lookup matches numbers as the provider's SQL does, ``PHONE_NUMBERS_EQUAL``
(``phone_numbers.compare_loose``, a model of SQLite's ``phone_number_compare_loose``: the
Russian ``8`` trunk prefix included); ``normalized_number`` is the number in E.164 read in
the phone's country, as DataRowHandlerForPhoneNumber writes it with
``PhoneNumberUtils.formatNumberToE164`` (``phone_numbers.normalized_number``; the country:
the SIM's, else the locale's), null when it is no valid number there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from phoned.sim.android import phone_numbers
from phoned.sim.shell.registry import SimService

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

Value = int | str | None

PHONE_MIMETYPE = "vnd.android.cursor.item/phone_v2"  # CommonDataKinds.Phone.CONTENT_ITEM_TYPE
TYPE_MOBILE = 2  # CommonDataKinds.Phone.TYPE_MOBILE

# What ``content query`` prints without --projection, in this order (simulator subsets).
LOOKUP_COLUMNS = (
    "_id",
    "contact_id",
    "data_id",
    "display_name",
    "number",
    "type",
    "label",
    "normalized_number",
    "starred",
    "has_phone_number",
)
PHONE_COLUMNS = (
    "_id",
    "raw_contact_id",
    "contact_id",
    "mimetype",
    "display_name",
    "data1",
    "data2",
    "data3",
    "data4",
    "is_primary",
    "starred",
)


@dataclass
class PhoneData:
    """One phone data row of a raw contact."""

    data_id: int
    number: str
    type: int
    label: str | None


@dataclass
class RawContact:
    """A raw contact: its display name, the contact it is aggregated into, its phones."""

    raw_contact_id: int
    contact_id: int
    display_name: str
    phones: list[PhoneData] = field(default_factory=list)


class ContactsProvider:
    """The address book: raw contacts and their phone numbers."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self.raw_contacts: list[RawContact] = []
        self._next_data_id = 1

    def add(
        self,
        name: str,
        number: str,
        type: int = TYPE_MOBILE,
        label: str | None = None,
        separate: bool = False,
    ) -> int:
        """Give the contact named ``name`` (made when new; the last one of that name) the
        phone ``number`` of ``type`` (a ``Phone.TYPE_*`` code; ``label`` for type 0, custom);
        ``separate``: a new contact of the same name all the same (two people called alike,
        which the owner kept apart: ``AggregationExceptions.TYPE_KEEP_SEPARATE``). Returns
        the contact id."""
        if not name or not number:
            raise ValueError("a contact needs a name and a number")
        with self.phone.lock:
            same = [r for r in self.raw_contacts if r.display_name == name]
            raw = None if separate or not same else same[-1]
            if raw is None:
                new_id = len(self.raw_contacts) + 1
                raw = RawContact(new_id, new_id, name)
                self.raw_contacts.append(raw)
            raw.phones.append(PhoneData(self._next_data_id, number, type, label))
            self._next_data_id += 1
            return raw.contact_id

    def phone_rows(self) -> list[dict[str, Value]]:
        """Rows of ``data/phones`` (every ``PHONE_COLUMNS`` column), in data ``_id`` order."""
        props = self.phone.props
        country = phone_numbers.sim_country(props) or phone_numbers.locale_country(
            props.get("persist.sys.locale") or props.get("ro.product.locale", "")
        )
        with self.phone.lock:
            rows = [
                {
                    "_id": p.data_id,
                    "raw_contact_id": raw.raw_contact_id,
                    "contact_id": raw.contact_id,
                    "mimetype": PHONE_MIMETYPE,
                    "display_name": raw.display_name,
                    "data1": p.number,
                    "data2": p.type,
                    "data3": p.label,
                    "data4": phone_numbers.normalized_number(p.number, country),
                    "is_primary": 0,
                    "starred": 0,
                }
                for raw in self.raw_contacts
                for p in raw.phones
            ]
        return sorted(rows, key=lambda r: int(r["_id"] or 0))

    def lookup_rows(self, number: str) -> list[dict[str, Value]]:
        """Rows of ``phone_lookup/<number>`` (every ``LOOKUP_COLUMNS`` column): one per phone
        that names the same number, in data ``_id`` order (the content tool sorts them)."""
        return [
            {
                "_id": row["contact_id"],
                "contact_id": row["contact_id"],
                "data_id": row["_id"],
                "display_name": row["display_name"],
                "number": row["data1"],
                "type": row["data2"],
                "label": row["data3"],
                "normalized_number": row["data4"],
                "starred": 0,
                "has_phone_number": 1,
            }
            for row in self.phone_rows()
            if phone_numbers.compare_loose(str(row["data1"]), number)
        ]


SIM_SERVICE = SimService("contacts", ContactsProvider)  # phone.contacts
