"""The transition table, exhaustively: every allowed and every refused pair."""

from __future__ import annotations

import itertools
import json

import pytest

from phoned.daemon.lifecycle.errors import IllegalTransition, TaskTerminal
from phoned.daemon.lifecycle.states import (
    RETRYABLE,
    TERMINAL,
    TRANSITIONS,
    FailureReason,
    TaskState,
    after_failure,
    can_transition,
    requires_decision,
)
from phoned.daemon.store import rules

# The expected table, written out independently of the module (SPEC §3).
ALLOWED = {
    ("queued", "dispatched"), ("queued", "waiting"), ("queued", "stopped"),
    ("queued", "failed"),  # queued limit
    ("dispatched", "running"), ("dispatched", "queued"), ("dispatched", "failed"),
    ("dispatched", "stopped"),
    ("running", "waiting"), ("running", "approval"), ("running", "permission"),
    ("running", "completed"), ("running", "failed"), ("running", "stopped"),
    ("running", "queued"),
    ("waiting", "queued"), ("waiting", "failed"), ("waiting", "stopped"),
    ("approval", "queued"), ("approval", "failed"), ("approval", "stopped"),
    ("permission", "queued"), ("permission", "failed"), ("permission", "stopped"),
}  # fmt: skip
PAIRS = list(itertools.product(TaskState, TaskState))


def _row(state: TaskState) -> dict[str, object]:
    return {
        "id": "t1", "state": state.value, "state_version": 7, "active_s": 1.0,
        "running_since": 100.0, "lease_owner": "d/w0", "lease_until": 200.0,
        "evidence_refs": json.dumps([]),
    }  # fmt: skip


@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=[f"{a.value}->{b.value}" for a, b in PAIRS])
def test_every_pair_matches_the_expected_table(src: TaskState, dst: TaskState) -> None:
    expected = (src.value, dst.value) in ALLOWED
    assert can_transition(src, dst) is expected
    if expected:
        moved = rules.move(_row(src), dst, 150.0)
        assert moved["state"] == dst.value and moved["state_version"] == 8
    else:
        with pytest.raises((IllegalTransition, TaskTerminal)):
            rules.move(_row(src), dst, 150.0)


def test_terminal_states_have_no_exit_and_terminal_error_names_successor() -> None:
    assert {s for s in TaskState if not TRANSITIONS[s]} == set(TERMINAL)
    with pytest.raises(TaskTerminal, match="successor_of"):
        rules.move(_row(TaskState.COMPLETED), TaskState.QUEUED, 1.0)


def test_running_time_accumulates_only_while_running() -> None:
    paused = rules.move(_row(TaskState.RUNNING), TaskState.WAITING, 160.0)
    assert paused["active_s"] == 61.0 and paused["running_since"] is None
    assert paused["lease_owner"] is None and paused["lease_until"] is None


def test_retryable_classification_is_exactly_the_spec_list() -> None:
    assert {r.value for r in RETRYABLE} == {
        "device_offline", "runtime_offline", "runtime_recovery", "timeout",
    }  # fmt: skip
    final = {
        "invalid_params", "unsupported", "action_error", "verification_failed",
        "stale_state", "approval_denied", "approval_expired", "permission_denied",
        "outcome_unknown",
    }  # fmt: skip
    assert final <= {r.value for r in FailureReason if not r.retryable}


@pytest.mark.parametrize(
    ("reason", "attempt", "max_attempts", "source", "expected"),
    [
        (FailureReason.TIMEOUT, 1, 2, "cloud", TaskState.QUEUED),
        (FailureReason.TIMEOUT, 2, 2, "cloud", TaskState.FAILED),
        (FailureReason.RUNTIME_OFFLINE, 1, 2, "schedule", TaskState.FAILED),
        (FailureReason.ACTION_ERROR, 1, 5, "voice", TaskState.FAILED),
        (FailureReason.OUTCOME_UNKNOWN, 1, 5, "cli", TaskState.FAILED),
        (FailureReason.DEVICE_OFFLINE, 2, 3, "voice", TaskState.QUEUED),
    ],
)
def test_after_failure_decides_requeue(
    reason: FailureReason, attempt: int, max_attempts: int, source: str, expected: TaskState
) -> None:
    assert after_failure(reason, attempt, max_attempts, source) is expected


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.value)
def test_requires_decision_only_for_blocked_or_ended_badly(state: TaskState) -> None:
    needs = {"waiting", "approval", "permission", "failed", "stopped"}
    assert requires_decision(state) is (state.value in needs)
