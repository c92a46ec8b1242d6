"""The UI path (issue #11, belief 3): one warm uiautomator2 session per phone for hierarchies,
waits and taps, checked before use and restarted when it died; ``uiautomator dump`` only
when the session cannot start, its failures detected and never read from a stale file.

Everything goes through the real adb server and the real uiautomator2 client.
"""

from __future__ import annotations

from typing import Any

import pytest
from phoned.device import commands, ui_hierarchy
from phoned.device.actions import Status, reconcile
from phoned.device.ui_session import UiMode
from phoned.sim import scenarios

pytestmark = pytest.mark.integration

TO = "+15551234567"
BODY = "UI path check 👍"
U2 = "uiautomator2"
SHELL = "uiautomator dump"


def _hierarchy_paths(out: Any) -> list[str | None]:
    """The ``path`` of every hierarchy observation of an outcome's evidence."""
    observations = out.to_json()["evidence"]["observations"]
    return [o["value"].get("path") for o in observations if o["name"] == "hierarchy"]


def _calls(out: Any) -> list[tuple[tuple[str, ...], int | None]]:
    """(argv[:2], exit code) of every command in the evidence."""
    return [(tuple(c["argv"][:2]), c["exit_code"]) for c in out.to_json()["evidence"]["commands"]]


def _u2_launches(dut: Any) -> int:
    """Server launches that ended (the log records a command when it exits)."""
    return sum(1 for argv in dut.execs() if argv[:1] == ("app_process",))


def test_draft_and_snapshot_share_one_warm_session(dut) -> None:
    draft = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert draft.status is Status.MET, draft.message
    snap = dut.run("screen.snapshot", {})
    assert snap.status is Status.MET, snap.message
    assert set(_hierarchy_paths(draft)) == {U2} and _hierarchy_paths(snap) == [U2]
    assert snap.value["window_path"] == U2
    stats = dut.device.ui_session.stats
    assert (stats.starts, stats.restarts, stats.failures) == (1, 0, 0)
    assert ((U2, "start"), 0) in _calls(draft)
    # warm: no start; within fresh_s of the draft's last call not even a ping
    assert ((U2, "start"), 0) not in _calls(snap)
    # the composer was waited for with a selector on the session, not with repeated dumps
    assert any(o["name"] == "screen_wait" for o in draft.to_json()["evidence"]["observations"])
    if dut.sim is not None:
        automation = dut.phone.ui.automation
        assert automation.u2_starts == 1  # one server came up for both actions
        assert not [a for a in dut.execs() if a[:1] == ("uiautomator",)]
        assert automation.conflicts == []


@pytest.mark.sim_only  # it sends a message: not on a real phone
def test_the_send_tap_goes_through_the_session_once(dut) -> None:
    first = dut.run("sms.send", {"to": TO, "body": BODY})
    assert first.status is Status.NEEDS_APPROVAL, first.message
    out = dut.run(
        "sms.send", {"to": TO, "body": BODY}, approval_digest=first.detail["preview_digest"]
    )
    assert out.status is Status.MET, out.message
    taps = [o for o in out.to_json()["evidence"]["observations"] if o["name"] == "tap"]
    assert len(taps) == 1 and taps[0]["value"]["path"] == U2
    assert ((U2, "click"), 0) in _calls(out)
    assert [e for e in dut.phone.log.entries("click") if e.argv[:1] == ("tap",)]
    assert not [a for a in dut.execs() if a[:2] == ("input", "tap")]
    assert dut.device.ui_session.stats.starts == 1


def test_a_dead_session_is_restarted_by_the_health_check(dut) -> None:
    dut.device.ui_session.fresh_s = 0.0  # every use pings, as a task after fresh_s does
    assert dut.run("screen.snapshot", {}).status is Status.MET
    if dut.sim is not None:
        assert dut.phone.ui.automation.kill_u2()  # the system killed the server
    else:  # on a real phone: stop it behind the session's back
        dut.device.ui_session.client().stop_uiautomator()
    snap = dut.run("screen.snapshot", {})
    assert snap.status is Status.MET, snap.message
    assert _hierarchy_paths(snap) == [U2]
    calls = _calls(snap)
    assert ((U2, "ping"), None) in calls and ((U2, "restart"), 0) in calls
    stats = dut.device.ui_session.stats
    assert (stats.starts, stats.restarts, stats.failures) == (1, 1, 0)
    if dut.sim is not None:
        assert dut.phone.ui.automation.u2_starts == 2
        assert dut.phone.ui.automation.conflicts == []


