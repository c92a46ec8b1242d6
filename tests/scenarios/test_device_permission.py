"""permission.check / permission.request: dumpsys package for runtime grants, secure
settings for notification-listener and DND access."""

from __future__ import annotations

import pytest
from phoned.device.actions import Status

pytestmark = pytest.mark.integration

NOTES = "com.example.notes"


@pytest.mark.sim_only
def test_dnd_access_is_read_from_the_secure_setting_not_dumpsys_package(dut) -> None:
    dump = dut.device.read(("dumpsys", "package", NOTES)).stdout
    assert "android.permission.ACCESS_NOTIFICATION_POLICY: granted=true" in dump  # the trap
    out = dut.run("permission.check", {"package": NOTES, "special": "dnd_access"})
    assert out.status is Status.MET and out.value["granted"] is False
    argvs = [c.argv for c in out.evidence.commands]
    assert ("settings", "get", "secure", "enabled_notification_policy_access_packages") in argvs
    assert not [a for a in argvs if a[:2] == ("dumpsys", "package")]


@pytest.mark.sdks(30, 34)
@pytest.mark.sim_only
def test_request_opens_the_screen_and_waits_until_the_grant_is_seen(dut) -> None:
    params = {"package": NOTES, "special": "dnd_access"}
    out = dut.run("permission.request", params)
    assert out.status is Status.NEEDS_PERMISSION
    assert out.detail["screen"] == "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS"
    assert (
        "am",
        "start",
        "-W",
        "-a",
        "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS",
    ) in dut.execs()
    dut.phone.notification.set_dnd_access(NOTES, True)  # the person flips the switch
    assert dut.run("permission.request", params).status is Status.MET


@pytest.mark.sdks(28, 33, 35)
@pytest.mark.sim_only
def test_runtime_permission_and_ci_grant(dut) -> None:
    params = {"package": NOTES, "permission": "android.permission.CAMERA"}
    assert dut.run("permission.check", params).value["granted"] is False
    out = dut.run("permission.request", params)
    assert out.status is Status.NEEDS_PERMISSION
    details = ["am", "start", "-W", "-a", "android.settings.APPLICATION_DETAILS_SETTINGS", "-d"]
    assert (*details, f"package:{NOTES}") in dut.execs()
    out = dut.run("permission.request", params, ci_grant=True)
    assert out.status is Status.MET, out.message
    assert any("CI grant" in n for n in out.evidence.notes)
    assert ("pm", "grant", NOTES, "android.permission.CAMERA") in dut.execs()


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_listener_ci_grant_uses_cmd_notification(dut) -> None:
    params = {
        "package": NOTES,
        "special": "notification_listener",
        "component": f"{NOTES}/.NotesListenerService",
    }
    out = dut.run("permission.request", params, ci_grant=True)
    assert out.status is Status.MET, out.message
    assert (
        "cmd",
        "notification",
        "allow_listener",
        f"{NOTES}/.NotesListenerService",
    ) in dut.execs()
    assert dut.run("permission.check", params).value["granted"] is True


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_unrequested_permission_and_bad_names_are_invalid(dut) -> None:
    out = dut.run(
        "permission.check", {"package": NOTES, "permission": "android.permission.READ_SMS"}
    )
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == "permission"
    before = len(dut.execs())
    out = dut.run(
        "permission.request", {"package": "x; reboot", "permission": "android.permission.CAMERA"}
    )
    assert out.status is Status.INVALID_PARAMS and out.detail["field"] == "package"
    assert len(dut.execs()) == before


def test_check_reads_a_granted_runtime_permission(dut) -> None:
    out = dut.run(
        "permission.check",
        {"package": "com.android.shell", "permission": "android.permission.READ_SMS"},
    )
    assert out.status in (Status.MET, Status.INVALID_PARAMS)
    if out.status is Status.MET:
        assert out.value["granted"] is True
