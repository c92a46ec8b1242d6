"""notifications.list: ``dumpsys notification --noredact`` through the real adb server, parsed
in each simulated release's layout; titles and texts in clear in the value only, never in the
evidence."""

from __future__ import annotations

import json

import pytest
from phoned.device.actions import Status
from phoned.device.methods.notifications import DUMPSYS_NOTIFICATION
from phoned.sim.android.notification import NotificationService

pytestmark = pytest.mark.integration

SEEDED = (
    "notification:org.telegram.messenger=Анна|Привет 👋 как дела?,"
    "notification:com.kakao.talk=김민준|안녕하세요 🙂,"
    "notification:org.telegram.messenger=Борис|Созвон в 15:00"
)


@pytest.mark.phone(SEEDED)
@pytest.mark.sim_only
def test_every_release_lists_the_posted_notifications_newest_first(dut) -> None:
    out = dut.run("notifications.list", {})
    assert out.status is Status.MET, out.message
    listed = [(n["package"], n["title"], n["content_text"]) for n in out.value["notifications"]]
    assert listed == [
        ("org.telegram.messenger", "Борис", "Созвон в 15:00"),
        ("com.kakao.talk", "김민준", "안녕하세요 🙂"),
        ("org.telegram.messenger", "Анна", "Привет 👋 как дела?"),
    ]
    newest = out.value["notifications"][0]
    assert newest["key"] == "0|org.telegram.messenger|2|null|10100"
    assert newest["posted_at"].endswith("+00:00") and newest["redacted"] is False
    assert out.value["total"] == 3
    assert dut.execs() == [DUMPSYS_NOTIFICATION]


@pytest.mark.phone(SEEDED)
@pytest.mark.sdks(28, 34)
@pytest.mark.sim_only
def test_package_filter_and_limit(dut) -> None:
    out = dut.run("notifications.list", {"package": "org.telegram.messenger", "limit": 1})
    assert out.status is Status.MET
    [only] = out.value["notifications"]
    assert (only["title"], out.value["total"]) == ("Борис", 2)
    none = dut.run("notifications.list", {"package": "com.example.none"})
    assert none.status is Status.MET and none.value == {"notifications": [], "total": 0}


@pytest.mark.sdks(30, 35)
@pytest.mark.sim_only
def test_a_notification_posted_while_the_phone_runs_and_then_cancelled(dut) -> None:
    assert dut.run("notifications.list", {}).value["notifications"] == []
    model = dut.phone.service(NotificationService)
    posted = model.post("com.example.notes", "Заметка (1)", "line one\nline two", tag="n-1")
    [found] = dut.run("notifications.list", {}).value["notifications"]
    assert (found["title"], found["content_text"]) == ("Заметка (1)", "line one\nline two")
    assert found["key"] == posted.key and found["posted_ms"] == posted.post_time_ms
    model.cancel(posted.key)
    assert dut.run("notifications.list", {}).value["notifications"] == []


@pytest.mark.phone(SEEDED)
@pytest.mark.sdks(33)
@pytest.mark.sim_only
def test_the_evidence_holds_counts_never_a_title_or_text(dut) -> None:
    out = dut.run("notifications.list", {})
    evidence = json.dumps(out.evidence.to_json(), ensure_ascii=False)
    for word in ("Анна", "Борис", "김민준", "Привет", "안녕하세요", "Созвон"):
        assert word not in evidence
    [command] = out.evidence.commands
    assert command.stdout_excerpt == ""
    assert out.evidence.observations[0].value == {
        "posted": 3, "matching": 3, "shown": 3, "redacted": 0,
    }  # fmt: skip
    stored = json.dumps(out.to_json(), ensure_ascii=False)  # the owner's value stays clear
    assert "Созвон в 15:00" in stored and "김민준" in stored


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.parametrize(
    "params,field",
    [({"package": "not a package; reboot"}, "package"), ({"limit": 0}, "limit"),
     ({"limit": 1000}, "limit"), ({"other": 1}, "other")],
)  # fmt: skip
def test_bad_params_are_refused_naming_the_field_and_nothing_is_sent(dut, params, field) -> None:
    out = dut.run("notifications.list", params)
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == field
    assert dut.execs() == []


@pytest.mark.sdks(35)
@pytest.mark.sim_only
def test_the_default_dump_is_redacted_and_noredact_reveals(dut) -> None:
    dut.phone.service(NotificationService).post("com.example.chat", "Анна", "секрет")
    plain = dut.device.read(("dumpsys", "notification")).stdout
    assert "android.title=String [length=4]" in plain and "секрет" not in plain
    revealed = dut.device.read(DUMPSYS_NOTIFICATION).stdout
    assert "android.title=String (Анна)" in revealed


@pytest.mark.phone(SEEDED)
def test_any_phone_lists_records_whose_keys_name_their_package(dut) -> None:
    """Runs on the real phone too (``device`` variant): whatever it shows, each notification's
    key is ``user|package|id|tag|uid`` of its own package, newest first."""
    out = dut.run("notifications.list", {"limit": 200})
    assert out.status is Status.MET, out.message
    shown = out.value["notifications"]
    if dut.sim is not None:
        assert len(shown) == 3
    for n in shown:
        parts = n["key"].split("|")
        assert parts[1] == n["package"] and parts[-1].isdigit(), n["key"]
        assert parts[0].lstrip("-").isdigit() and parts[2].lstrip("-").isdigit(), n["key"]
    times = [n["posted_ms"] or 0 for n in shown]
    assert times == sorted(times, reverse=True)
