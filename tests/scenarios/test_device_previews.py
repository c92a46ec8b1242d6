"""Previews of bluetooth.set, app.open, app.close and permission.request (issue #26 item 3):
when an approval is asked for (``approval_required``), each stops before its effect with a
from->to preview read from the phone at that moment, goes on only with an approval of that
very preview (its digest), and a phone that changed meanwhile voids the approval: nothing
is done and a fresh preview is shown.

Through the real adb server and the simulated phone (``sim_only``: they change the phone
and read the simulator's command log).
"""

from __future__ import annotations

from typing import Any

import pytest

from phoned.device.actions import Status
from phoned.foundation.digest import digest
from phoned.sim import scenarios

pytestmark = [pytest.mark.integration, pytest.mark.sim_only]

NOTES = "com.example.notes"
SETTINGS = "com.android.settings"
LAUNCHER = "com.google.android.apps.nexuslauncher"


def _asked(out: Any) -> dict[str, Any]:
    """The preview of a run that asked, checked to be bound to its digest."""
    assert out.status is Status.NEEDS_APPROVAL, out.message
    preview: dict[str, Any] = out.detail["preview"]
    assert out.detail["preview_digest"] == digest(preview)
    return preview


def _effects(dut: Any, *heads: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [a for a in dut.execs() if any(a[: len(h)] == h for h in heads)]


BT = (("cmd", "bluetooth_manager"), ("svc", "bluetooth"))


@pytest.mark.sdks(30, 34)
def test_bluetooth_asks_with_the_adapter_state_read_and_a_changed_phone_voids_it(dut) -> None:
    params = {"enabled": True}
    first = _asked(dut.run("bluetooth.set", params, approval_required=True))
    assert first["effect"] == "bluetooth.set" and first["target"] == "bluetooth adapter"
    assert first["data"] == {
        "before": "OFF", "after": "ON", "change": "bluetooth adapter OFF -> ON"
    }  # fmt: skip
    assert _effects(dut, *BT) == []  # nothing sent before the approval

    # meanwhile a scanning app keeps the off adapter in BLE_ON: the approval given is void
    scenarios.apply(dut.phone, "ble-scanning")
    old = digest(first)
    again = dut.run("bluetooth.set", params, approval_required=True, approval_digest=old)
    fresh = _asked(again)
    assert again.detail["approval_void"] is True and fresh["data"]["before"] == "BLE_ON"
    assert fresh["data"]["change"] == "bluetooth adapter BLE_ON -> ON"
    assert _effects(dut, *BT) == []

    done = dut.run("bluetooth.set", params, approval_required=True, approval_digest=digest(fresh))
    assert done.status is Status.MET, done.message
    assert len(_effects(dut, *BT)) == 1
    assert done.evidence.target["observed"]["state"] == "ON"


@pytest.mark.sdks(28, 34)
def test_app_open_asks_with_the_app_and_what_is_in_front_and_a_changed_front_voids_it(
    dut,
) -> None:
    params = {"package": NOTES, "activity": ".MainActivity"}
    first = _asked(dut.run("app.open", params, approval_required=True))
    assert first["target"] == NOTES
    assert first["data"]["change"] == f"app in front {LAUNCHER} -> {NOTES}/.MainActivity"
    assert (first["data"]["package"], first["data"]["activity"]) == (NOTES, ".MainActivity")
    assert _effects(dut, ("am", "start")) == []

    # the person opened Settings meanwhile (no approval asked for that one)
    assert dut.run("app.open", {"package": SETTINGS}).status is Status.MET
    starts = len(_effects(dut, ("am", "start")))
    again = dut.run("app.open", params, approval_required=True, approval_digest=digest(first))
    fresh = _asked(again)
    assert again.detail["approval_void"] is True
    assert fresh["data"]["change"] == f"app in front {SETTINGS} -> {NOTES}/.MainActivity"
    assert len(_effects(dut, ("am", "start"))) == starts  # nothing started

    done = dut.run("app.open", params, approval_required=True, approval_digest=digest(fresh))
    assert done.status is Status.MET, done.message
    assert done.detail == {"before": SETTINGS, "after": NOTES}


@pytest.mark.sdks(30, 35)
def test_app_open_at_a_deep_link_names_the_link_in_the_change(dut) -> None:
    url = "https://notes.example.com/n/42?x=<b>"
    preview = _asked(dut.run("app.open", {"package": NOTES, "url": url}, approval_required=True))
    assert preview["data"]["url"] == url
    assert preview["data"]["change"] == f"app in front {LAUNCHER} -> {NOTES} at {url}"


@pytest.mark.sdks(34)
def test_app_close_asks_naming_the_app_that_will_be_force_stopped(dut) -> None:
    assert dut.run("app.open", {"package": NOTES}).status is Status.MET
    first = _asked(dut.run("app.close", {"package": NOTES}, approval_required=True))
    assert first["target"] == NOTES
    assert first["data"]["change"] == f"app {NOTES} in front -> force-stopped"
    assert _effects(dut, ("am", "force-stop")) == []

    dut.phone.ui.go_home()  # the person left the app meanwhile: a different preview
    again = dut.run(
        "app.close", {"package": NOTES}, approval_required=True, approval_digest=digest(first)
    )
    fresh = _asked(again)
    assert again.detail["approval_void"] is True
    assert fresh["data"]["before"] == f"not in front (front: {LAUNCHER})"
    assert _effects(dut, ("am", "force-stop")) == []

    done = dut.run(
        "app.close", {"package": NOTES}, approval_required=True, approval_digest=digest(fresh)
    )
    assert done.status is Status.MET, done.message
    assert _effects(dut, ("am", "force-stop")) == [("am", "force-stop", NOTES)]


@pytest.mark.sdks(30, 34)
def test_permission_request_asks_naming_the_access_and_the_screen_it_opens(dut) -> None:
    params = {"package": NOTES, "special": "dnd_access"}
    screen = "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS"
    first = _asked(dut.run("permission.request", params, approval_required=True))
    assert first["target"] == NOTES
    assert first["data"]["access"] == "dnd_access" and first["data"]["screen"] == screen
    assert first["data"]["change"] == (
        f"access:dnd_access of {NOTES} not granted -> settings screen {screen} opened"
    )
    assert _effects(dut, ("am", "start")) == []

    opened = dut.run(
        "permission.request", params, approval_required=True, approval_digest=digest(first)
    )
    assert opened.status is Status.NEEDS_PERMISSION, opened.message
    assert _effects(dut, ("am", "start")) == [("am", "start", "-W", "-a", screen)]

    # the person granted it: done, and nothing else is opened or asked for
    dut.phone.notification.set_dnd_access(NOTES, True)
    done = dut.run(
        "permission.request", params, approval_required=True, approval_digest=digest(first)
    )
    assert done.status is Status.MET, done.message
    assert len(_effects(dut, ("am", "start"))) == 1


@pytest.mark.sdks(34)
def test_a_runtime_permission_preview_names_the_permission(dut) -> None:
    params = {"package": NOTES, "permission": "android.permission.CAMERA"}
    preview = _asked(dut.run("permission.request", params, approval_required=True))
    assert preview["data"]["permission"] == "android.permission.CAMERA"
    assert preview["data"]["screen"] == "android.settings.APPLICATION_DETAILS_SETTINGS"
    ci = _asked(dut.run("permission.request", params, approval_required=True, ci_grant=True))
    assert ci["data"]["after"] == "granted by command (CI)"
    assert _effects(dut, ("pm", "grant"), ("am", "start")) == []


@pytest.mark.sdks(34)
def test_without_an_approval_asked_for_nothing_pauses(dut) -> None:
    assert dut.run("bluetooth.set", {"enabled": True}).status is Status.MET
    assert dut.run("app.open", {"package": NOTES}).status is Status.MET
    assert dut.run("app.close", {"package": NOTES}).status is Status.MET
