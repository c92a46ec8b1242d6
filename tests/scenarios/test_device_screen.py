"""screen.snapshot and the execute()/reconcile() contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from phoned.device.actions import Status, execute, reconcile
from phoned.device.errors import DeviceError

pytestmark = pytest.mark.integration


def test_snapshot_reads_foreground_screen_and_artifacts(dut) -> None:
    out = dut.run("screen.snapshot", {})
    assert out.status is Status.MET
    snap = out.value
    assert snap["foreground"]["package"]
    assert snap["screen_on"] in (True, False) and snap["locked"] in (True, False)
    assert snap["orientation"] in (0, 1, 2, 3)
    assert len(snap["hierarchy_digest"]) == 64
    assert Path(snap["screenshot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(out.evidence.artifacts["snapshot_hierarchy"]).read_text().startswith("<?xml")


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_snapshot_digest_is_stable_and_sees_the_lock(dut) -> None:
    a, b = dut.run("screen.snapshot", {}).value, dut.run("screen.snapshot", {}).value
    assert a["hierarchy_digest"] == b["hierarchy_digest"]
    assert a["foreground"]["package"] == "com.google.android.apps.nexuslauncher"
    dut.phone.ui.lock()
    locked = dut.run("screen.snapshot", {}).value
    assert locked["locked"] is True and locked["hierarchy_digest"] != a["hierarchy_digest"]


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_unknown_method_is_a_value_error(dut) -> None:
    with pytest.raises(ValueError, match="unknown method"):
        execute("sms.delete", {}, dut.ctx("sms.delete"))


@pytest.mark.sdks(34)
@pytest.mark.sim_only
def test_offline_before_any_effect_propagates(dut) -> None:
    dut.sim.stop()  # the phone is gone before the action reads anything
    ctx = dut.ctx("dnd.set")
    with pytest.raises(DeviceError):
        execute("dnd.set", {"mode": "priority"}, ctx)
    assert ctx.started_effects == []


@pytest.mark.sdks(33)
@pytest.mark.sim_only
def test_transport_lost_after_an_effect_is_unknown_then_reconciled(dut, adb_server) -> None:
    # the zen_mode read runs; the transport drops instead of running set_dnd
    dut.phone.faults.drop_after_commands = dut.phone.commands_started + 1
    out = dut.run("dnd.set", {"mode": "priority"})
    assert out.status is Status.UNKNOWN
    assert out.detail["reconcile"]["effects"] == ["dnd.set"]
    if adb_server.wait_state(dut.sim.serial, {"device"}, timeout=5) != "device":
        adb_server.connect(dut.sim)
    assert reconcile("dnd.set", {"mode": "priority"}, dut.ctx("dnd.set")) == "did_not_happen"
    assert reconcile("dnd.set", {"mode": "off"}, dut.ctx("dnd.set")) == "happened"
    assert not [a for a in dut.execs() if a[:3] == ("cmd", "notification", "set_dnd")]


# ---- the app in front on every release (issue #11, belief 1) ---------------------------


def _fingerprint(dut, ctx=None):
    from phoned.device.actions.snapshot import take

    return take(ctx or dut.ctx("dnd.set"), "dnd.set", {}, "fingerprint")


def _open_settings(dut) -> None:
    result = dut.device.run(("am", "start", "-W", "-a", "android.settings.SETTINGS"))
    assert result.ok, result.stderr


def test_foreground_is_read_on_every_release_and_an_app_switch_is_seen(dut) -> None:
    """From API 29 the focus lines live under ``dumpsys window displays``: the snapshot must
    name the app in front on every release, and a switch between two snapshots must show."""
    from phoned.device.actions.snapshot import FINGERPRINT_FIELDS, compare

    dut.device.run(("input", "keyevent", "KEYCODE_WAKEUP"))
    dut.device.run(("input", "keyevent", "KEYCODE_HOME"))
    before = _fingerprint(dut)
    assert before.foreground is not None and before.foreground["package"]
    _open_settings(dut)
    ctx = dut.ctx("dnd.set")
    after = _fingerprint(dut, ctx)
    assert after.foreground is not None
    assert after.foreground["package"] == "com.android.settings"
    assert compare(before, after, FINGERPRINT_FIELDS)["foreground"]["after"] == after.foreground
    (read,) = [o for o in ctx.recorder.observations if o.name == "foreground"]
    assert read.command == ("dumpsys", "window", "displays" if dut.sdk >= 29 else "windows")


@pytest.mark.sim_only
@pytest.mark.sdks(30, 33, 34, 35)
def test_windows_section_has_no_focus_from_api_29(dut) -> None:
    """What made phoned blind: ``dumpsys window windows`` no longer names the focus."""
    from phoned.device import parsers

    text = dut.device.read(("dumpsys", "window", "windows")).stdout
    assert "mTopFocusedDisplayId=" in text and parsers.parse_foreground(text) is None
    dut.phone.log.clear()
    snap = _fingerprint(dut)
    assert snap.foreground is not None and snap.foreground["package"]
    assert ("dumpsys", "window", "displays") in dut.execs()


@pytest.mark.sim_only
@pytest.mark.sdks(34)
def test_foreground_with_a_second_display_is_the_focused_one(dut) -> None:
    from phoned.sim import scenarios

    scenarios.apply(dut.phone, "second-display")
    _open_settings(dut)
    snap = _fingerprint(dut)
    assert snap.foreground is not None
    assert (snap.foreground["package"], snap.foreground["display"]) == ("com.android.settings", 0)


def test_unreadable_foreground_is_never_the_same_screen() -> None:
    from phoned.device.actions.snapshot import FINGERPRINT_FIELDS, Snapshot, compare

    unknown = Snapshot("fingerprint", 0.0, None, True, False)
    diff = compare(unknown, unknown, FINGERPRINT_FIELDS)
    assert diff == {"foreground": {"before": None, "after": None, "unknown": True}}


@pytest.mark.sim_only
@pytest.mark.sdks(30, 34)
def test_the_same_app_in_the_work_profile_is_another_foreground(dut) -> None:
    """``u10`` in the window and activity records: a switch from the owner's Settings to the
    work profile's is a change the stale-screen check sees."""
    from phoned.device.actions.snapshot import FINGERPRINT_FIELDS, compare
    from phoned.sim import scenarios

    _open_settings(dut)
    owner = _fingerprint(dut)
    scenarios.apply(dut.phone, "work-profile:com.android.settings")
    work = _fingerprint(dut)
    assert owner.foreground is not None and work.foreground is not None
    assert (owner.foreground["user"], work.foreground["user"]) == (0, 10)
    assert owner.foreground["package"] == work.foreground["package"] == "com.android.settings"
    assert "foreground" in compare(owner, work, FINGERPRINT_FIELDS)


@pytest.mark.sim_only
@pytest.mark.sdks(33)
def test_a_samsung_power_dump_still_tells_the_screen_state(dut) -> None:
    from phoned.sim import scenarios

    scenarios.apply(dut.phone, "samsung-power")
    assert "mWakefulness=" not in dut.device.read(("dumpsys", "power")).stdout
    assert _fingerprint(dut).screen_on is True
    dut.phone.ui.sleep()
    assert _fingerprint(dut).screen_on is False
