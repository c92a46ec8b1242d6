"""The simulated contacts provider through the sim's ``content`` tool, read back with the
product's own argv builders and parsers (``phoned.device.contacts``)."""

from __future__ import annotations

import pytest
from helpers import call_tool
from phoned.device import contacts
from phoned.device.contacts import PhoneEntry
from phoned.sim import scenarios
from phoned.sim.android.contacts import ContactsProvider
from phoned.sim.android.content_tool import content
from phoned.sim.phone import Phone

SHELL = "calling user: android.uid.shell:2000, calling package:com.android.shell"


def run(phone: Phone, *args: str) -> tuple[int, str, str]:
    return call_tool(phone, content, ["content", *args])


def run_argv(phone: Phone, argv: tuple[str, ...]) -> str:
    """stdout and stderr together, as the product reads a content query."""
    assert argv[0] == "content"
    rc, out, err = run(phone, *argv[1:])
    assert rc == 0
    return out + err


def book(phone: Phone) -> ContactsProvider:
    return phone.service(ContactsProvider)


def test_every_phone_has_an_empty_address_book() -> None:
    for sdk in (28, 30, 33, 34, 35):
        phone = Phone(sdk=sdk)
        assert phone.service(ContactsProvider) is vars(phone)["contacts"]
        assert run(phone, "query", "--uri", "content://com.android.contacts/data/phones") == (
            0,
            "No result found.\n",
            "",
        )


def test_phones_rows_print_like_sms_rows_and_parse_back() -> None:
    phone = Phone(sdk=34)
    book(phone).add("Анна Иванова", "+7 916 123-45-67")
    book(phone).add("김민준", "010-1234-5678", type=1)
    book(phone).add("Анна Иванова", "8 495 765-43-21", type=3)
    text = run_argv(phone, contacts.phones_query())
    assert text == (
        "Row: 0 contact_id=1, data1=+7 916 123-45-67, data2=2, data3=NULL, "
        "display_name=Анна Иванова\n"
        "Row: 1 contact_id=2, data1=010-1234-5678, data2=1, data3=NULL, display_name=김민준\n"
        "Row: 2 contact_id=1, data1=8 495 765-43-21, data2=3, data3=NULL, "
        "display_name=Анна Иванова\n"
    )
    parsed = contacts.parse_phones(text)
    assert parsed is not None and parsed.complete
    anna, minjun = parsed.contacts
    assert minjun.display_name == "김민준"
    assert anna.numbers == (
        PhoneEntry("+7 916 123-45-67", 2, None),
        PhoneEntry("8 495 765-43-21", 3, None),
    )
    assert [m.contact for m in contacts.matches_for("анна", parsed.contacts)] == [anna]
    assert contacts.names_for("010 1234 5678", parsed.contacts) == ("김민준",)


def test_full_phone_row_has_the_view_columns() -> None:
    phone = Phone(sdk=30)
    book(phone).add("Ada", "+15550100")
    _, out, _ = run(phone, "query", "--uri", "content://com.android.contacts/data/phones")
    assert out == (
        "Row: 0 _id=1, raw_contact_id=1, contact_id=1, "
        "mimetype=vnd.android.cursor.item/phone_v2, display_name=Ada, data1=+15550100, "
        # data4 as DataRowHandlerForPhoneNumber writes it: formatNumberToE164 in the phone's
        # country (US), null for no valid number (issue 33; was "+digits" of any "+" number)
        "data2=2, data3=NULL, data4=NULL, is_primary=0, starred=0\n"
    )


def test_phone_lookup_decodes_the_number_and_matches_loosely() -> None:
    phone = Phone(sdk=34)
    book(phone).add("Ada Lovelace", "07700 900123")
    book(phone).add("Charles Babbage", "+44 7700 900999")
    text = run_argv(phone, contacts.phone_lookup_query("+44 7700 900123"))
    assert text == (
        "Row: 0 _id=1, number=07700 900123, type=2, label=NULL, display_name=Ada Lovelace\n"
    )
    found = contacts.parse_lookup(text)
    assert found is not None
    assert contacts.names_for("+44 7700 900123", found) == ("Ada Lovelace",)
    assert contacts.parse_lookup(run_argv(phone, contacts.phone_lookup_query("5550000"))) == ()


def test_phone_lookup_ignores_a_selection_and_sorts_by_normalized_number() -> None:
    phone = Phone(sdk=33)
    book(phone).add("Local", "07700 900123")
    book(phone).add("Intl", "+44 7700 900123")
    _, out, _ = run(
        phone,
        "query",
        "--uri",
        "content://com.android.contacts/phone_lookup/07700900123",
        "--projection",
        "display_name:normalized_number",
        "--where",
        "display_name='Local'",
    )
    # no "number" asked: the provider adds it; longest normalized number first, NULL last.
    # Ofcom's drama range 07700 900xxx is no valid number to libphonenumber, so the provider
    # (formatNumberToE164) leaves both NULL (issue 33; the order is then the rows')
    assert out == (
        "Row: 0 display_name=Local, normalized_number=NULL, number=07700 900123\n"
        "Row: 1 display_name=Intl, normalized_number=NULL, number=+44 7700 900123\n"
    )


