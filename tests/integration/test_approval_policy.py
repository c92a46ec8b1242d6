"""Issue #26 items 3 and 4 through the real ``phoned run`` on a simulated phone: an
approval for any change when the owner wants one, and the card that shows all of it.

* a task's ``require_approval: true`` on ``dnd.set`` pauses with a preview of the change
  read from the phone (``zen_mode 0 (off) -> 1 (priority)``); approve: done, read back;
  deny: ``stopped``/``approval_denied``, nothing changed;
* the phone changed between asking and approving: the approval is void, nothing changed,
  a fresh preview (from the new value) is asked for;
* the config's policy by source (``approval.sources: [voice]``) and by method
  (``approval.methods: [wifi.set]``); a read never asks; bluetooth.set shows its preview;
  a change that cannot show a preview (if any is left), caught by the policy, is not run;
* the card: conversation, source, the planner's rationale (verbatim, escaped in
  ``phoned show``), effect, target, data, and that a denial ends the task.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from phoned.daemon.cli import main
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.planning.catalogue import example_params
from phoned.daemon.rendering.approval_view import AFTER_DENIAL
from phoned.daemon.rendering.render import render_json
from phoned.device.actions.registry import REGISTRY
from phoned_process import Daemon, daemon_env, fresh_daemon

pytestmark = pytest.mark.integration

CONV = "conv-e2e"
# HTML, an ANSI escape (clear screen) and a newline: shown, never obeyed
RATIONALE = 'Мeeting at 8 <script>alert("x")</script> \x1b[2J\nsecond line'


def phoned(daemon: Daemon, *args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--queue", f"sqlite:///{daemon.queue}"])


def pending_of(daemon: Daemon, task_id: str) -> dict[str, Any]:
    """The pending approval as ``phoned show --json`` and ``GET /v1/tasks/{id}`` give it."""

    def read(store: Any) -> dict[str, Any]:
        return render_json(store.get(task_id), store.evidence(task_id), [], [])

    pending: dict[str, Any] = daemon.using(read)["pending_approval"]
    assert pending is not None
    return pending


def decide(daemon: Daemon, verb: str, task: TaskRecord) -> Result:
    assert task.approval_digest is not None
    argv = [verb, task.id, "--revision", str(task.revision), "--digest", task.approval_digest]
    result = phoned(daemon, *argv, "--conversation", CONV)
    assert result.exit_code == 0, result.output
    return result


@contextlib.contextmanager
def voice_policy_daemon(adb_server: Any, tmp_path: Path, method: str) -> Iterator[Daemon]:
    """A ``phoned run`` (not started) whose config asks for approval of every change from
    ``voice`` and of every ``method``."""
    env = daemon_env(
        adb_server.port, tmp_path / "state",
        PHONED_CONFIG="/dev/null", PHONED_APPROVAL_SOURCES="voice",
        PHONED_APPROVAL_METHODS=method,
    )  # fmt: skip
    with fresh_daemon(env, tmp_path) as made:
        yield made


@pytest.fixture
def policy_daemon(adb_server: Any, tmp_path: Path) -> Iterator[Daemon]:
    """The voice policy, with every ``wifi.set`` asking too."""
    with voice_policy_daemon(adb_server, tmp_path, "wifi.set") as made:
        yield made


def _dnd_change_paused(daemon: Daemon, sim_factory: Any, mode: str) -> tuple[Any, str, TaskRecord]:
    """A ``dnd.set`` to ``mode`` with ``require_approval``, run by the daemon on a fresh
    phone: the phone, the task's id and its record once paused for the approval."""
    sim = sim_factory(sdk=34)
    daemon.start()
    task_id = daemon.submit(
        {"method": "dnd.set", "params": {"mode": mode}, "require_approval": True}
    )
    return sim, task_id, daemon.state(task_id, TaskState.APPROVAL)


