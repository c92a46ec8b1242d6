"""sms.draft / sms.send to a contact's name (issue #26 item 2): the name is resolved on the
daemon from one read of the phone book, never sent to the phone; one number goes on, several
wait for a choice of ``to``, none is ``invalid_params`` naming ``to``."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import assert_refused_running_nothing
from phoned.device.actions import Status
from phoned.device.contacts import PHONES_URI

pytestmark = pytest.mark.integration

BODY = "See you at 8"
IVANS = (
    "contact:Ivan Petrov=+79160000001:mobile,"
    "contact:Ivan Petrov=+79160000002:work:new,"
    "contact:Ivana Sidorova=+79160000003:mobile"
)
ANNA = "contact:Анна Иванова=+79161234567:mobile,contact:Анна Иванова=+74951234567:work"
HANGUL = "contact:김민준=+821012345678:mobile"
ODD = "contact:O'Brien $(reboot); `id`=+15550001111:mobile"

# params either SMS method refuses, and the field it names
BAD_NAMES = [
    ({"to": "Ivan\x00", "body": "x"}, "to"),
    ({"to": "Iv\ud800an", "body": "x"}, "to"),
    ({"to": "   ", "body": "x"}, "to"),
    ({"to": "I" * 101, "body": "x"}, "to"),
    ({"to": "Ivan", "contact": "Ivan Petrov", "body": "x"}, "to"),
    ({"to": "+79160000002", "contact": "a\nb", "body": "x"}, "contact"),
]


def _content_queries(dut) -> list[tuple[str, ...]]:
    return [a for a in dut.execs() if a[:2] == ("content", "query")]


def _am_starts(dut) -> list[tuple[str, ...]]:
    return [a for a in dut.execs() if a[:2] == ("am", "start")]


def _never_on_the_phone(dut, *texts: str) -> None:
    """No argv element the phone ran holds any of ``texts`` (case-folded)."""
    ran = [e.casefold() for argv in dut.execs() for e in argv]
    assert not [t for t in texts if any(t.casefold() in e for e in ran)], ran


@pytest.mark.phone(HANGUL)
@pytest.mark.sim_only
def test_one_match_with_one_number_drafts_to_that_number(dut) -> None:
    out = dut.run("sms.draft", {"to": "김민준", "body": BODY})
    assert out.status is Status.MET, out.message
    assert out.detail["recipient"]["contact"] == "김민준"
    assert out.detail["recipient"]["type"] == "mobile"
    [am] = _am_starts(dut)
    assert "smsto:+821012345678" in am
    [query] = _content_queries(dut)[:1]
    assert query[3].startswith(PHONES_URI + "?limit=")
    _never_on_the_phone(dut, "김민준")
    stored = str(out.to_json())
    assert "+821012345678" not in stored and "<number •••5678>" in stored


def _waits_for_a_choice(dut: Any, method: str, to: str) -> Any:
    """``method`` to the name ``to``: its outcome, asserted to wait for a choice."""
    out = dut.run(method, {"to": to, "body": BODY})
    assert out.status is Status.WAITING, out.message
    return out


@pytest.mark.phone(IVANS)
@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_an_ambiguous_name_waits_for_a_choice_and_drafts_nothing(dut) -> None:
    out = _waits_for_a_choice(dut, "sms.send", "Ivan Petrov")
    assert out.detail["choice"] == "to"
    found = [(c["display_name"], c["number"], c["type_name"]) for c in out.detail["candidates"]]
    assert found == [
        ("Ivan Petrov", "+79160000001", "mobile"),
        ("Ivan Petrov", "+79160000002", "work"),
    ]
    assert len({c["contact_id"] for c in out.detail["candidates"]}) == 2
    assert _am_starts(dut) == [] and dut.phone.sms.rows == []
    _never_on_the_phone(dut, "Ivan")


@pytest.mark.phone(ANNA)
@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_one_contact_with_several_numbers_waits_for_a_choice(dut) -> None:
    out = _waits_for_a_choice(dut, "sms.draft", "анна иванова")
    assert [c["type_name"] for c in out.detail["candidates"]] == ["mobile", "work"]
    assert _am_starts(dut) == []
    _never_on_the_phone(dut, "анна")


@pytest.mark.phone(IVANS)
@pytest.mark.sim_only
def test_no_match_fails_invalid_params_naming_to_and_the_name(dut) -> None:
    out = dut.run("sms.send", {"to": "Пётр", "body": BODY})
    assert out.status is Status.INVALID_PARAMS
    assert out.detail["field"] == "to" and "Пётр" in out.message
    assert _am_starts(dut) == []


@pytest.mark.phone(IVANS)
@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_the_chosen_number_with_its_contact_is_checked_and_shown(dut) -> None:
    params = {"to": "+79160000002", "contact": "Ivan Petrov", "body": BODY}
    out = dut.run("sms.send", params)
    assert out.status is Status.NEEDS_APPROVAL, out.message
    shown = out.detail["preview"]
    assert shown["target"] == "+79160000002"
    assert shown["data"]["contact"] == "Ivan Petrov" and shown["data"]["number_type"] == "work"
    wrong = dut.run("sms.send", {**params, "contact": "Ivana Sidorova"})
    assert wrong.status is Status.INVALID_PARAMS and wrong.detail["field"] == "contact"


@pytest.mark.phone(IVANS)
@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_a_prefix_with_one_number_goes_on_to_an_approval_naming_the_contact(dut) -> None:
    first = dut.run("sms.send", {"to": "ivana", "body": BODY})
    assert first.status is Status.NEEDS_APPROVAL, first.message
    shown = first.detail["preview"]
    assert shown["data"]["contact"] == "Ivana Sidorova"
    assert shown["target"] == "<number •••0003>"  # the book gave it: kept redacted
    sent = dut.run(
        "sms.send", {"to": "ivana", "body": BODY}, approval_digest=first.detail["preview_digest"]
    )
    assert sent.status is Status.MET, sent.message
    [row] = [r for r in dut.phone.sms.rows if r["type"] == 2]
    assert row["address"] == "+79160000003" and row["body"] == BODY


@pytest.mark.phone(ODD)
@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_a_name_with_shell_metacharacters_never_reaches_the_phone(dut) -> None:
    name = "O'Brien $(reboot); `id`"
    out = dut.run("sms.draft", {"to": name, "body": BODY})
    assert out.status is Status.MET, out.message
    _never_on_the_phone(dut, "brien", "reboot", "`id`")
    assert not [a for a in dut.execs() if a[:1] in (("reboot",), ("id",))]
    [am] = _am_starts(dut)
    assert "smsto:+15550001111" in am


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.parametrize(("params", "field"), BAD_NAMES)
def test_bad_names_are_refused_and_nothing_runs(dut, params, field) -> None:
    assert_refused_running_nothing(dut, ("sms.draft", "sms.send"), params, field)


@pytest.mark.phone(HANGUL)
@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_a_draft_the_owner_wants_approved_shows_its_preview_before_any_effect(dut) -> None:
    first = dut.run("sms.draft", {"to": "김민준", "body": BODY}, approval_required=True)
    assert first.status is Status.NEEDS_APPROVAL, first.message
    shown = first.detail["preview"]
    assert (shown["effect"], shown["target"]) == ("sms.draft", "<number •••5678>")
    assert shown["data"]["contact"] == "김민준" and shown["data"]["text"] == BODY
    assert _am_starts(dut) == []
    assert not [a for a in dut.execs() if a[:2] == ("input", "keyevent")]
    done = dut.run(
        "sms.draft", {"to": "김민준", "body": BODY}, approval_required=True,
        approval_digest=first.detail["preview_digest"],
    )  # fmt: skip
    assert done.status is Status.MET, done.message
    assert len(_am_starts(dut)) == 1
    plain = dut.run("sms.draft", {"to": "+15551234567", "body": BODY}, approval_required=True)
    assert plain.status is Status.NEEDS_APPROVAL
    assert plain.detail["preview"]["target"] == "+15551234567"
    assert "contact" not in plain.detail["preview"]["data"]
