"""The UI tier (ui.find/tap/type/swipe/scroll/key) on the simulated third-party notes app,
through the real adb server and the real uiautomator2 client: each changing step completes
only when its expectation is observed, a selector matching several waits for a choice, and
the protected screens are refused with nothing tapped."""

from __future__ import annotations

from typing import Any

import pytest
from phoned.device.actions import Status
from phoned.sim.android.notification import NotificationService

pytestmark = [pytest.mark.integration, pytest.mark.sim_only, pytest.mark.sdks(28, 34)]

NOTES = "com.example.notes"
LAUNCHER = "com.google.android.apps.nexuslauncher"


def rid(name: str) -> dict[str, Any]:
    return {"resource_id": f"{NOTES}:id/{name}"}


def _taps(dut) -> list[tuple[str, ...]]:
    return [e.argv for e in dut.phone.log.entries("click")]


def test_find_lists_the_matching_elements_with_their_flags(notes) -> None:
    out = notes.run("ui.find", {"selector": rid("save_button"), "package": NOTES})
    assert out.status is Status.MET, out.message
    (found,) = out.value["elements"]
    assert found["resource_id"] == f"{NOTES}:id/save_button" and found["clickable"] is True
    assert found["enabled"] is True and found["bounds"] == [60, 680, 520, 820]
    missing = notes.run("ui.find", {"selector": rid("nothing_here")})
    assert missing.status is Status.NOT_MET and missing.value["count"] == 0
    assert any(e["resource_id"] == f"{NOTES}:id/save_button" for e in missing.detail["screen"])


def test_tap_completes_only_when_its_expectation_is_observed(notes) -> None:
    out = notes.run("ui.tap", {"package": NOTES, "selector": rid("open_list_button"),
                               "expect": {"appears": rid("notes_list")}})  # fmt: skip
    assert out.status is Status.MET, out.message
    assert len(_taps(notes)) == 1
    assert notes.phone.ui.top().cls == f"{NOTES}.ListActivity"


def test_a_tap_whose_expectation_is_not_met_fails_with_the_screen(notes) -> None:
    out = notes.run("ui.tap", {"package": NOTES, "selector": {"text": "#1"},
                               "expect": {"appears": rid("notes_list")}},
                    settle_timeout=0.3)  # fmt: skip
    assert out.status is Status.NOT_MET
    assert out.evidence.target["observed"] == {"appears": 0}
    assert {"ui_after_hierarchy", "ui_after_screenshot"} <= set(out.evidence.artifacts)
    assert any(e["resource_id"] == f"{NOTES}:id/tag_text" and e["text"] == "#1"
               for e in out.detail["screen"])  # fmt: skip


def test_type_cyrillic_hangul_and_emoji_reads_back_exactly(notes) -> None:
    text = "Привет, 세계 👋🏽 done."
    out = notes.run("ui.type", {"package": NOTES, "selector": rid("note_text"), "text": text})
    assert out.status is Status.MET, out.message
    state = notes.phone.ui.top().state
    assert state["draft"] == text
    assert text not in str(out.to_json())  # the typed text is redacted in evidence
    assert not any(a[:2] == ("input", "text") for a in notes.execs())


@pytest.mark.parametrize("kept", [True, False], ids=["screen-kept", "nothing-kept"])
def test_a_field_that_does_not_take_the_text_fails_with_the_screen(notes, kept: bool) -> None:
    """A label is no field: setText leaves it as it was (``UiObject.setText`` is false) and
    the text never reads back. Read by ``getText`` alone (nothing kept) or on the dumps
    (the screen kept), the miss is reported with what the screen showed."""
    params = {"package": NOTES, "selector": rid("tag_text"), "text": "not a field"}
    folder = {} if kept else {"artifacts_dir": None}
    out = notes.run("ui.type", params, settle_timeout=0.3, **folder)
    assert out.status is Status.NOT_MET, out.message
    assert out.evidence.target["observed"] == {"text": ""}
    assert any(e["resource_id"] == f"{NOTES}:id/tag_text" and e["text"] == ""
               for e in out.detail["screen"])  # fmt: skip
    assert ("ui_after_screenshot" in out.evidence.artifacts) is kept
    u2 = [
        c["argv"][1] for c in out.evidence.to_json()["commands"] if c["argv"][0] == "uiautomator2"
    ]
    assert ("get_text" in u2) is not kept  # nothing kept: read by getText, then one dump


