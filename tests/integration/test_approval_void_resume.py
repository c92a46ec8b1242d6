"""Issue #23 point 3 and issue 34: a change under a pending approval (SPEC §7).

The user's case: ``sms.send`` waits for approval, a later task of the same conversation
drafts another text to the same recipient, and ``phoned approve`` ended the task
``stale_state`` (final). Each test drives the real ``phoned run`` on a simulated phone
through the real adb server over a SQLite queue, decides through the real ``phoned`` CLI
or the store, and reads the queue, the evidence, the pending approval as ``phoned show``
and the plane show it (``render_json``) and the phone itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner, Result
from phoned_process import Daemon

from phoned.daemon.cli import main
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.rendering.render import render_json

pytestmark = pytest.mark.integration

CONV = "conv-e2e"
TO = "+15551234567"
FIRST, LATER = "Running 10 min late, start without me", "Actually 20 min, sorry"


def phoned(daemon: Daemon, *args: str) -> Result:
    """The ``phoned`` CLI on the daemon's queue, in this process."""
    return CliRunner().invoke(main, [*args, "--queue", f"sqlite:///{daemon.queue}"])


def approve_with_cli(daemon: Daemon, task: TaskRecord) -> Result:
    """``phoned approve`` quoting the pending preview, as a person pastes it."""
    assert task.approval_digest is not None
    argv = ["approve", task.id, "--revision", str(task.revision)]
    return phoned(daemon, *argv, "--digest", task.approval_digest, "--conversation", CONV)


def pending_of(daemon: Daemon, task_id: str) -> dict[str, Any]:
    """The pending approval as ``phoned show --json`` and ``GET /v1/tasks/{id}`` give it."""

    def read(store: Any) -> dict[str, Any]:
        record = store.get(task_id)
        return render_json(record, store.evidence(task_id), [], [])

    pending: dict[str, Any] = daemon.using(read)["pending_approval"]
    assert pending is not None
    return pending


def asked_again(daemon: Daemon, task: TaskRecord) -> TaskRecord:
    """``task`` back in ``approval`` after the approval it had was given."""
    paused = (TaskState.APPROVAL, TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED)
    return daemon.wait_for(
        task.id, lambda t: t.state in paused and t.state_version > task.state_version + 1
    )


def _sent(sim: Any) -> list[tuple[str, str]]:
    return [(m["address"], m["body"]) for m in sim.phone.sms.messages("sent")]


def _send_then_later_draft(daemon: Daemon, sim: Any) -> tuple[TaskRecord, str]:
    """An ``sms.send`` waiting for approval, then a later ``sms.draft`` of the same
    conversation and recipient, completed: the composer shows the later text."""
    send_id = daemon.submit({"method": "sms.send", "params": {"to": TO, "body": FIRST}})
    paused = daemon.state(send_id, TaskState.APPROVAL)
    draft_id = daemon.submit({"method": "sms.draft", "params": {"to": TO, "body": LATER}})
    daemon.state(draft_id, TaskState.COMPLETED)
    assert sim.phone.ui.top().state["body"] == LATER
    return paused, draft_id


def test_a_later_draft_is_drafted_over_and_the_approval_holds_for_an_identical_preview(
    daemon: Daemon, sim_factory: Any
) -> None:
    """Issue 34: the resumed send drafts its text again over the later draft; the fresh
    preview is identical to the approved one (digest included), so it is sent without
    asking again, and the evidence says why."""
    sim = sim_factory(sdk=34)
    daemon.start()
    paused, draft_id = _send_then_later_draft(daemon, sim)

    # the person approves the preview they saw with the CLI, once
    decided = approve_with_cli(daemon, paused)
    assert decided.exit_code == 0, decided.output
    done = daemon.state(paused.id, TaskState.COMPLETED)
    assert done.observed_target == "sms.sent" and done.failure is None
    assert _sent(sim) == [(TO, FIRST)] and len(sim.phone.log.entries("click")) == 1

    # evidence keeps the diff, and the outcome says the approval held for the fresh preview
    (resumed,) = daemon.evidence(paused.id, "resume_check")
    assert resumed["body"]["decision"] == "void_approval"
    assert "texts" in resumed["body"]["diff"] and resumed["body"]["drafted_by"] == draft_id
    outcomes = [d["body"] for d in daemon.evidence(paused.id, "outcome")]
    assert [o["status"] for o in outcomes] == ["needs_approval", "met"]  # asked once
    held = outcomes[-1]["detail"]["approval_held"]
    assert held["digest"] == paused.approval_digest
    assert held["message"] == (
        f"fresh preview identical to the approved one, digest {paused.approval_digest}"
    )
    assert held["resume_check"] == resumed["ref"] and "texts" in held["changed"]
    assert "approval_void" not in outcomes[-1]["detail"]
    shown = phoned(daemon, "show", paused.id)
    assert shown.exit_code == 0 and "fresh preview identical to the approved one" in shown.output


