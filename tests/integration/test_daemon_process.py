"""The real ``phoned`` process against simulated phones through a private adb server.

Tasks are submitted to the same SQLite file the daemon uses; the tests then watch the
queue and the phones' command logs. Nothing of our own is mocked.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned_process import REPO, RUN_ONCE, Daemon

pytestmark = pytest.mark.integration


def _count(sim, *argv: str) -> int:
    return sum(1 for a in sim.phone.log.argvs() if a[: len(argv)] == argv)


def test_daemon_runs_a_dnd_task_to_completed_with_evidence(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    task_id = daemon.submit({"method": "dnd.set", "params": {"mode": "alarms"}})
    task = daemon.state(task_id, TaskState.COMPLETED)
    assert task.observed_target == "dnd.alarms"
    assert sim.phone.notification.zen_mode == 3
    store = daemon.store()
    (doc,) = store.evidence(task_id)
    store.close()
    assert doc["body"]["status"] == "met"
    phases = [o["phase"] for o in doc["body"]["evidence"]["observations"]]
    assert "before" in phases and "after" in phases
    daemon.signal(signal.SIGTERM)
    assert daemon.wait() == 0


def test_hotplug_device_appears_leaves_and_returns(daemon: Daemon, sim_factory, adb_server) -> None:
    daemon.start()
    time.sleep(1.0)  # the daemon is up with no phone attached
    sim = sim_factory(sdk=33)
    first = daemon.submit({"method": "bluetooth.get", "params": {}, "device": sim.serial})
    daemon.state(first, TaskState.COMPLETED)
    adb_server.adb("disconnect", sim.serial)
    sim.stop()
    assert adb_server.wait_state(sim.serial, {None}) is None
    second = daemon.submit({"method": "dnd.get", "params": {}, "device": sim.serial})
    time.sleep(1.5)
    assert daemon.task(second).state is TaskState.QUEUED  # nobody serves a phone that is gone
    sim.start()
    adb_server.connect(sim)
    daemon.state(second, TaskState.COMPLETED)


def test_two_devices_each_task_runs_on_its_own_phone(daemon: Daemon, sim_factory) -> None:
    a, b = sim_factory(sdk=34), sim_factory(sdk=30)
    daemon.start()
    ta = daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}, "device": a.serial})
    tb = daemon.submit(
        {"method": "dnd.set", "params": {"mode": "total_silence"}, "device": b.serial}
    )
    assert daemon.state(ta, TaskState.COMPLETED).device == a.serial
    assert daemon.state(tb, TaskState.COMPLETED).device == b.serial
    assert (a.phone.notification.zen_mode, b.phone.notification.zen_mode) == (1, 2)
    assert _count(a, "cmd", "notification", "set_dnd") == 1
    assert _count(b, "cmd", "notification", "set_dnd") == 1


def _bluetooth_under_way(daemon: Daemon, sim: Any, turn_on_s: float) -> str:
    """The daemon started and a bluetooth.set that takes ``turn_on_s`` on ``sim`` under way:
    its task id, once the phone ran the enable command."""
    sim.phone.bluetooth.TURN_ON_S = turn_on_s
    daemon.start()
    task_id = daemon.submit({"method": "bluetooth.set", "params": {"enabled": True}})
    daemon.wait_for(task_id, lambda t: _count(sim, "cmd", "bluetooth_manager", "enable") == 1)
    return task_id


def test_sigterm_lets_the_running_task_finish_then_exits_zero(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    task_id = _bluetooth_under_way(daemon, sim, 2.0)
    daemon.signal(signal.SIGTERM)
    assert daemon.wait(timeout=30) == 0
    assert daemon.task(task_id).state is TaskState.COMPLETED
    assert sim.phone.bluetooth.state == "ON"


def test_second_signal_stops_now_and_reports_the_task(
    daemon: Daemon, daemon_env, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    daemon.env = {**daemon_env, "PHONED_SETTLE_TIMEOUT": "30"}
    task_id = _bluetooth_under_way(daemon, sim, 20.0)
    daemon.signal(signal.SIGTERM)
    time.sleep(0.5)
    daemon.signal(signal.SIGINT)
    assert daemon.wait(timeout=10) == 0
    task = daemon.task(task_id)
    assert task.failure is not None and task.failure.reason is FailureReason.RUNTIME_RECOVERY
    assert task.state is TaskState.QUEUED  # retryable, attempts left


def test_sigkill_mid_task_then_restart_recovers_without_repeating(
    daemon: Daemon, daemon_env, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    task_id = _bluetooth_under_way(daemon, sim, 3.0)
    daemon.signal(signal.SIGKILL)
    daemon.wait()
    assert daemon.task(task_id).state is TaskState.RUNNING  # lost with the process
    daemon.start()
    task = daemon.state(task_id, TaskState.COMPLETED)
    assert task.attempt == 2
    assert task.failure is not None  # what ended attempt 1 stays on record
    assert task.failure.reason is FailureReason.RUNTIME_RECOVERY
    # the second attempt saw TURNING_ON from the first one and only verified it
    assert _count(sim, "cmd", "bluetooth_manager", "enable") == 1
    store = daemon.store()
    (doc,) = store.evidence(task_id)
    journal = store.journal(task_id)
    store.close()
    assert any("no command sent" in n for n in doc["body"]["evidence"]["notes"])
    assert [e.outcome.value if e.outcome else None for e in journal] == ["confirmed_success"]


def _once(
    env: dict[str, str], tmp_path: Path, *args: str, task: dict[str, Any] | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [*RUN_ONCE, *args]
    if task is not None:
        path = tmp_path / "task.json"
        path.write_text(json.dumps({"conversation_id": "conv-once", **task}))
        argv += ["--task", str(path)]
    return subprocess.run(
        argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("task", "code", "state"),
    [
        ({"method": "dnd.set", "params": {"mode": "priority"}}, 0, "completed"),
        ({"method": "volume.set", "params": {"stream": "music", "level": 99}}, 1, "failed"),
        ({"method": "sms.send", "params": {"to": "+15551234567", "body": "hi"}}, 4, "approval"),
    ],
)
def test_once_exit_codes_for_tasks(
    daemon_env, sim_factory, tmp_path: Path, task, code: int, state: str
) -> None:
    sim = sim_factory(sdk=34)
    result = _once(daemon_env, tmp_path, "--serial", sim.serial, task=task)
    assert result.returncode == code, result.stderr
    assert json.loads(result.stdout)["task"]["state"] == state


def test_once_reads_a_task_file_as_submit_does(daemon_env, sim_factory, tmp_path: Path) -> None:
    """One reader for both: a YAML dial string stays text (``submit`` accepts it), and a
    broken file is one line naming the file, exit 2."""
    sim = sim_factory(sdk=34)
    path = tmp_path / "task.yaml"
    path.write_text(
        "conversation_id: conv-once\nmethod: sms.send\nparams:\n  to: +15551234567\n  body: hi\n"
    )
    argv = [*RUN_ONCE, "--serial", sim.serial]
    ok = subprocess.run(
        [*argv, "--task", str(path)], env=daemon_env, cwd=REPO, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ok.returncode == 4, ok.stderr  # paused for approval, the number read as text
    assert json.loads(ok.stdout)["task"]["params"]["to"] == "+15551234567"
    path.write_text("method: [dnd.set\n")
    bad = subprocess.run(
        [*argv, "--task", str(path)], env=daemon_env, cwd=REPO, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "neither JSON nor YAML" in bad.stderr


def test_once_exit_3_when_no_task_within_the_wait(daemon_env, sim_factory, tmp_path: Path) -> None:
    sim = sim_factory(sdk=34)
    started = time.monotonic()
    result = _once(daemon_env, tmp_path, "--serial", sim.serial, "--wait", "1")
    assert result.returncode == 3
    assert time.monotonic() - started >= 1
    assert "no task" in result.stderr


def test_once_exit_2_names_a_bad_config_key(daemon_env, sim_factory, tmp_path: Path) -> None:
    sim = sim_factory(sdk=34)
    result = _once({**daemon_env, "PHONED_LEASE_SECONDS": "soon"}, tmp_path, "--serial", sim.serial)
    assert result.returncode == 2
    assert "lease_seconds" in result.stderr and "Traceback" not in result.stderr


def test_once_exit_5_when_cancelled_mid_task(
    daemon: Daemon, daemon_env, sim_factory, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34, slow_ms=800)
    task_id = daemon.submit(
        {"method": "dnd.set", "params": {"mode": "priority"}, "device": sim.serial}
    )
    argv = [*RUN_ONCE, "--serial", sim.serial]
    proc = subprocess.Popen(
        argv, env=daemon_env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    daemon.state(task_id, TaskState.RUNNING)
    store = daemon.store()
    store.cancel(task_id, "conv-e2e", time.time())
    store.close()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err
    assert json.loads(out)["task"]["state"] == "stopped"
    assert _count(sim, "cmd", "notification", "set_dnd") == 0


EVERY_METHOD = [
    ("dnd.set", {"mode": "total_silence"}, 0),
    ("dnd.get", {}, 0),
    ("bluetooth.set", {"enabled": True}, 0),
    ("bluetooth.get", {}, 0),
    ("volume.set", {"stream": "alarm", "percent": 50}, 0),
    ("volume.get", {"stream": "ring"}, 0),
    ("sms.draft", {"to": "+15551234567", "body": "on my way; $(reboot) `id` 🙂"}, 0),
    ("sms.send", {"to": "+15551234567", "body": "hi"}, 4),
    ("permission.check", {"package": "com.example.notes", "special": "dnd_access"}, 0),
    (
        "permission.request",
        {"package": "com.example.notes", "permission": "android.permission.CAMERA"},
        4,
    ),
    ("screen.snapshot", {}, 0),
]


@pytest.mark.parametrize(
    ("method", "params", "code"), EVERY_METHOD, ids=[m[0] for m in EVERY_METHOD]
)
def test_once_runs_every_method_through_the_contract(
    daemon_env, sim_factory, tmp_path: Path, method: str, params: dict[str, Any], code: int
) -> None:
    sim = sim_factory(sdk=34)
    sim.phone.bluetooth.TURN_ON_S = 0.2
    result = _once(
        daemon_env, tmp_path, "--serial", sim.serial, task={"method": method, "params": params}
    )
    assert result.returncode == code, result.stdout[-2000:] + result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["task"]["method"] == method
    assert report["evidence"], "every attempt keeps its evidence"