def test_input_text_cannot_type_non_ascii_on_the_sim(notes) -> None:
    notes.device.adb.shell(["input", "text", "Привет"])
    assert notes.phone.ui.top().state.get("draft", "") == ""


def test_scroll_until_an_off_screen_item_shows(notes) -> None:
    notes.run("ui.tap", {"package": NOTES, "selector": rid("open_list_button"),
                         "expect": {"appears": rid("notes_list")}})  # fmt: skip
    before = notes.run("ui.find", {"selector": {"text": "Note 25"}})
    assert before.status is Status.NOT_MET
    out = notes.run("ui.scroll", {"package": NOTES, "until": {"text": "Note 25"},
                                  "within": rid("notes_list")})  # fmt: skip
    assert out.status is Status.MET, out.message
    assert out.value["swipes"] >= 1
    assert notes.phone.log.entries("swipe")


def test_swipe_with_an_expectation(notes) -> None:
    notes.run("ui.tap", {"package": NOTES, "selector": rid("open_list_button"),
                         "expect": {"appears": rid("notes_list")}})  # fmt: skip
    out = notes.run("ui.swipe", {"package": NOTES, "direction": "up",
                                 "selector": rid("notes_list"),
                                 "expect": {"disappears": {"text": "Note 1"}}})  # fmt: skip
    assert out.status is Status.MET, out.message


def test_key_back_and_home(notes) -> None:
    notes.run("ui.tap", {"package": NOTES, "selector": rid("open_list_button"),
                         "expect": {"appears": rid("notes_list")}})  # fmt: skip
    back = notes.run("ui.key", {"package": NOTES, "key": "back",
                                "expect": {"appears": rid("note_text")}})  # fmt: skip
    assert back.status is Status.MET, back.message
    home = notes.run("ui.key", {"package": NOTES, "key": "home",
                                "expect": {"package": LAUNCHER}})  # fmt: skip
    assert home.status is Status.MET, home.message


def test_several_matches_wait_for_a_choice_and_an_index_completes(notes) -> None:
    params = {"package": NOTES, "selector": rid("tag_button"),
              "expect": {"appears": {"text": "#2", **rid("tag_text")}}}  # fmt: skip
    out = notes.run("ui.tap", params)
    assert out.status is Status.WAITING and out.detail["choice"] == "selector"
    assert [c["text"] for c in out.detail["candidates"]] == ["#1", "#2"]
    assert _taps(notes) == []
    params["selector"] = {**rid("tag_button"), "index": 1}
    out = notes.run("ui.tap", params)
    assert out.status is Status.MET, out.message


def test_save_posts_a_notification(notes) -> None:
    notes.run("ui.type", {"package": NOTES, "selector": rid("note_text"), "text": "Молоко"})
    saved = {"appears": {**rid("saved_count"), "text": "1"}}
    before = notes.run("ui.find", {"selector": saved["appears"], "package": NOTES})
    assert before.status is Status.NOT_MET  # the expectation is not met before the tap
    out = notes.run("ui.tap", {"package": NOTES, "selector": rid("save_button"), "expect": saved})
    assert out.status is Status.MET, out.message
    (posted,) = notes.phone.service(NotificationService).posted
    assert (posted.package, posted.text) == (NOTES, "Молоко")


def test_stale_app_in_front_is_refused(notes) -> None:
    notes.phone.ui.go_home()
    out = notes.run("ui.tap", {"package": NOTES, "selector": rid("save_button"),
                               "expect": {"appears": rid("note_text")}})  # fmt: skip
    assert out.status is Status.UNSUPPORTED and out.detail["stale"] is True
    assert _taps(notes) == []


def test_the_lock_screen_is_refused(notes) -> None:
    notes.phone.ui.lock()
    out = notes.run("ui.tap", {"package": NOTES, "selector": rid("save_button"),
                               "expect": {"appears": rid("note_text")}})  # fmt: skip
    assert out.status is Status.UNSUPPORTED and "lock screen" in out.message
    assert _taps(notes) == []


