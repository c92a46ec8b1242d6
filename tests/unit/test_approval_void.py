"""Issue #23 point 3 (pure parts): which change voids an approval and which one cannot go on,
how the fresh preview says so, and the marks a pending approval shows (``approval_view``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from helpers import task_record
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.rendering.approval_view import approval_lines, pending_approval
from phoned.daemon.runtime.executor import stale_message, voided
from phoned.daemon.runtime.staleness import decide
from phoned.device.actions.base import Outcome, Status
from phoned.device.actions.snapshot import Snapshot
from phoned.device.evidence import Evidence
from phoned.device.private import redact_text

BODY, LATER = "see you at 8", "make it 9"
COMPOSER = {"package": "com.google.android.apps.messaging", "activity": ".ui.ConversationActivity"}
DIGEST = "sha256:" + "ab" * 32


def _task(method: str = "sms.send", **changes: Any) -> TaskRecord:
    """The task paused for approval of revision 1's preview (digest ``DIGEST``)."""
    awaiting = {"state": TaskState.APPROVAL, "state_version": 4, "approval_digest": DIGEST,
                "approval_status": "pending", "approval_revision": 1}  # fmt: skip
    params = {"to": "+15551234567", "body": BODY}
    return task_record(method=method, params=params, **{**awaiting, **changes})


def _snap(text: str | None = BODY, digest: str = "d1") -> Snapshot:
    return Snapshot(
        level="full",
        taken_at=0.0,
        foreground=COMPOSER,
        screen_on=True,
        locked=False,
        hierarchy_digest=digest,
        texts={
            "front_app": COMPOSER["package"],
            "recipient_shown": True,
            "compose_text": None if text is None else redact_text(text),
        },
    )


def test_a_draft_a_later_task_of_phoned_wrote_voids_the_approval() -> None:
    later = _snap(LATER, "d2")
    assert decide(_task(), True, _snap(), later)[0] == "stale"  # nobody of phoned wrote it
    decision, diff = decide(_task(), True, _snap(), later, {redact_text(LATER)})
    assert decision == "void_approval" and set(diff) == {"texts", "hierarchy_digest"}
    assert decide(_task("sms.draft"), False, _snap(), later, {redact_text(LATER)})[0] == "recheck"


def test_an_emptied_composer_holds_nothing_of_the_persons_to_keep() -> None:
    assert decide(_task(), True, _snap(), _snap("", "d2"))[0] == "void_approval"


def test_a_persons_own_text_still_cannot_go_on_and_the_failure_names_the_rerun() -> None:
    assert decide(_task(), True, _snap(), _snap(BODY + " (no)", "d2"), {LATER})[0] == "stale"
    message = stale_message(_task(), {"texts": {}, "hierarchy_digest": {}})
    assert "phoned rerun t1" in message and "asks for approval" in message
    assert "hierarchy_digest, texts" in message and BODY not in message
    assert "asks for approval" not in stale_message(_task("sms.draft"), {"texts": {}})


def _outcome(status: Status, **detail: Any) -> Outcome:
    ev = Evidence(method="sms.send", device={}, commands=(), observations=(), target={})
    return Outcome(status=status, method="sms.send", evidence=ev, message="m", detail=detail)


def test_a_fresh_preview_after_a_void_approval_says_so() -> None:
    why = "the phone changed after the preview was shown (texts)"
    void: dict[str, Any] = {"why": why, "changed": ["texts"]}
    asked = voided(_outcome(Status.NEEDS_APPROVAL, preview_digest=DIGEST), void)
    assert asked.detail == {"preview_digest": DIGEST, "approval_void": True, "voided": void}
    assert asked.message.startswith(why) and "approve this fresh preview" in asked.message
    met = _outcome(Status.MET)
    assert voided(met, void) is met  # only a preview asked for carries the mark
    plain = _outcome(Status.NEEDS_APPROVAL)
    assert voided(plain, None) is plain


def test_an_effect_made_under_a_held_approval_says_the_fresh_preview_was_identical() -> None:
    """Issue 34: the approval in doubt covered the fresh preview (same digest): the outcome
    names the digest; a fresh preview asked for again is still marked void."""
    void: dict[str, Any] = {"why": "w", "changed": ["texts"], "resume_check": "ev-r"}
    held = voided(_outcome(Status.MET), void, DIGEST)
    assert held.detail["approval_held"] == {
        "message": f"fresh preview identical to the approved one, digest {DIGEST}",
        "digest": DIGEST, "changed": ["texts"], "resume_check": "ev-r",
    }  # fmt: skip
    assert "approval_void" not in held.detail
    asked = voided(_outcome(Status.NEEDS_APPROVAL, preview_digest="sha256:other"), void, None)
    assert asked.detail["approval_void"] is True and "approval_held" not in asked.detail
    met = _outcome(Status.MET)
    assert voided(met, None, DIGEST) is met  # nothing was in doubt: nothing to say


