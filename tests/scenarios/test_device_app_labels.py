"""The label of the app in front (issue #27 item 5): the title of its window in the
accessibility window list (``dumpsys accessibility``), in the phone's language; listed by
``app.list`` for that app (the others have none, and the value says why). Through the real
adb server and the simulated phone; the window list exists only while the uiautomator2
session tracks windows."""

from __future__ import annotations

import pytest

from phoned.device.actions import Status

pytestmark = [pytest.mark.integration, pytest.mark.sim_only]

NOTES = "com.example.notes"
SETTINGS = "com.android.settings"


def _warm(dut) -> None:
    """Start the uiautomator2 session (a snapshot uses it), as a daemon's warm session is."""
    assert dut.run("screen.snapshot", {}).status is Status.MET


def _listed(dut) -> tuple[dict[str, dict[str, object]], dict[str, object], list[str]]:
    out = dut.run("app.list", {})
    assert out.status is Status.MET, out.message
    apps = {a["package"]: a for a in out.value["apps"]}
    return apps, out.value["front"], out.evidence.notes


@pytest.mark.phone("locale:ru-RU")
@pytest.mark.sdks(28, 30, 34, 35)
def test_the_app_in_front_is_labelled_in_the_phone_s_language(dut) -> None:
    _warm(dut)
    assert dut.run("app.open", {"package": SETTINGS}).status is Status.MET
    apps, front, _ = _listed(dut)
    assert front == {"package": SETTINGS, "activity": front["activity"], "label": "Настройки"}
    assert apps[SETTINGS]["label"] == "Настройки"
    assert apps[NOTES]["label"] is None  # not in front: no label can be read for it
    assert ("dumpsys", "accessibility") in dut.execs()

    assert dut.run("app.open", {"package": NOTES}).status is Status.MET
    apps, front, _ = _listed(dut)
    assert front["label"] == "Заметки" and apps[NOTES]["label"] == "Заметки"
    assert apps[SETTINGS]["label"] is None


@pytest.mark.phone("locale:ko-KR")
@pytest.mark.sdks(34)
def test_a_korean_phone_shows_the_korean_label(dut) -> None:
    _warm(dut)
    assert dut.run("app.open", {"package": SETTINGS}).status is Status.MET
    assert _listed(dut)[1]["label"] == "설정"


@pytest.mark.sdks(33)
def test_an_english_phone_and_no_session_means_no_window_list(dut) -> None:
    _, front, notes = _listed(dut)  # nothing tracks windows yet: no label, and why
    assert front["label"] is None and front["package"] is not None
    assert any("no accessibility client tracks" in n for n in notes)
    _warm(dut)
    assert dut.run("app.open", {"package": SETTINGS}).status is Status.MET
    assert _listed(dut)[1]["label"] == "Settings"


@pytest.mark.sdks(34)
def test_a_locked_phone_has_no_app_window_to_read(dut) -> None:
    _warm(dut)
    dut.phone.ui.lock()
    _, front, notes = _listed(dut)
    assert front["label"] is None
    assert any("no active application window" in n for n in notes)
