"""``phoned.device.contacts``: the argv it builds, the rows it parses, how names and numbers match.

No public capture of these two URIs' output was found (see the module docstring); the rows
below are written in the shape Content.java prints (``Row: N col=value, ...``, values
verbatim, SQL NULL as ``NULL``), the shape ``parsers.parse_content_rows`` is tested on with
real sms captures. ``test_sim_contacts.py`` runs the same parsers over the simulator's output.
"""

from __future__ import annotations

import unicodedata

import pytest

from phoned.device import contacts
from phoned.device.contacts import Contact, MatchKind, PhoneEntry, PhoneType

# ---- commands ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ("+44 7700 900123", "%2B44%207700%20900123"),
        ("*31#5551234", "*31%235551234"),
        ("abcXYZ019_-!.~'()*", "abcXYZ019_-!.~'()*"),
        ("(555) 010-0142", "(555)%20010-0142"),
        ("1;2&3|4$5`6/7?8", "1%3B2%263%7C4%245%606%2F7%3F8"),
        ("é", "%C3%A9"),
        ("한", "%ED%95%9C"),
        ("\ud800", "%3F"),  # a lone surrogate: Java's encoder writes '?'
    ],
)
def test_uri_encode_is_android_uri_encode(text: str, encoded: str) -> None:
    assert contacts.uri_encode(text) == encoded


def test_phone_lookup_query_is_pinned() -> None:
    assert contacts.phone_lookup_query("+44 7700 900123") == (
        "content", "query",
        "--uri", "content://com.android.contacts/phone_lookup/%2B44%207700%20900123",
        "--projection", "_id:number:type:label:display_name",
    )  # fmt: skip


def test_a_number_that_looks_like_shell_stays_one_encoded_uri_element() -> None:
    argv = contacts.phone_lookup_query("123; rm -rf / #")
    assert len(argv) == 6
    assert argv[3] == "content://com.android.contacts/phone_lookup/123%3B%20rm%20-rf%20%2F%20%23"


def test_a_blank_number_builds_no_lookup() -> None:
    for blank in ("", "   "):
        with pytest.raises(ValueError, match="needs a number"):
            contacts.phone_lookup_query(blank)


def test_phones_query_is_pinned_and_takes_no_name() -> None:
    assert contacts.phones_query() == (
        "content", "query",
        "--uri", "content://com.android.contacts/data/phones?limit=2000",
        "--projection", "contact_id:data1:data2:data3:display_name",
    )  # fmt: skip
    assert contacts.phones_query(5)[3].endswith("?limit=5")
    assert "--where" not in contacts.phones_query()
    with pytest.raises(ValueError):
        contacts.phones_query(0)


# ---- parsers -------------------------------------------------------------------------------

LOOKUP_TWO = (
    "Row: 0 _id=7, number=+44 7700 900123, type=2, label=NULL, display_name=Ada Lovelace\n"
    "Row: 1 _id=7, number=07700 900123, type=0, label=Lab, display_name=Ada Lovelace\n"
    "Row: 2 _id=9, number=07700900123, type=3, label=NULL, display_name=Charles Babbage\n"
)


def test_lookup_rows_group_into_contacts_in_row_order() -> None:
    assert contacts.parse_lookup(LOOKUP_TWO) == (
        Contact(
            "Ada Lovelace",
            (
                PhoneEntry("+44 7700 900123", 2, None),
                PhoneEntry("07700 900123", 0, "Lab"),
            ),
            7,
        ),
        Contact("Charles Babbage", (PhoneEntry("07700900123", 3, None),), 9),
    )


def test_no_result_found_is_no_contact_and_an_error_is_none() -> None:
    assert contacts.parse_lookup("No result found.\n") == ()
    denied = (
        "Error while accessing provider:com.android.contacts\n"
        "java.lang.SecurityException: Permission Denial: opening provider "
        "com.android.providers.contacts.ContactsProvider2 requires "
        "android.permission.READ_CONTACTS\n"
    )
    assert contacts.parse_lookup(denied) is None
    assert contacts.parse_phones(denied) is None


def test_a_name_holding_column_separators_stays_one_name() -> None:
    text = "Row: 0 _id=3, number=5550100, type=2, label=NULL, display_name=Bob, number=1, type=7\n"
    (bob,) = contacts.parse_lookup(text) or ()
    assert bob.display_name == "Bob, number=1, type=7"
    assert bob.numbers == (PhoneEntry("5550100", 2, None),)


def test_a_name_that_looks_like_an_exception_is_unreadable_never_a_wrong_answer() -> None:
    text = "Row: 0 _id=3, number=5550100, type=2, label=NULL, display_name=java.lang.Exception: x\n"
    assert contacts.parse_lookup(text) is None