def test_require_approval_pauses_with_a_from_to_preview_and_approve_completes(
    daemon: Daemon, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    task_id = daemon.submit(
        {"method": "dnd.set", "params": {"mode": "priority"}, "require_approval": True,
         "rationale": RATIONALE}
    )  # fmt: skip
    paused = daemon.state(task_id, TaskState.APPROVAL)
    assert sim.phone.settings.get("global", "zen_mode") == "0"  # nothing changed yet
    assert daemon.using(lambda store: store.journal(task_id)) == []  # no effect admitted

    # the card (show --json, the API): origin, rationale verbatim, what, whom, data, denial
    pending = pending_of(daemon, task_id)
    assert pending["effect"] == "dnd.set" and pending["target"] == "zen_mode"
    assert pending["change"] == "zen_mode 0 (off) -> 1 (priority)"
    assert pending["data"] == {
        "before": "0 (off)", "after": "1 (priority)", "change": "zen_mode 0 (off) -> 1 (priority)"
    }  # fmt: skip
    assert (pending["conversation_id"], pending["source"]) == (CONV, "cli")
    assert pending["rationale"] == RATIONALE
    assert pending["after_denial"] == AFTER_DENIAL and pending["can_continue_after_denial"] is False
    assert pending["digest"] == paused.approval_digest

    # phoned show: the same card, the rationale's control characters shown, not obeyed
    shown = phoned(daemon, "show", task_id).output
    assert "change      zen_mode 0 (off) -> 1 (priority)" in shown
    assert "source cli" in shown and AFTER_DENIAL in shown
    assert "<script>" in shown and "\x1b" not in shown and "second line" in shown
    assert "\\nsecond line" in shown or "\\\\nsecond line" in shown

    decide(daemon, "approve", paused)
    done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED, TaskState.APPROVAL)
    assert done.state is TaskState.COMPLETED, done.failure
    assert done.observed_target == "dnd.priority"
    assert sim.phone.settings.get("global", "zen_mode") == "1"
    outcome = daemon.evidence(task_id, "outcome")[-1]["body"]
    assert outcome["status"] == "met" and outcome["evidence"]["target"]["met"] is True


def test_deny_stops_the_task_and_nothing_changes(daemon: Daemon, sim_factory: Any) -> None:
    sim, task_id, paused = _dnd_change_paused(daemon, sim_factory, "alarms")
    assert pending_of(daemon, task_id)["change"] == "zen_mode 0 (off) -> 3 (alarms)"
    decide(daemon, "deny", paused)
    stopped = daemon.state(task_id, TaskState.STOPPED)
    assert stopped.failure is not None
    assert stopped.failure.reason is FailureReason.APPROVAL_DENIED
    assert sim.phone.settings.get("global", "zen_mode") == "0"


def test_a_change_on_the_phone_before_the_approval_voids_it(
    daemon: Daemon, sim_factory: Any
) -> None:
    sim, task_id, paused = _dnd_change_paused(daemon, sim_factory, "priority")
    assert pending_of(daemon, task_id)["change"] == "zen_mode 0 (off) -> 1 (priority)"

    # the person set alarms from quick settings meanwhile (the service's own write)
    sim.phone.settings.put("global", "zen_mode", "3", notify=False)
    decide(daemon, "approve", paused)
    again = daemon.wait_for(
        task_id,
        lambda t: (
            t.state is not TaskState.QUEUED
            and t.state_version > paused.state_version + 1
            and t.state is not TaskState.RUNNING
            and t.state is not TaskState.DISPATCHED
        ),
    )
    assert again.state is TaskState.APPROVAL, again.failure
    assert again.approval_status == "pending"
    assert again.approval_digest != paused.approval_digest
    assert sim.phone.settings.get("global", "zen_mode") == "3"  # nothing done on it
    outcome = daemon.evidence(task_id, "outcome")[-1]["body"]
    assert outcome["status"] == "needs_approval" and outcome["detail"]["approval_void"] is True
    assert pending_of(daemon, task_id)["change"] == "zen_mode 3 (alarms) -> 1 (priority)"

    decide(daemon, "approve", again)
    done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED)
    assert done.state is TaskState.COMPLETED, done.failure
    assert sim.phone.settings.get("global", "zen_mode") == "1"


