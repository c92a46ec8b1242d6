"""app.open / app.close / app.list: launched through argv, completed only when the app is
observed in front (before and after in the evidence); a package that is not installed, is
disabled, or an activity that is not exported fails with what the phone said."""

from __future__ import annotations

import pytest
from phoned.device.actions import Status, reconcile

pytestmark = pytest.mark.integration

NOTES = "com.example.notes"
SETTINGS = "com.android.settings"
LAUNCHER = "com.google.android.apps.nexuslauncher"


def _fronts(out) -> list[tuple[str, object]]:
    return [
        (o.phase, (o.value or {}).get("package")) for o in out.evidence.observations
        if o.name == "foreground"
    ]  # fmt: skip


def _starts(dut) -> list[tuple[str, ...]]:
    return [a for a in dut.execs() if a[:2] == ("am", "start")]


def test_open_settings_is_observed_in_front(dut) -> None:
    out = dut.run("app.open", {"package": SETTINGS})
    assert out.status is Status.MET, out.message
    fronts = _fronts(out)
    assert fronts[0][0] == "before" and fronts[-1] == ("after", SETTINGS)
    assert out.detail["after"] == SETTINGS


@pytest.mark.sim_only
def test_open_a_third_party_app_through_its_launcher_intent(dut) -> None:
    out = dut.run("app.open", {"package": NOTES})
    assert out.status is Status.MET, out.message
    assert out.detail == {"before": LAUNCHER, "after": NOTES}
    assert _starts(dut) == [
        ("am", "start", "-W", "-a", "android.intent.action.MAIN",
         "-c", "android.intent.category.LAUNCHER", "-p", NOTES)
    ]  # fmt: skip
    again = dut.run("app.open", {"package": NOTES})
    assert (
        again.status is Status.MET and "already in front: no command sent" in again.evidence.notes
    )
    assert reconcile("app.open", {"package": NOTES}, dut.ctx("app.open")) == "happened"


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_open_at_an_activity_and_at_a_deep_link(dut) -> None:
    out = dut.run("app.open", {"package": NOTES, "activity": ".MainActivity"})
    assert out.status is Status.MET, out.message
    assert ("am", "start", "-W", "-n", f"{NOTES}/.MainActivity") in dut.execs()
    dut.phone.ui.go_home()
    url = "https://notes.example.com/n/42?x=1&y=$(id)"
    out = dut.run("app.open", {"package": NOTES, "url": url})
    assert out.status is Status.MET, out.message
    view = ("am", "start", "-W", "-a", "android.intent.action.VIEW", "-d", url, "-p", NOTES)
    assert view in dut.execs()


@pytest.mark.sim_only
def test_a_package_that_is_not_installed_fails_before_anything_starts(dut) -> None:
    out = dut.run("app.open", {"package": "com.example.missing"})
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == "package"
    assert "com.example.missing is not installed" in out.message
    assert _starts(dut) == []


@pytest.mark.phone("app-disabled:com.example.notes")
@pytest.mark.sim_only
def test_a_disabled_app_fails_naming_it(dut) -> None:
    out = dut.run("app.open", {"package": NOTES})
    assert out.status is Status.INVALID_PARAMS and "disabled" in out.message
    assert ("pm", "list", "packages", "-d", NOTES) in dut.execs()
    assert _starts(dut) == []
    listed = {a["package"] for a in dut.run("app.list", {}).value["apps"]}
    assert NOTES not in listed


@pytest.mark.sdks(28, 30, 33, 34)
@pytest.mark.sim_only
def test_an_activity_that_is_not_exported_fails_with_the_denial(dut) -> None:
    out = dut.run("app.open", {"package": NOTES, "activity": ".internal.DebugActivity"})
    assert out.status is Status.NOT_MET
    assert out.detail["phone_said"].startswith("Security exception: Permission Denial")
    assert "not exported from uid 10241" in out.detail["phone_said"]
    assert out.detail["exit_code"] == 255 and out.detail["after"] == LAUNCHER


