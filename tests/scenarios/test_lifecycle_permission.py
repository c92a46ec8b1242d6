"""Issue #13 item 7 (SPEC §7): a runtime-permission dialog answered by the person. The daemon
never taps; once the dialog is gone the task resumes into a fresh check that must observe
the grant the app lacked, else it fails ``permission_denied`` at once (not after the TTL).
Also the simulator scenario ``permission-dialog:com.google.android.apps.messaging``: Allow
grants what the dialog asked (no SecurityException).

The real ``phoned run`` process serves a simulated phone through the real adb server; the
test plays the person by tapping the dialog's own buttons on the simulated screen.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.lifecycle.waiting import WaitKind
from phoned.sim import scenarios
from phoned.sim.server import Simulator
from phoned.sim.ui.views import find_by_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from phoned_process import Daemon, daemon_env, fresh_daemon

pytestmark = pytest.mark.integration

MESSAGING = "com.google.android.apps.messaging"
SEND_SMS = "android.permission.SEND_SMS"
TO, BODY = "+15551234567", "see you at eight"
TERMINAL = (TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED)
CONTROLLERS = ("com.android.permissioncontroller", "com.google.android.permissioncontroller")


@pytest.fixture
def daemon(adb_server, tmp_path: Path) -> Iterator[Daemon]:
    env = daemon_env(adb_server.port, tmp_path / "state", PHONED_SETTLE_TIMEOUT="3")
    with fresh_daemon(env, tmp_path) as made:
        yield made


def _tap(sim: Simulator, *suffixes: str) -> None:
    """The person taps the first of the dialog's buttons named by ``suffixes``."""
    ui = sim.phone.ui
    for suffix in suffixes:
        for pkg in CONTROLLERS:
            view = find_by_id(ui.windows(), f"{pkg}:id/{suffix}")
            if view is not None:
                left, top, right, bottom = view.bounds
                ui.tap((left + right) // 2, (top + bottom) // 2)
                return
    raise AssertionError(f"no {suffixes} button on screen")


def _paused_on_the_dialog(daemon: Daemon, sim_factory) -> tuple[Simulator, str]:
    sim: Simulator = sim_factory(sdk=34)
    scenarios.apply(sim.phone, f"permission-dialog:{MESSAGING}")
    daemon.start()
    task_id = daemon.submit({"method": "sms.draft", "params": {"to": TO, "body": BODY}})
    paused = daemon.state(task_id, TaskState.PERMISSION)
    waiting = paused.waiting
    assert waiting is not None and waiting.kind is WaitKind.PERMISSION_DIALOG
    assert (waiting.package, waiting.missing) == (MESSAGING, (SEND_SMS,))
    time.sleep(1.5)  # the watcher checks every second; nobody taps for the person
    assert daemon.task(task_id).state is TaskState.PERMISSION
    return sim, task_id


def test_a_denied_dialog_fails_permission_denied_at_the_fresh_check(
    daemon: Daemon, sim_factory
) -> None:
    sim, task_id = _paused_on_the_dialog(daemon, sim_factory)
    _tap(sim, "permission_deny_button", "permission_deny_and_dont_ask_again_button")
    failed = daemon.state(task_id, *TERMINAL, timeout=20)  # the TTL is 600 s
    assert failed.state is TaskState.FAILED and failed.failure is not None
    assert failed.failure.reason is FailureReason.PERMISSION_DENIED
    assert SEND_SMS in failed.failure.message and failed.attempt == 1
    (wait,) = daemon.evidence(task_id, "permission_wait")
    (recheck,) = daemon.evidence(task_id, "permission_recheck")
    assert wait["body"]["target"]["missing"] == [SEND_SMS]
    assert recheck["body"]["target"]["still_denied"] == [SEND_SMS]
    assert recheck["ref"] in failed.evidence_refs
    assert not sim.phone.packages.is_granted(MESSAGING, SEND_SMS)


def test_an_allowed_dialog_grants_and_the_task_resumes_to_its_target(
    daemon: Daemon, sim_factory
) -> None:
    sim, task_id = _paused_on_the_dialog(daemon, sim_factory)
    _tap(sim, "permission_allow_foreground_only_button", "permission_allow_button")
    assert sim.phone.packages.is_granted(MESSAGING, SEND_SMS)  # no SecurityException
    done = daemon.state(task_id, *TERMINAL, timeout=20)
    assert (done.state, done.observed_target) == (TaskState.COMPLETED, "sms.drafted")
    (recheck,) = daemon.evidence(task_id, "permission_recheck")
    assert recheck["body"]["target"]["still_denied"] == []