def test_limit_bounds_the_rows_and_a_bad_limit_is_ignored() -> None:
    phone = Phone(sdk=34)
    for i in range(5):
        book(phone).add(f"P{i}", f"555010{i}")
    parsed = contacts.parse_phones(run_argv(phone, contacts.phones_query(3)), limit=3)
    assert parsed is not None and not parsed.complete
    assert [c.display_name for c in parsed.contacts] == ["P0", "P1", "P2"]
    for bad in ("-1", "x", ""):
        uri = f"content://com.android.contacts/data/phones?limit={bad}"
        _, out, _ = run(phone, "query", "--uri", uri, "--projection", "display_name")
        assert out.count("Row: ") == 5


def test_data_phones_where_subset_uses_its_own_columns() -> None:
    phone = Phone(sdk=34)
    book(phone).add("A", "1111111")
    book(phone).add("B", "2222222")
    uri = "content://com.android.contacts/data/phones"
    _, out, _ = run(
        phone, "query", "--uri", uri, "--projection", "data1", "--where", "contact_id=2"
    )
    assert out == "Row: 0 data1=2222222\n"


@pytest.mark.parametrize(
    "path",
    ["/bogus", "/phone_lookup", "/phone_lookup/", "/phone_lookup/1/2", "/data/phones/x?limit=1"],
)
def test_an_unknown_path_is_the_providers_illegal_argument(path: str) -> None:
    uri = f"content://com.android.contacts{path}"
    rc, out, err = run(Phone(sdk=34), "query", "--uri", uri)
    assert (rc, out) == (0, "")
    assert err == (
        "Error while accessing provider:com.android.contacts\n"
        f"java.lang.IllegalArgumentException: URI: {uri}, {SHELL}\n"
    )
    assert contacts.parse_lookup(out + err) is None


def test_an_unknown_column_is_invalid_column() -> None:
    phone = Phone(sdk=34)
    for uri, column in (
        ("content://com.android.contacts/data/phones", "number"),  # Phone.NUMBER is data1 here
        ("content://com.android.contacts/phone_lookup/123", "data1"),
    ):
        _, out, err = run(phone, "query", "--uri", uri, "--projection", f"display_name:{column}")
        assert out == ""
        assert err.endswith(f"java.lang.IllegalArgumentException: Invalid column {column}\n")


def test_insert_is_not_simulated_for_contacts() -> None:
    uri = "content://com.android.contacts/raw_contacts"
    rc, out, err = run(Phone(sdk=34), "insert", "--uri", uri, "--bind", "account_name:s:x")
    assert (rc, out) == (0, "")
    assert err.startswith("Error while accessing provider:com.android.contacts\n")
    assert "UnsupportedOperationException" in err


def test_sms_and_unknown_authorities_answer_as_before() -> None:
    phone = Phone(sdk=34)
    phone.sms.insert("sent", "+15551234567", "hello")
    _, out, _ = run(phone, "query", "--uri", "content://sms/sent", "--projection", "address:body")
    assert out == "Row: 0 address=+15551234567, body=hello\n"
    _, _, err = run(phone, "query", "--uri", "content://sms/nowhere")
    assert err.endswith("java.lang.IllegalArgumentException: Unknown URL content://sms/nowhere\n")
    _, _, err = run(phone, "query", "--uri", "content://com.example.nope/x")
    assert err == (
        "Error while accessing provider:com.example.nope\n"
        "java.lang.IllegalStateException: Could not find provider: com.example.nope\n"
    )


def _address_book(scenario: str) -> tuple[str, contacts.PhoneBook]:
    """A phone set up by the ``contact:`` items of ``scenario``: the phones query's output
    and what phoned's parser reads from it (something, asserted)."""
    phone = Phone(sdk=34)
    scenarios.apply(phone, scenario)
    text = run_argv(phone, contacts.phones_query())
    parsed = contacts.parse_phones(text)
    assert parsed is not None
    return text, parsed


def test_contact_scenario_fills_the_address_book() -> None:
    _, parsed = _address_book(
        "contact:Анна Иванова=+79161234567,contact:김민준=010-1234-5678:1,"
        "contact:Анна Иванова=84957654321:3,contact:a=b=5550100"
    )
    assert [(c.display_name, [(e.number, e.type) for e in c.numbers]) for c in parsed.contacts] == [
        ("Анна Иванова", [("+79161234567", 2), ("84957654321", 3)]),
        ("김민준", [("010-1234-5678", 1)]),
        ("a=b", [("5550100", 2)]),
    ]


def test_namesakes_kept_apart_are_two_contacts_with_their_own_numbers_and_types() -> None:
    text, parsed = _address_book(
        "contact:Ivan Petrov=+79160000001:mobile,contact:Ivan Petrov=+74950000001:HOME,"
        "contact:Ivan Petrov=+79160000002:work:new,contact:Ivan Petrov=+79160000009:17"
    )
    assert [
        (c.contact_id, [(e.number, e.type_name) for e in c.numbers]) for c in parsed.contacts
    ] == [
        (1, [("+79160000001", "mobile"), ("+74950000001", "home")]),
        (2, [("+79160000002", "work"), ("+79160000009", "work_mobile")]),
    ]
    # real Android prints each phone row with the contact's display name, one row per line
    assert text.count("display_name=Ivan Petrov") == 4
    assert [m.contact.contact_id for m in contacts.matches_for("ivan petrov", parsed.contacts)] == [
        1, 2,
    ]  # fmt: skip


@pytest.mark.parametrize(
    "value",
    ["Ann", "=5550100", "Ann=", "Ann=5550100:cell", "Ann=5550100:mobile:work", " =1"],
)
def test_a_malformed_contact_scenario_is_named(value: str) -> None:
    with pytest.raises(ValueError, match="scenario contact"):
        scenarios.apply(Phone(sdk=34), f"contact:{value}")
