"""contacts.find: the phone book read once through ``content query``, the name matched on the
daemon (never sent to the phone), numbers with their Phone.TYPE_* names."""

from __future__ import annotations

import pytest

from phoned.device.actions import Status
from phoned.device.contacts import PHONES_URI

pytestmark = pytest.mark.integration

BOOK = "contact:Анна Иванова=+79161234567:2,contact:Анна Иванова=+74951234567:3,contact:김민준=+821012345678:1"


def _content_queries(dut) -> list[tuple[str, ...]]:
    return [a for a in dut.execs() if a[:2] == ("content", "query")]


@pytest.mark.phone(BOOK)
@pytest.mark.sim_only
def test_cyrillic_name_finds_the_contact_with_numbers_and_types(dut) -> None:
    out = dut.run("contacts.find", {"name": "анна"})
    assert out.status is Status.MET, out.message
    assert out.value["complete"] is True
    [match] = out.value["matches"]
    assert match["display_name"] == "Анна Иванова" and match["match"] == "prefix"
    assert [(n["number"], n["type_name"]) for n in match["numbers"]] == [
        ("+79161234567", "mobile"),
        ("+74951234567", "work"),
    ]
    [query] = _content_queries(dut)
    assert query[3].startswith(PHONES_URI + "?limit=")
    assert not any("анна" in a.casefold() for argv in dut.execs() for a in argv)


@pytest.mark.phone(BOOK)
@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_hangul_name_and_no_match(dut) -> None:
    out = dut.run("contacts.find", {"name": "김민준"})
    assert out.status is Status.MET
    [match] = out.value["matches"]
    assert match["match"] == "exact" and match["numbers"][0]["type_name"] == "home"
    none = dut.run("contacts.find", {"name": "Nobody"})
    assert none.status is Status.MET and none.value["matches"] == []


@pytest.mark.phone(BOOK)
@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_the_evidence_holds_no_name_and_no_number(dut) -> None:
    out = dut.run("contacts.find", {"name": "Анна"})
    text = str(out.evidence.to_json())
    assert "Анна" not in text and "1234567" not in text
    assert out.evidence.observations[0].value["matches"] == 1


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.parametrize("name", ["x' OR 1=1 --", "$(reboot); `id` | rm -rf /"])
def test_a_name_with_sql_or_shell_text_is_data_only(dut, name) -> None:
    out = dut.run("contacts.find", {"name": name})
    assert out.status is Status.MET and out.value["matches"] == []
    assert not any(name in a for argv in dut.execs() for a in argv)


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.parametrize("name", ["", "   ", "a" * 101, "nul\x00"])
def test_a_bad_name_is_refused_naming_the_field_and_nothing_is_sent(dut, name) -> None:
    out = dut.run("contacts.find", {"name": name})
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == "name"
    assert dut.execs() == []
