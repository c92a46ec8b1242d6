"""``ui.handoff`` (issue 34) as one run of the action on the simulated notes app, through
the real adb server and the real uiautomator2 client: the step not done yet hands it over
(``waiting`` for the person), done it is met, another app in front is stale; a permission
dialog over the app (a screen phoned never touches) is no stale: the person may act there.
Nothing is ever tapped or typed by phoned. (The task's life around it, the watcher, the TTL
and the evidence: ``tests/scenarios/test_ui_handoff.py``.)"""

from __future__ import annotations

import pytest
from phoned.device.actions import Status
from phoned.sim.ui import notes_app

pytestmark = [pytest.mark.integration, pytest.mark.sim_only, pytest.mark.sdks(28, 34)]

NOTES = notes_app.PKG
HANDOFF = {
    "package": NOTES,
    "instruction": "Type a note and tap Save",
    "expect": {"appears": {"resource_id": f"{NOTES}:id/saved_count", "text": "1"}},
}


def test_the_step_is_handed_over_then_met_once_the_person_did_it(notes) -> None:
    handed = notes.run("ui.handoff", HANDOFF)
    assert handed.status is Status.WAITING, handed.message
    assert handed.detail["person"] == NOTES and handed.detail["ttl_s"] == 300
    assert "Type a note and tap Save" in handed.message
    notes_app.person_saves_note(notes.phone.ui, "code 739154")
    done = notes.run("ui.handoff", HANDOFF)
    assert done.status is Status.MET, done.message
    assert "739154" not in str(done.to_json()) and "739154" not in str(handed.to_json())
    assert len(notes.phone.log.entries("click")) == 1  # the person's tap, none of phoned's
    assert not [a for a in notes.phone.log.argvs() if a[:1] == ("input",)]


def test_another_app_in_front_is_stale_and_nothing_is_done(notes) -> None:
    notes.phone.ui.go_home()
    out = notes.run("ui.handoff", HANDOFF)
    assert out.status is Status.UNSUPPORTED and out.detail["stale"] is True
    assert f"not {NOTES}" in out.message and notes.phone.log.entries("click") == []


@pytest.mark.phone("permission-dialog:com.example.notes")
def test_a_permission_dialog_over_the_app_is_the_person_s_to_answer(dut) -> None:
    dut.run("app.open", {"package": NOTES})
    dut.phone.log.clear()
    out = dut.run("ui.handoff", HANDOFF)
    assert out.status is Status.WAITING, out.message  # not stale: the person may act there
    assert dut.phone.log.entries("click") == []