@pytest.mark.sdks(30, 33, 34)
@pytest.mark.sim_only
def test_a_missing_activity_fails_with_am_start_s_error_whatever_its_exit_code(dut) -> None:
    """Through API 32 ``am start`` exits 0 on a start error; from 33 it exits 1: the
    Error line decides either way."""
    out = dut.run("app.open", {"package": SETTINGS, "activity": ".NoSuchActivity"})
    assert out.status is Status.NOT_MET
    assert out.detail["phone_said"] == (
        f"Error: Activity class {{{SETTINGS}/{SETTINGS}.NoSuchActivity}} does not exist."
    )
    assert out.detail["exit_code"] == (1 if dut.sdk >= 33 else 0)


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_a_deep_link_no_filter_takes_is_unable_to_resolve(dut) -> None:
    out = dut.run("app.open", {"package": NOTES, "url": "https://other.example.org/"})
    assert out.status is Status.NOT_MET
    assert out.detail["phone_said"].startswith("Error: Activity not started, unable to resolve")


@pytest.mark.sdks(34)
@pytest.mark.sim_only
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"package": "com.example.notes; reboot"}, "package"),
        ({"package": "$(reboot)"}, "package"),
        ({"package": "com.example.notes", "activity": ".Main; id"}, "activity"),
        ({"package": "com.example.notes", "url": "intent://x#Intent;end"}, "url"),
        ({"package": "com.example.notes", "url": "file:///sdcard/x"}, "url"),
        ({"package": "com.example.notes", "url": "https://a.example/ b"}, "url"),
        ({"package": "com.example.notes", "url": "https://a/", "activity": ".A"}, "activity"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_reaches_the_phone(
    dut, params, field
) -> None:
    out = dut.run("app.open", params)
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == field, out.message
    assert dut.execs() == []


def test_close_force_stops_and_the_app_leaves_the_front(dut) -> None:
    assert dut.run("app.open", {"package": SETTINGS}).status is Status.MET
    out = dut.run("app.close", {"package": SETTINGS})
    assert out.status is Status.MET, out.message
    assert out.detail["before"] == SETTINGS and out.detail["after"] != SETTINGS


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_close_refuses_the_home_app_the_system_ui_and_a_missing_package(dut) -> None:
    home = dut.run("app.close", {"package": LAUNCHER})
    assert home.status is Status.INVALID_PARAMS and "home app" in home.message
    system = dut.run("app.close", {"package": "com.android.systemui"})
    assert system.status is Status.INVALID_PARAMS and system.detail["field"] == "package"
    missing = dut.run("app.close", {"package": "com.example.missing"})
    assert missing.status is Status.INVALID_PARAMS
    assert not [a for a in dut.execs() if a[:2] == ("am", "force-stop")]
    assert reconcile("app.close", {"package": NOTES}, dut.ctx("app.close")) == "happened"


def test_list_has_the_launchable_apps_and_says_whose_label_can_be_read(dut) -> None:
    out = dut.run("app.list", {})
    assert out.status is Status.MET
    apps = {a["package"]: a for a in out.value["apps"]}
    assert SETTINGS in apps and apps[SETTINGS]["label"] is None  # not in front
    assert "only the app in front has a label" in out.value["labels"]
    assert out.value["front"]["package"] is not None


@pytest.mark.sim_only
def test_list_on_the_simulator(dut) -> None:
    apps = {a["package"]: a["activity"] for a in dut.run("app.list", {}).value["apps"]}
    assert apps[NOTES] == f"{NOTES}.MainActivity"
    assert "com.android.shell" not in apps


@pytest.mark.phone("app-disabled:com.android.settings")
@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_monkey_launches_a_third_party_app_and_not_a_disabled_one(dut) -> None:
    """``monkey -p PKG -c LAUNCHER 1`` resolves the launcher activity as ``am start`` does."""
    launcher = ("monkey", "-p", NOTES, "-c", "android.intent.category.LAUNCHER", "1")
    assert dut.device.read(launcher).exit_code == 0
    assert dut.phone.ui.top().package == NOTES
    disabled = ("monkey", "-p", SETTINGS, "-c", "android.intent.category.LAUNCHER", "1")
    assert dut.device.read(disabled).exit_code == 251