def test_the_policy_by_source_and_by_method_and_reads_never_ask(
    policy_daemon: Daemon, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon = policy_daemon
    daemon.start()

    # every change from source: voice asks; the same from the cli does not
    voice = daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}, "source": "voice"})
    daemon.state(voice, TaskState.APPROVAL)
    pending = pending_of(daemon, voice)
    assert pending["source"] == "voice" and pending["rationale"] is None
    assert pending["change"] == "zen_mode 0 (off) -> 1 (priority)"
    volume = daemon.submit(
        {"method": "volume.set", "params": {"stream": "music", "level": 9}, "source": "voice"}
    )
    daemon.state(volume, TaskState.APPROVAL)
    assert pending_of(daemon, volume)["change"].startswith("volume music ")
    assert pending_of(daemon, volume)["change"].endswith(" -> 9")

    cli = daemon.submit({"method": "brightness.set", "params": {"level": 200}})
    assert daemon.state(cli, TaskState.COMPLETED, TaskState.FAILED, TaskState.APPROVAL).state is (
        TaskState.COMPLETED
    )

    # a read from voice never asks
    read = daemon.submit({"method": "dnd.get", "params": {}, "source": "voice"})
    assert daemon.state(read, TaskState.COMPLETED, TaskState.FAILED, TaskState.APPROVAL).state is (
        TaskState.COMPLETED
    )

    # approval.methods: wifi.set asks whatever its source
    wifi = daemon.submit({"method": "wifi.set", "params": {"enabled": False}})
    daemon.state(wifi, TaskState.APPROVAL)
    assert pending_of(daemon, wifi)["change"] == "wifi enabled -> disabled"

    # bluetooth.set shows its preview too now: the adapter state read from the phone
    bt = daemon.submit({"method": "bluetooth.set", "params": {"enabled": True}, "source": "voice"})
    daemon.state(bt, TaskState.APPROVAL)
    assert pending_of(daemon, bt)["change"] == "bluetooth adapter OFF -> ON"

    # a change the policy catches that cannot show a preview is not run at all
    name = next(
        (n for n, m in REGISTRY.items() if m.changes and not (m.previews or m.approval)), None
    )
    if name is not None:
        other = daemon.submit({"method": name, "params": example_params(name), "source": "voice"})
        failed = daemon.state(other, TaskState.FAILED, TaskState.COMPLETED, TaskState.APPROVAL)
        assert failed.state is TaskState.FAILED and failed.failure is not None
        assert failed.failure.reason is FailureReason.UNSUPPORTED
        assert "cannot show a preview" in failed.failure.message
        assert daemon.using(lambda store: store.journal(other)) == []
    assert sim.phone.settings.get("global", "zen_mode") == "0"


def test_the_stale_check_at_resume_doubts_the_approval_and_an_identical_preview_holds(
    daemon: Daemon, sim_factory: Any
) -> None:
    """SPEC §7 with issue 34: the resume check's fresh snapshot differs from the pause
    snapshot (the screen went off), so the approval is in doubt; the change is read again
    and its preview (zen_mode 0 -> 1, read from the phone now) is the one approved, digest
    included: it is made without asking again, and the evidence says so. (A setting that
    reads otherwise now asks again: ``test_a_change_on_the_phone_before_the_approval_voids_it``.)"""
    sim, task_id, paused = _dnd_change_paused(daemon, sim_factory, "priority")
    sim.phone.ui.sleep()  # the person turned the screen off meanwhile
    decide(daemon, "approve", paused)
    done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED)
    assert done.state is TaskState.COMPLETED, done.failure
    (check,) = daemon.evidence(task_id, "resume_check")
    assert check["body"]["decision"] == "void_approval" and "screen_on" in check["body"]["diff"]
    outcomes = [d["body"] for d in daemon.evidence(task_id, "outcome")]
    assert [o["status"] for o in outcomes] == ["needs_approval", "met"]
    held = outcomes[-1]["detail"]["approval_held"]
    assert held["digest"] == paused.approval_digest and held["resume_check"] == check["ref"]
    assert sim.phone.settings.get("global", "zen_mode") == "1"