def test_phone_types_are_named() -> None:
    assert PhoneEntry("1", 2, None).type_name == "mobile"
    assert PhoneEntry("1", 17, None).type_name == "work_mobile"
    assert PhoneEntry("1", 0, "Dacha").type_name == "Dacha"
    assert PhoneEntry("1", 0, None).type_name == "custom"
    assert PhoneEntry("1", 99, None).type_name == "type 99"
    assert PhoneEntry("1", None, None).type_name == "unknown"
    assert [t.value for t in PhoneType] == list(range(21))
    assert (PhoneType.HOME, PhoneType.MOBILE, PhoneType.WORK, PhoneType.MMS) == (1, 2, 3, 20)


PHONES = (
    "Row: 0 contact_id=1, data1=+7 916 123-45-67, data2=2, data3=NULL, display_name=Анна Иванова\n"
    "Row: 1 contact_id=2, data1=010-1234-5678, data2=1, data3=NULL, display_name=김민준\n"
    "Row: 2 contact_id=1, data1=8 495 765-43-21, data2=3, data3=NULL, display_name=Анна Иванова\n"
    "Row: 3 contact_id=3, data1=+15550100, data2=2, data3=NULL, display_name=Ann Lee\n"
)


def test_phone_rows_group_by_contact_and_say_whether_the_book_is_whole() -> None:
    book = contacts.parse_phones(PHONES)
    assert book is not None and book.complete
    assert [(c.contact_id, c.display_name, len(c.numbers)) for c in book.contacts] == [
        (1, "Анна Иванова", 2),
        (2, "김민준", 1),
        (3, "Ann Lee", 1),
    ]
    cut = contacts.parse_phones(PHONES, limit=4)
    assert cut is not None and not cut.complete


# ---- matching ------------------------------------------------------------------------------


def _book() -> tuple[Contact, ...]:
    book = contacts.parse_phones(PHONES)
    assert book is not None
    return book.contacts


def test_names_for_matches_numbers_loosely_and_names_each_once() -> None:
    found = contacts.parse_lookup(LOOKUP_TWO) or ()
    assert contacts.names_for("+447700900123", found) == ("Ada Lovelace", "Charles Babbage")
    assert contacts.names_for("916 123 45 67", _book()) == ("Анна Иванова",)
    assert contacts.names_for("+82 10-1234-5678", _book()) == ("김민준",)
    assert contacts.names_for("5550199", _book()) == ()
    nameless = Contact("", (PhoneEntry("5550100", 2, None),))
    assert contacts.names_for("5550100", [nameless]) == ()


def _names(query: str, book: tuple[Contact, ...] | list[Contact]) -> list[tuple[str, MatchKind]]:
    return [(m.contact.display_name, m.kind) for m in contacts.matches_for(query, book)]


def test_exact_then_prefix_then_word() -> None:
    book = [
        Contact("Ann Leeson", ()),
        Contact("Lee Ann", ()),
        Contact("ann", ()),
        Contact("Annabel", ()),
        Contact("Joanna", ()),
    ]
    assert _names("Ann", book) == [
        ("ann", MatchKind.EXACT),
        ("Ann Leeson", MatchKind.PREFIX),
        ("Annabel", MatchKind.PREFIX),
        ("Lee Ann", MatchKind.WORD),
    ]
    assert _names("lee ann", book) == [("Lee Ann", MatchKind.EXACT), ("Ann Leeson", MatchKind.WORD)]


def test_cyrillic_and_hangul_names_match_case_and_composition_insensitively() -> None:
    assert _names("анна", _book()) == [("Анна Иванова", MatchKind.PREFIX)]
    assert _names("ИВАНОВА", _book()) == [("Анна Иванова", MatchKind.WORD)]
    assert _names("  анна   иванова ", _book()) == [("Анна Иванова", MatchKind.EXACT)]
    jamo = unicodedata.normalize("NFD", "김민준")
    assert jamo != "김민준"
    assert _names(jamo, _book()) == [("김민준", MatchKind.EXACT)]
    assert _names("김", _book()) == [("김민준", MatchKind.PREFIX)]
    assert contacts.same_display_name("STRASSE", "Straße")
    assert not contacts.same_display_name(" ", " ")


def test_a_blank_query_matches_nothing() -> None:
    for blank in ("", "   ", "\t\n"):
        assert contacts.matches_for(blank, _book()) == ()


@pytest.mark.parametrize(
    "name",
    [
        "Robert'); DROP TABLE contacts;--",
        "x' OR 1=1 --",
        "%",
        "_",
        ".*",
        "$(reboot)",
        'Ann" OR display_name LIKE "%',
    ],
)
def test_injection_looking_names_stay_data(name: str) -> None:
    book = [*_book(), Contact(name, (PhoneEntry("5550123", 2, None),), 99)]
    assert _names(name, book) == [(name, MatchKind.EXACT)]
    # as a query it is a literal string: no wildcard, no pattern, no SQL reaches the phone
    assert all(m.contact.contact_id == 99 for m in contacts.matches_for(name, book))
    assert contacts.names_for("5550123", book) == (name,)
    assert contacts.phones_query() == contacts.phones_query(contacts.PHONES_LIMIT)