@pytest.mark.phone("permission-dialog:com.example.notes")
def test_a_permission_dialog_is_refused(dut) -> None:
    dut.run("app.open", {"package": NOTES})
    dut.phone.log.clear()
    out = dut.run("ui.tap", {"package": NOTES, "selector": rid("save_button"),
                             "expect": {"appears": rid("note_text")}})  # fmt: skip
    assert out.status is Status.UNSUPPORTED and "permission" in out.message
    assert _taps(dut) == []


def test_approval_is_asked_with_a_preview_and_an_element_screenshot(notes) -> None:
    params = {"package": NOTES, "selector": rid("note_text"), "text": "안녕하세요"}
    asked = notes.run("ui.type", params, approval_required=True)
    assert asked.status is Status.NEEDS_APPROVAL
    preview = asked.detail["preview"]
    assert preview["data"]["element"]["resource_id"] == f"{NOTES}:id/note_text"
    assert preview["data"]["text"] == "안녕하세요" and preview["target"] == NOTES
    assert "안녕하세요" not in str(asked.to_json())
    assert "ui_element_screenshot" in asked.evidence.artifacts
    assert notes.phone.ui.top().state.get("draft", "") == ""
    done = notes.run("ui.type", params, approval_required=True,
                     approval_digest=asked.detail["preview_digest"])  # fmt: skip
    assert done.status is Status.MET, done.message


def test_the_play_store_purchase_flow_is_refused(notes) -> None:
    from phoned.sim.ui.screens import ActivityRecord

    billing = "com.google.android.finsky.billing.acquire.SheetUiBuilderHostActivity"
    notes.phone.ui.stack.append(ActivityRecord("com.android.vending", billing))
    out = notes.run("ui.tap", {"package": "com.android.vending", "selector": {"text": "Buy"},
                               "expect": {"package": NOTES}})  # fmt: skip
    assert out.status is Status.UNSUPPORTED and "purchase flow" in out.message
    assert _taps(notes) == []


def test_an_interrupted_type_is_reconciled_by_reading_the_field(notes) -> None:
    from phoned.device.actions import reconcile

    params = {"package": NOTES, "selector": rid("note_text"), "text": "Ёлка 🎄."}
    assert reconcile("ui.type", params, notes.ctx("ui.type")) == "did_not_happen"
    notes.run("ui.type", params)
    assert reconcile("ui.type", params, notes.ctx("ui.type")) == "happened"


@pytest.mark.phone("locale:ko-KR")
def test_the_app_speaks_the_phones_language_and_ids_still_select(dut) -> None:
    assert dut.run("app.open", {"package": NOTES}).status is Status.MET
    out = dut.run("ui.find", {"selector": {"text": "메모"}, "package": NOTES})
    assert out.status is Status.MET, out.message
    save = dut.run("ui.find", {"selector": rid("save_button")})
    assert save.status is Status.MET and save.value["count"] == 1


def test_a_selector_matching_nothing_fails_with_what_the_screen_showed(notes) -> None:
    out = notes.run("ui.tap", {"package": NOTES, "selector": rid("no_such_button"),
                               "expect": {"appears": rid("notes_list")}})  # fmt: skip
    assert out.status is Status.NOT_MET and "nothing was done" in out.message
    assert {"ui_before_hierarchy", "ui_before_screenshot"} <= set(out.evidence.artifacts)
    assert any(e["resource_id"] == f"{NOTES}:id/save_button" for e in out.detail["screen"])
    assert _taps(notes) == []


def test_scroll_stops_at_the_end_of_the_list(notes) -> None:
    notes.run("ui.tap", {"package": NOTES, "selector": rid("open_list_button"),
                         "expect": {"appears": rid("notes_list")}})  # fmt: skip
    out = notes.run("ui.scroll", {"package": NOTES, "until": {"text": "Note 99"},
                                  "within": rid("notes_list"), "max_swipes": 10})  # fmt: skip
    assert out.status is Status.NOT_MET and "the end" in out.message
    assert out.value["swipes"] < 10
    assert any(e["text"] == "Note 30" for e in out.detail["screen"])
