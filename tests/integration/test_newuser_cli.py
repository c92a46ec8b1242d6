"""The rough edges a new user hit (issue #14), tried as a new user would: the real ``phoned``
program in a subprocess against a real SQLite file, with a daemon and a simulated phone
where the edge needs one."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.states import TaskState
from phoned_process import REPO, Daemon

pytestmark = pytest.mark.integration


def phoned(
    env: dict[str, str], *args: str, cwd: Path = REPO, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", *args], env=env, cwd=cwd, capture_output=True,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip


@pytest.fixture
def env(daemon_env: dict[str, str]) -> dict[str, str]:
    """The daemon's environment with ``phoned.daemon.cli`` importable from any working directory."""
    return {**daemon_env, "PYTHONPATH": str(REPO)}


def one_line(result: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.startswith("phoned: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_an_unopenable_queue_is_one_line_exit_2(env: dict[str, str]) -> None:
    url = "sqlite:////proc/nope/queue.db"
    one_line(phoned(env, "submit", "--method", "dnd.get", "--conversation", "c", "--queue", url),
             2, "/proc/nope")  # fmt: skip
    one_line(phoned(env, "tasks", "--queue", url), 2, "/proc/nope")


def test_reads_on_a_mistyped_path_create_nothing(env: dict[str, str], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'typo' / 'q.db'}"
    for verb in (
        ["tasks"], ["show", "abc"], ["events"], ["cancel", "abc", "--conversation", "c"],
        ["approve", "abc", "--revision", "1", "--digest", "d", "--conversation", "c"],
    ):  # fmt: skip
        one_line(phoned(env, *verb, "--queue", url), 2, "no queue at", str(tmp_path / "typo"))
    assert not (tmp_path / "typo").exists()


def test_a_relative_sqlite_url_is_under_the_working_directory(
    env: dict[str, str], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    made = phoned(env, "submit", "--method", "dnd.get", "--conversation", "c",
                  "--queue", "sqlite:///relative.db", cwd=work)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (work / "relative.db").is_file() and not Path("/relative.db").exists()
    listed = phoned(env, "tasks", "--json", "--queue", "sqlite:///relative.db", cwd=work)
    assert [t["id"] for t in json.loads(listed.stdout)] == [made.stdout.strip()]


def test_tasks_lists_newest_first_and_says_how_many_more(
    env: dict[str, str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    ids = []
    for level in range(5):
        made = phoned(env, "submit", "--method", "volume.set", "--param", "stream=music",
                      "--param", f"level={level}", "--conversation", "c", "--queue", url)  # fmt: skip
        ids.append(made.stdout.strip())
    listed = phoned(env, "tasks", "--limit", "3", "--queue", url).stdout.splitlines()
    assert [line.split()[0] for line in listed[1:4]] == ids[::-1][:3]
    assert listed[4] == "... 2 older not shown (--limit 3; narrow with --state/--device)"
    everything = phoned(env, "tasks", "--queue", url).stdout.splitlines()
    assert len(everything) == 6 and "not shown" not in everything[-1]


def test_cancel_says_what_it_did_in_a_sentence(env: dict[str, str], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    task_id = phoned(env, "submit", "--method", "dnd.get", "--conversation", "c",
                     "--queue", url).stdout.strip()  # fmt: skip
    said = phoned(env, "cancel", task_id, "--conversation", "c", "--queue", url)
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip() == (
        f"{task_id} stopped at once (revision 1, cancelled before running): nothing more will run."
    )


def test_show_prints_the_pending_preview_and_the_approve_command_that_works(
    daemon: Daemon, env: dict[str, str], sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    url = f"sqlite:///{daemon.queue}"
    body = "See you at 8 'sharp' $(reboot)"
    made = phoned(env, "submit", "--method", "sms.send", "--param", "to=+15551234567",
                  "--param", f"body={body}", "--conversation", "conv 1", "--queue", url)  # fmt: skip
    task = daemon.state(made.stdout.strip(), TaskState.APPROVAL)
    shown = phoned(env, "show", task.id, "--queue", url)
    assert shown.returncode == 0, shown.stderr
    block = shown.stdout.split("\npending approval\n", 1)[1].splitlines()
    fields = {line.split()[0]: line.split(None, 1)[1] for line in block[:5]}
    assert fields["effect"] == "sms.send" and fields["recipient"] == "+15551234567"
    assert fields["text"] == repr(body) and fields["app"] == "com.google.android.apps.messaging"
    assert Path(fields["screenshot"]).read_bytes().startswith(b"\x89PNG")
    assert f"revision 1  digest {task.approval_digest}" in block[5]
    approve = block[block.index("  to approve:") + 1].strip()
    argv = shlex.split(approve)
    assert argv[:3] == ["phoned", "approve", task.id] and "conv 1" in argv and url in argv
    doc = json.loads(phoned(env, "show", task.id, "--json", "--queue", url).stdout)
    assert doc["pending_approval"]["approve_command"] == approve
    assert doc["pending_approval"]["text"] == body
    decided = phoned(env, *argv[1:])  # the printed command, pasted
    assert decided.returncode == 0, decided.stderr
    assert daemon.state(task.id, TaskState.COMPLETED).observed_target
    assert [m["body"] for m in sim.phone.sms.messages("sent")] == [body]
    assert "pending approval" not in phoned(env, "show", task.id, "--queue", url).stdout


def test_once_task_beside_a_running_daemon_runs_the_task_it_submitted(
    daemon: Daemon, env: dict[str, str], sim_factory: Any, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    path = tmp_path / "task.json"
    for mode in ("priority", "alarms", "off"):
        path.write_text(json.dumps(
            {"method": "dnd.set", "params": {"mode": mode}, "conversation_id": "c"}))  # fmt: skip
        ran = phoned(env, "run", "--once", "--json", "--serial", sim.serial, "--task", str(path))
        assert ran.returncode == 0, ran.stderr
        task_id = json.loads(ran.stdout)["task"]["id"]
        assert f"phoned: task {task_id} submitted from {path}" in ran.stderr
        record = daemon.task(task_id)
        assert record.state is TaskState.COMPLETED and record.observed_target == f"dnd.{mode}"
        assert record.lease_owner is None or "/once/" in record.lease_owner
    daemon.signal(signal.SIGTERM)
    assert daemon.wait() == 0


def test_artifacts_go_beside_the_queue_given(
    env: dict[str, str], sim_factory: Any, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    home = tmp_path / "home"
    plain = {k: v for k, v in env.items() if k not in ("PHONED_STATE_DIR", "XDG_STATE_HOME")}
    plain["HOME"] = str(home)
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"method": "screen.snapshot", "params": {}, "conversation_id": "c"}))
    queue = tmp_path / "lab" / "q.db"
    ran = phoned(plain, "run", "--once", "--json", "--serial", sim.serial, "--task", str(path),
                 "--queue", f"sqlite:///{queue}")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    task_id = json.loads(ran.stdout)["task"]["id"]
    shots = list((tmp_path / "lab" / "q.db.artifacts" / task_id).glob("*screenshot*"))
    assert shots and shots[0].read_bytes().startswith(b"\x89PNG")
    assert not (home / ".local" / "state" / "phoned" / "artifacts").exists()
    assert os.path.isfile(queue)


def test_submit_warns_about_a_phone_not_attached_and_the_queue_limit_fails_it(
    daemon: Daemon, env: dict[str, str], sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    limited = {**env, "PHONED_TIMEOUTS_QUEUED": "2"}
    absent = phoned(limited, "submit", "--method", "dnd.get", "--conversation", "c",
                    "--device", "emulator-5999")  # fmt: skip
    assert absent.returncode == 0, absent.stderr
    warning = absent.stderr.strip()
    assert warning.startswith("phoned: warning: device emulator-5999 is not attached to this host")
    assert "the adb server does not list it" in warning and "timeouts.queued (2 s)" in warning
    daemon.serving(sim.serial)  # a served phone: no warning at all (phoned status shows it)
    here = phoned(limited, "submit", "--method", "dnd.get", "--conversation", "c",
                  "--device", sim.serial)  # fmt: skip
    assert here.returncode == 0 and here.stderr == ""
    assert daemon.state(here.stdout.strip(), TaskState.COMPLETED)
    failed = daemon.state(absent.stdout.strip(), TaskState.FAILED, timeout=30)
    assert failed.failure is not None and failed.failure.reason.value == "timeout"
    assert failed.failure.message.startswith("not claimed within 2 s: no daemon serving device")
    assert failed.attempt == 0  # never claimed, never retried
    shown = phoned(env, "tasks", "--state", "failed").stdout
    assert absent.stdout.strip() in shown and "timeout" in shown


def test_every_read_names_its_target_in_one_readable_word_path(
    daemon: Daemon, sim_factory: Any
) -> None:
    sim_factory(sdk=34)
    daemon.start()
    messages = "com.google.android.apps.messaging"
    reads = {
        "volume.get": ({"stream": "music"}, r"volume\.music\.\d+"),
        "bluetooth.get": ({}, r"bluetooth\.(on|off)"),
        "wifi.get": ({}, r"wifi\.(on|off)"),
        "dnd.get": ({}, r"dnd\.(off|priority|alarms|total_silence)"),
        "permission.check": (
            {"package": messages, "permission": "android.permission.POST_NOTIFICATIONS"},
            r"permission\.(granted|missing)",
        ),
        "screen.snapshot": ({}, r"screen\.snapshot"),
    }
    ids = {m: daemon.submit({"method": m, "params": p}) for m, (p, _) in reads.items()}
    for method, task_id in ids.items():
        target = daemon.state(task_id, TaskState.COMPLETED).observed_target
        assert target is not None and re.fullmatch(reads[method][1], target), (method, target)


def test_an_unplugged_phone_is_logged_as_left_once(
    daemon: Daemon, sim_factory: Any, adb_server: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    daemon.state(daemon.submit({"method": "dnd.get", "params": {}}), TaskState.COMPLETED)
    sim.stop()  # the phone goes away (offline), then at once adb forgets it (two snapshots
    adb_server.adb("disconnect", sim.serial)  # within one reaping round of the supervisor)
    assert adb_server.wait_state(sim.serial, {None}) is None
    time.sleep(1.5)
    left = [line for line in daemon.log.read_text().splitlines()
            if f"device {sim.serial} left" in line]  # fmt: skip
    assert len(left) == 1, left


def test_sigusr1_prints_every_threads_stack_and_the_daemon_keeps_serving(
    daemon: Daemon, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    daemon.serving(sim.serial)
    # three dumps in a row: each one whole (the main thread writes it, holding the GIL),
    # every thread's stack down to its first frame, and the daemon alive after every one
    for dump in [daemon.dump() for _ in range(3)]:
        assert "Current thread" in dump and "supervisor.py" in dump, dump
        worker = dump.split(f'"worker-{sim.serial}" (most recent call first):', 1)[-1]
        assert "worker.py" in worker.split("\n\n", 1)[0], dump
    assert daemon.proc is not None and daemon.proc.poll() is None
    daemon.state(daemon.submit({"method": "dnd.get", "params": {}}), TaskState.COMPLETED)