def test_without_uiautomator2_the_shell_path_reads_the_screen_and_says_so(dut) -> None:
    if dut.sim is not None:
        scenarios.apply(dut.phone, "u2-broken")  # the server aborts at launch
    else:  # a real server cannot be broken from here: take the fallback path on purpose
        dut.device.ui_session.set_mode(UiMode.SHELL)
    out = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert out.status is Status.MET, out.message
    assert set(_hierarchy_paths(out)) == {SHELL}
    argvs = [tuple(c["argv"]) for c in out.to_json()["evidence"]["commands"]]
    dump_at = argvs.index(commands.UI_DUMP)
    assert argvs[dump_at - 1] == commands.UI_DUMP_REMOVE
    assert argvs[dump_at + 1] == commands.UI_DUMP_READ
    if dut.sim is not None:
        assert ((U2, "start"), None) in _calls(out)
        assert any("UI path: uiautomator dump" in n for n in out.evidence.notes)
        again = dut.run("screen.snapshot", {})
        assert again.status is Status.MET and again.value["window_path"] == SHELL
        assert _u2_launches(dut) == 1  # no new start before retry_after
        assert dut.device.ui_session.stats.failures == 1
        assert dut.phone.ui.automation.conflicts == []


@pytest.mark.sim_only  # a screen that never idles and a stale file need fault injection
def test_a_dump_that_never_idles_is_reported_never_read_from_the_stale_file(dut) -> None:
    scenarios.apply(dut.phone, "u2-broken,ui-dump-not-idle")
    assert dut.phone.fs.exists(commands.UI_DUMP_PATH)  # a dump from before is on the phone
    out = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert out.status is Status.NOT_MET
    raw = out.detail["screen_unreadable"]
    assert raw["path"] == SHELL and raw["reason"] == "could not get idle state"
    assert "ERROR: could not get idle state." in raw["stderr"] and raw["exit_code"] == 0
    assert commands.UI_DUMP_READ not in dut.execs()  # the stale file was never read
    assert not [a for a in dut.execs() if a[:1] == ("am",)]  # nothing opened on a blind read
    failed = [o for o in out.to_json()["evidence"]["observations"] if o["name"] == "hierarchy"]
    assert failed[-1]["value"]["reason"] == "could not get idle state"
    snap = dut.run("screen.snapshot", {})
    assert snap.status is Status.NOT_MET and "could not get idle state" in snap.message
    params = {"to": TO, "body": BODY}
    assert reconcile("sms.draft", params, dut.ctx("sms.draft")) == "cannot_tell"


@pytest.mark.sim_only
def test_a_killed_dump_is_a_failed_read(dut) -> None:
    scenarios.apply(dut.phone, "u2-broken,ui-dump-killed")
    out = dut.run("screen.snapshot", {})
    assert out.status is Status.NOT_MET
    raw = out.detail["screen_unreadable"]
    assert raw["reason"] == "killed" and raw["exit_code"] == 137 and "Killed" in raw["stderr"]


@pytest.mark.sim_only
def test_a_server_that_dies_mid_action_is_restarted_and_the_action_still_verifies(dut) -> None:
    scenarios.apply(dut.phone, "u2-dies-after:2")
    out = dut.run("sms.draft", {"to": TO, "body": BODY})
    assert out.status is Status.MET, out.message
    assert set(_hierarchy_paths(out)) == {U2}
    # relaunched once, by the health check or by the client's own retry of a refused call
    assert dut.phone.ui.automation.u2_starts == 2 and dut.phone.ui.automation.conflicts == []