def test_an_approval_in_doubt_is_offered_to_the_step_only_while_it_has_not_expired(
    tmp_path: Path,
) -> None:
    """``step_context(void_approval=True)`` keeps the approved digest for the action to
    compare while the approval window is open, and drops it once it has closed."""
    from phoned.daemon.runtime.attempt.records import Attempt, ExecutorSettings
    from phoned.daemon.runtime.attempt_evidence import AttemptEvidence
    from phoned.daemon.store.sqlite_store import SqliteStore
    from phoned.device.actions.registry import method

    clock = [100.0]
    store = SqliteStore(str(tmp_path / "q.db"))
    settings = ExecutorSettings(clock=lambda: clock[0])
    evidence = AttemptEvidence(None)  # type: ignore[arg-type]
    run = Attempt(store, None, settings, evidence, method("sms.send"))  # type: ignore[arg-type]
    approved = _task(approval_status="approved", approval_deadline=150.0)
    assert run.step_context(approved, void_approval=True).approval_digest == DIGEST
    assert run.step_context(approved).approval_digest == DIGEST
    clock[0] = 151.0
    assert run.step_context(approved, void_approval=True).approval_digest is None
    assert run.step_context(approved).approval_digest == DIGEST  # nothing in doubt
    no_window = replace(approved, approval_deadline=None)
    assert run.step_context(no_window, void_approval=True).approval_digest is None
    store.close()


def _doc(kind: str, body: dict[str, Any], attempt: int = 1, at: float = 1.0) -> dict[str, Any]:
    return {"ref": f"ev-{kind}-{at}", "attempt": attempt, "kind": kind, "body": body,
            "created_at": at}  # fmt: skip


def test_the_pending_approval_shows_a_void_mark_and_a_stale_mark() -> None:
    void = {"why": "the phone changed after the preview was shown (texts)", "changed": ["texts"],
            "resume_check": "ev-r"}  # fmt: skip
    asked = {"status": "needs_approval",
             "detail": {"preview_digest": DIGEST, "approval_void": True, "voided": void}}  # fmt: skip
    evidence = [_doc("outcome", asked, at=1.0), _doc("pause_snapshot", {}, at=2.0)]
    pending = pending_approval(_task(), None, evidence)
    assert pending is not None and pending["stale"] is None
    assert pending["void"]["changed"] == ["texts"] and pending["void"]["resume_check"] == "ev-r"
    assert pending["void"]["message"].startswith("The approval given before is void: the phone")

    check = {"decision": "void_approval", "diff": {"texts": {}}, "after_task": "t2"}
    pending = pending_approval(_task(), None, [*evidence, _doc("approval_check", check, at=3.0)])
    assert pending is not None
    stale = pending["stale"]
    assert (stale["decision"], stale["can_approve"], stale["after_task"]) == (
        "void_approval",
        True,
        "t2",
    )
    assert stale["changed"] == ["texts"] and stale["checked_at"] == 3.0
    lines = approval_lines(pending)
    assert pending["void"]["message"] in " ".join(lines) and stale["message"] in " ".join(lines)
    assert lines.index(f"  {stale['message']}") < lines.index("  to approve:")


def test_a_stale_mark_holds_until_the_next_pause_and_says_when_approving_can_only_fail() -> None:
    edited = {"decision": "stale", "diff": {"texts": {}, "hierarchy_digest": {}}}
    evidence = [_doc("pause_snapshot", {}, at=1.0), _doc("approval_check", edited, at=2.0)]
    pending = pending_approval(_task(), None, evidence)
    assert pending is not None and pending["void"] is None
    assert pending["stale"]["can_approve"] is False
    assert "phoned rerun t1" in pending["stale"]["message"]
    back = {"decision": "continue", "diff": {}}  # the phone shows the preview's context again
    pending = pending_approval(_task(), None, [*evidence, _doc("approval_check", back, at=3.0)])
    assert pending is not None and pending["stale"] is None
    pending = pending_approval(_task(), None, [*evidence, _doc("pause_snapshot", {}, at=3.0)])
    assert pending is not None and pending["stale"] is None  # a newer preview: not checked yet
    other_attempt = [_doc("approval_check", edited, attempt=2, at=4.0)]
    pending = pending_approval(_task(), None, [*evidence[:1], *other_attempt])
    assert pending is not None and pending["stale"] is None
