"""The stale-check decision, the snapshot diff and names the executor derives (pure)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers import task_record
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.waiting import WaitingFor
from phoned.daemon.runtime.executor import target_name, waiting_for
from phoned.daemon.runtime.staleness import decide
from phoned.device.actions.base import Outcome, Status
from phoned.device.actions.snapshot import Snapshot, compare, fields_for, level_for
from phoned.device.evidence import Evidence
from phoned.device.private import redact_text

BODY = "see you at 8"
COMPOSER = {"package": "com.google.android.apps.messaging", "activity": ".ui.ConversationActivity"}


def _task(method: str = "sms.send", **params: Any) -> TaskRecord:
    return task_record(method=method, params=params or {"to": "+15551234567", "body": BODY})


def _snap(**kw: Any) -> Snapshot:
    base = Snapshot(
        level="full",
        taken_at=0.0,
        foreground=COMPOSER,
        screen_on=True,
        locked=False,
        orientation=0,
        hierarchy_digest="d1",
        texts={
            "front_app": COMPOSER["package"],
            "recipient_shown": True,
            "compose_text": redact_text(BODY),  # snapshots keep the compose text redacted
        },
    )
    return replace(base, **kw)


def test_nothing_changed_continues() -> None:
    assert decide(_task(), True, _snap(taken_at=1.0), _snap(taken_at=2.0)) == ("continue", {})


def test_another_app_in_front_voids_the_approval() -> None:
    home = {
        "package": "com.google.android.apps.nexuslauncher",
        "activity": ".NexusLauncherActivity",
    }
    decision, diff = decide(_task(), True, _snap(), _snap(foreground=home, hierarchy_digest="d2"))
    assert decision == "void_approval"
    assert diff["foreground"] == {"before": COMPOSER, "after": home}


def test_user_edit_of_the_draft_is_stale() -> None:
    edited = {**_snap().texts, "compose_text": redact_text(BODY + " (changed my mind)")}
    decision, diff = decide(_task(), True, _snap(), _snap(texts=edited, hierarchy_digest="d2"))
    assert decision == "stale" and set(diff) == {"texts", "hierarchy_digest"}
    assert BODY not in str(diff)  # the diff names the change by the redacted forms


def test_a_task_that_paused_for_a_choice_prepared_no_draft_and_is_never_stale() -> None:
    # the same change as a user edit: the composer holds text that is not the task's body;
    # a choice pause came before any draft, so it is not the task's draft: run again
    edited = {**_snap().texts, "compose_text": redact_text("a text the person typed")}
    after = _snap(texts=edited, hierarchy_digest="d2")
    assert decide(_task(), False, _snap(), after)[0] == "stale"
    assert decide(_task(), False, _snap(), after, prepared=False)[0] == "recheck"


def test_a_draft_back_to_the_tasks_own_body_is_no_user_edit() -> None:
    partial = {**_snap().texts, "compose_text": redact_text(BODY[:3])}
    decision, _ = decide(_task(), True, _snap(texts=partial), _snap(hierarchy_digest="d2"))
    assert decision == "void_approval"


def test_without_approval_a_change_means_recheck() -> None:
    decision, _ = decide(
        _task("sms.draft", to="+1555", body=BODY), False, _snap(locked=True), _snap()
    )
    assert decision == "recheck"


def test_missing_baseline_trusts_no_approval() -> None:
    assert decide(_task(), True, None, _snap())[0] == "void_approval"
    assert decide(_task(), False, _snap(), None)[0] == "recheck"


def test_compare_skips_a_digest_missing_on_one_side() -> None:
    old, new = _snap(hierarchy_digest=None), _snap(hierarchy_digest="d9")
    assert compare(old, new, fields_for("sms.send")) == {}


def test_levels_by_method() -> None:
    assert level_for("sms.send") == "full" and level_for("sms.draft") == "full"
    assert level_for("bluetooth.set") == "fingerprint"
    assert "texts" not in fields_for("permission.request")


def test_snapshot_json_round_trip() -> None:
    snap = _snap(artifacts={"snapshot_screenshot": "/tmp/x.png"}, round_trips=5)
    assert Snapshot.from_json(snap.to_json()) == snap


def _outcome(status: Status, **detail: Any) -> Outcome:
    ev = Evidence(method="m", device={}, commands=(), observations=(), target={})
    return Outcome(status=status, method="m", evidence=ev, detail=detail)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (_outcome(Status.WAITING, condition="unlock"), "unlock"),
        (_outcome(Status.WAITING, choice="to", candidates=[{"name": "Ivan"}]), "choice:to"),
        (_outcome(Status.NEEDS_PERMISSION, dialog={"package": "x"}), "permission-dialog"),
        (
            _outcome(
                Status.NEEDS_PERMISSION, package="com.x", permission="android.permission.CAMERA"
            ),
            "permission:com.x:android.permission.CAMERA",
        ),
        (
            _outcome(Status.NEEDS_PERMISSION, package="com.x", permission="access:dnd_access"),
            "permission:com.x:access:dnd_access",
        ),
    ],
)
def test_waiting_for_names_what_the_watcher_checks(outcome: Outcome, expected: str) -> None:
    assert waiting_for(outcome).text == expected
    assert WaitingFor.parse(expected) == waiting_for(outcome)


@pytest.mark.parametrize(
    ("method", "params", "observed", "name"),
    [
        ("dnd.set", {"mode": "alarms"}, 3, "dnd.alarms"),
        ("bluetooth.set", {"enabled": True}, {"state": "ON", "bluetooth_on": 1}, "bluetooth.on"),
        # off with BLE scanning rests in BLE_ON: classic Bluetooth is off
        (
            "bluetooth.set",
            {"enabled": False},
            {"state": "BLE_ON", "bluetooth_on": 0},
            "bluetooth.off",
        ),
        ("bluetooth.set", {"enabled": False}, {"state": "OFF", "bluetooth_on": 0}, "bluetooth.off"),
        ("volume.set", {"stream": "ring", "level": 4}, 4, "volume.ring.4"),
        ("sms.send", {}, None, "sms.sent"),
        ("permission.check", {}, {"granted": False}, "permission.missing"),
        ("permission.request", {}, {"granted": True}, "permission.granted"),
    ],
)
def test_target_names(method: str, params: dict[str, Any], observed: Any, name: str) -> None:
    assert target_name(method, params, observed) == name


def test_a_send_journal_target_carries_its_sent_box_baseline() -> None:
    from phoned.device.methods.sms_send import BASELINE_KEY, journal_baseline

    target = f"send via com.google.android.apps.messaging {BASELINE_KEY}41"
    assert journal_baseline({"action": "sms.send", "target": target}) == 41
    assert journal_baseline({"action": "sms.send", "target": "send via x"}) is None
    assert journal_baseline(None) is None