def test_uiautomator_dump_beside_the_running_server_fails_and_the_session_heals(dut) -> None:
    """What the session's lock prevents, done on purpose from outside: the phone refuses
    the second UiAutomation client (``dump_failure`` names it; the simulated phone records
    the conflict), and the next action still reads through the session."""
    dut.device.ui_session.fresh_s = 0.0  # the next action checks the server first
    assert dut.run("screen.snapshot", {}).status is Status.MET  # the server now runs
    result = dut.device.run(commands.UI_DUMP)
    reason = ui_hierarchy.dump_failure(result.stdout, result.stderr, result.exit_code)
    if dut.sim is not None:
        assert reason == "another UiAutomation client is registered"
        assert "already registered!" in result.stderr
        assert len(dut.phone.ui.automation.conflicts) == 1
        assert [e.argv for e in dut.phone.log.entries("uiautomation")] == [
            ("conflict", "uiautomator dump", "uiautomator2")
        ]
    after = dut.run("screen.snapshot", {})
    assert after.status is Status.MET, after.message
    assert after.value["window_path"] == U2


@pytest.mark.sim_only
@pytest.mark.sdks(34)
@pytest.mark.ui_costs
def test_the_cost_model_makes_the_fallback_dump_cost_what_a_phone_takes(dut) -> None:
    costs = dut.phone.ui.automation.costs
    # scaled down
    costs.u2_start_s, costs.dump_s, costs.u2_dump_s, costs.u2_query_s = 0.3, 0.4, 0.02, 0.02
    warm = dut.run("screen.snapshot", {})
    assert warm.status is Status.MET
    dump_ms = [c["duration_ms"] for c in warm.to_json()["evidence"]["commands"]
               if c["argv"][:2] == [U2, "dump_hierarchy"]]  # fmt: skip
    start_ms = [c["duration_ms"] for c in warm.to_json()["evidence"]["commands"]
                if c["argv"][:2] == [U2, "start"]]  # fmt: skip
    assert start_ms[0] >= 300 and 20 <= dump_ms[0] < 300
    dut.device.ui_session.set_mode(UiMode.SHELL)
    cold = dut.run("screen.snapshot", {})
    assert cold.status is Status.MET and cold.value["window_path"] == SHELL
    assert dut.phone.ui.automation.conflicts == []  # the server was stopped first
    shell_ms = [c["duration_ms"] for c in cold.to_json()["evidence"]["commands"]
                if tuple(c["argv"]) == commands.UI_DUMP]  # fmt: skip
    assert shell_ms[0] >= 400


def _freed(out: Any) -> list[str]:
    observations = out.to_json()["evidence"]["observations"]
    return [o["value"] for o in observations if o["name"] == "freed_uiautomation"]


def test_the_shell_path_frees_uiautomation_left_held_by_a_uiautomator2_server(dut) -> None:
    """A uiautomator2 server that another client started and left running holds
    UiAutomation (openatx/uiautomator2#298, #1013); the shell path stops it before its
    ``uiautomator dump`` and says so. On the simulator the server outlives its stream
    (``u2-left-running``); on a phone the other client's session simply stays open."""
    import uiautomator2

    if dut.sim is not None:
        scenarios.apply(dut.phone, "u2-left-running")
    other = uiautomator2.connect(dut.device.adb)  # another tool's session
    other.start_uiautomator()
    assert other._check_alive()
    if dut.sim is not None:
        other.stop_uiautomator(wait=False)  # its stream closes; the server stays registered
        assert dut.phone.ui.automation.holder == U2
    dut.device.ui_session.set_mode(UiMode.SHELL)
    out = dut.run("screen.snapshot", {})
    assert out.status is Status.MET, out.message
    assert _hierarchy_paths(out) == [SHELL]
    (freed,) = _freed(out)
    assert freed.startswith("stopped uiautomator2 server (pid ")
    argvs = [tuple(c["argv"]) for c in out.to_json()["evidence"]["commands"]]
    assert argvs.index(commands.PROCESSES_WITH_ARGS) < argvs.index(commands.UI_DUMP)
    pid = int(freed.rsplit(" ", 1)[1].rstrip(")"))
    assert commands.kill_process(pid) in argvs or commands.U2_APK_FORCE_STOP in argvs
    assert not other._check_alive()
    if dut.sim is not None:
        assert dut.phone.ui.automation.conflicts == []
        assert dut.phone.ui.automation.holder is None
    again = dut.run("screen.snapshot", {})  # nothing left to free: no observation, no kill
    assert again.status is Status.MET and _freed(again) == []
