"""sms.send through the real daemon when Messages sends a chat (RCS) message (issue #11).

The SMS provider never stores a chat message; the daemon must complete the task from what
the conversation shows, fail it when the app says "Not sent", and end it ``outcome_unknown``
(final, never sent again) when nothing on the phone decides.
"""

from __future__ import annotations

from typing import Any

import pytest
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.sim import scenarios
from phoned_process import Daemon

pytestmark = pytest.mark.integration

TO, BODY = "+15551234567", "Chat features are on"


def _send_and_approve(daemon: Daemon, sim_factory: Any, scenario: str) -> tuple[Any, TaskRecord]:
    """A phone set up by ``scenario``, the daemon started, the message sent and approved:
    the simulator and the ended task."""
    sim = sim_factory(sdk=34)
    scenarios.apply(sim.phone, scenario)
    daemon.start()
    task_id = daemon.submit(
        {"method": "sms.send", "params": {"to": TO, "body": BODY}, "conversation_id": "chat"}
    )
    daemon.approve(daemon.state(task_id, TaskState.APPROVAL))
    return sim, daemon.wait_for(
        task_id, lambda t: t.state in (TaskState.COMPLETED, TaskState.FAILED)
    )


def _taps(sim) -> list[Any]:
    return sim.phone.log.entries("click") + [
        a for a in sim.phone.log.argvs() if a[:2] == ("input", "tap")
    ]


def _action_evidence(daemon: Daemon, task_id: str) -> dict[str, Any]:
    body: dict[str, Any] = daemon.evidence(task_id, "outcome")[-1]["body"]
    return body


def test_a_delivered_chat_message_completes_from_the_conversation(
    daemon: Daemon, sim_factory
) -> None:
    sim, done = _send_and_approve(daemon, sim_factory, "chat-send")
    assert done.state is TaskState.COMPLETED, done.failure
    assert sim.phone.sms.messages("sent") == []
    assert len(_taps(sim)) == 1
    assert _action_evidence(daemon, done.id)["detail"]["proved_by"] == "conversation"


def test_a_chat_message_stuck_sending_ends_outcome_unknown_and_is_never_resent(
    daemon: Daemon, sim_factory
) -> None:
    sim, done = _send_and_approve(daemon, sim_factory, "chat-send:stuck")
    assert done.state is TaskState.FAILED
    assert done.failure is not None and done.failure.reason is FailureReason.OUTCOME_UNKNOWN
    assert "Sending" in done.failure.message
    assert len(_taps(sim)) == 1  # no retry tapped send again