def test_a_pending_preview_a_later_task_changed_is_marked_stale_before_anyone_decides(
    daemon: Daemon, sim_factory: Any
) -> None:
    """After the later task ran, the daemon compared the pending approval with the phone
    (reads only): ``phoned show`` and the plane mark the preview stale, still approvable
    (approving asks again, it cannot send the old preview), and nothing changed on the
    phone for it."""
    sim = sim_factory(sdk=34)
    daemon.start()
    paused, draft_id = _send_then_later_draft(daemon, sim)
    daemon.wait_for(paused.id, lambda _: bool(daemon.evidence(paused.id, "approval_check")))
    (check,) = daemon.evidence(paused.id, "approval_check")
    assert check["body"]["decision"] == "void_approval" and "texts" in check["body"]["diff"]
    assert check["body"]["drafted_by"] == draft_id and check["body"]["after_task"] == draft_id
    assert LATER not in str(check) and FIRST not in str(check)  # redacted like all evidence
    assert daemon.task(paused.id).state_version == paused.state_version  # the approval stands
    assert sim.phone.ui.top().state["body"] == LATER  # the later draft is left alone
    pending = pending_of(daemon, paused.id)
    stale = pending["stale"]
    assert stale["can_approve"] is True and "texts" in stale["changed"]
    assert stale["after_task"] == draft_id and pending["void"] is None
    assert stale["message"].startswith("Stale: the phone changed since this preview was shown")
    shown = phoned(daemon, "show", paused.id)
    assert shown.exit_code == 0 and stale["message"] in shown.output

    # approving re-checks the phone: drafted again, identical, sent without asking again
    daemon.approve(paused)
    daemon.state(paused.id, TaskState.COMPLETED)
    assert _sent(sim) == [(TO, FIRST)]


def test_a_draft_the_person_edited_is_kept_and_the_failure_names_the_rerun(
    daemon: Daemon, sim_factory: Any
) -> None:
    """Only what cannot go on fails: the person typed into the very draft. Their edit is
    kept, nothing is sent, and the failure names the next step, which works."""
    sim = sim_factory(sdk=34)
    daemon.start()
    send_id = daemon.submit({"method": "sms.send", "params": {"to": TO, "body": FIRST}})
    paused = daemon.state(send_id, TaskState.APPROVAL)
    assert sim.phone.ui.type_text(" -- no, wait")  # the person edits the draft
    # a later task runs on the phone: the daemon looks at the pending approval again
    dnd = daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}})
    daemon.state(dnd, TaskState.COMPLETED)
    daemon.wait_for(paused.id, lambda _: bool(daemon.evidence(paused.id, "approval_check")))
    stale = pending_of(daemon, paused.id)["stale"]
    assert stale["decision"] == "stale" and stale["can_approve"] is False
    assert f"phoned rerun {paused.id}" in stale["message"]

    decided = approve_with_cli(daemon, paused)
    assert decided.exit_code == 0, decided.output
    failed = daemon.state(paused.id, TaskState.FAILED)
    assert failed.failure is not None and failed.failure.reason is FailureReason.STALE_STATE
    assert f"phoned rerun {paused.id}" in failed.failure.message
    assert _sent(sim) == [] and sim.phone.ui.top().state["body"] == FIRST + " -- no, wait"

    rerun = phoned(daemon, "rerun", paused.id)  # the step the failure names
    assert rerun.exit_code == 0, rerun.output
    new = daemon.state(rerun.output.split()[-1], TaskState.APPROVAL)
    assert new.rerun_of == paused.id and new.params == {"to": TO, "body": FIRST}


def test_a_later_send_in_the_conversation_leaves_an_empty_composer_and_the_first_is_sent(
    daemon: Daemon, sim_factory: Any
) -> None:
    """A later task sent another message to the recipient (the composer is empty now):
    nothing of the person's is there to keep, so the first send drafts again; the composer
    it drafts shows what the person approved (the same digest), so it is sent without
    asking again, each message exactly once."""
    sim = sim_factory(sdk=34)
    daemon.start()
    send_id = daemon.submit({"method": "sms.send", "params": {"to": TO, "body": FIRST}})
    first = daemon.state(send_id, TaskState.APPROVAL)
    later_id = daemon.submit({"method": "sms.send", "params": {"to": TO, "body": LATER}})
    later = daemon.state(later_id, TaskState.APPROVAL)
    daemon.approve(later)
    daemon.state(later_id, TaskState.COMPLETED)
    assert sim.phone.ui.top().state["body"] == ""
    daemon.approve(first)
    daemon.state(send_id, TaskState.COMPLETED)
    assert _sent(sim) == [(TO, LATER), (TO, FIRST)]
    (resumed,) = daemon.evidence(send_id, "resume_check")
    assert resumed["body"]["decision"] == "void_approval"
    outcomes = [d["body"] for d in daemon.evidence(send_id, "outcome")]
    assert [o["status"] for o in outcomes] == ["needs_approval", "met"]
    assert outcomes[-1]["detail"]["approval_held"]["digest"] == first.approval_digest
