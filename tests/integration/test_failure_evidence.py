"""Every failed attempt keeps what it ran: the real daemon, a phone that drops mid-attempt.

A phone that drops on the attempt's first command (and stays away past the read's
retries) ends that attempt ``device_offline``; its report must still show the command
that ran, with its missing exit code and the error, so ``phoned show`` never answers
"(none)" when a person most needs to see it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from phoned_process import REPO, Daemon

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.records import Failure
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.runtime.attempt_evidence import AttemptEvidence
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.device.adb import AdbServer as DeviceAdbServer
from phoned.device.commands import ZEN_MODE_GET
from phoned.device.connection import Device
from phoned.device.evidence import Recorder

pytestmark = pytest.mark.integration


def _drop_every_command_for(phone: Any, seconds: float) -> None:
    """From the next command on, the phone drops the transport at every command it is sent
    until ``seconds`` after the first drop (``drop_after_commands`` re-armed at each drop)."""
    until: list[float] = []

    def again(_reason: str) -> None:
        until.append(until[0] if until else time.monotonic() + seconds)
        if time.monotonic() < until[0]:
            phone.faults.drop_after_commands = phone.commands_started

    phone.add_drop_listener(again)
    phone.faults.drop_after_commands = phone.commands_started


def _show(daemon: Daemon, task_id: str) -> str:
    argv = [sys.executable, "-m", "phoned.daemon.cli", "show", task_id]
    result = subprocess.run(
        argv, env=daemon.env, cwd=REPO, capture_output=True, text=True, timeout=60, check=True
    )
    return result.stdout


def test_a_phone_dropping_on_the_first_command_leaves_that_command_as_evidence(
    daemon: Daemon, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    warm = daemon.submit({"method": "dnd.get", "params": {}})
    daemon.state(warm, TaskState.COMPLETED)  # identity and capabilities are read
    time.sleep(0.3)
    _drop_every_command_for(sim.phone, 3.0)
    task_id = daemon.submit({"method": "dnd.set", "params": {"mode": "priority"}})
    task = daemon.wait_for(task_id, lambda t: t.failure is not None, timeout=45)
    assert task.failure is not None and task.failure.reason is FailureReason.DEVICE_OFFLINE
    (failed,) = [d for d in daemon.evidence(task_id) if d["attempt"] == 1]
    assert failed["kind"] == "failure"
    body = failed["body"]
    assert body["failure"]["reason"] == "device_offline"
    first = body["evidence"]["commands"][0]
    assert first["argv"][-1] == "zen_mode" and first["exit_code"] is None and first["error"]
    assert any("ended device_offline" in n for n in body["evidence"]["notes"])
    shown = _show(daemon, task_id)
    assert "kind failure" in shown and "`settings get global zen_mode`  no exit code (" in shown
    assert "note: attempt 1 ended device_offline" in shown
    done = daemon.state(task_id, TaskState.COMPLETED)  # the phone is back: attempt 2 runs
    assert done.attempt == 2 and sim.phone.notification.zen_mode == 1


def test_a_failure_before_any_command_keeps_a_document_saying_what_failed(
    adb_server, sim_factory, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    store = SqliteStore(str(tmp_path / "q.db"))
    raw = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c"}
    store.submit(validate_task(raw), time.time())
    task = store.claim("d/w0", sim.serial, time.time(), lease_s=60)
    assert task is not None
    device = Device(sim.serial, DeviceAdbServer(port=adb_server.port))
    failure = Failure(FailureReason.DEVICE_OFFLINE, "the phone left before the first read")
    (ref,) = AttemptEvidence(device).keep_failure(store, task, failure, time.time())
    (doc,) = store.evidence(task.id)
    store.close()
    evidence = doc["body"]["evidence"]
    assert (doc["ref"], doc["kind"], evidence["commands"]) == (ref, "failure", [])
    assert evidence["device"]["serial"] == sim.serial
    assert evidence["notes"] == [
        "no command ran on the phone in this attempt",
        "attempt 1 ended device_offline: the phone left before the first read",
    ]


def test_a_failure_after_the_outcome_was_kept_points_to_it(
    adb_server, sim_factory, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    store = SqliteStore(str(tmp_path / "q.db"))
    raw = {"method": "dnd.get", "params": {}, "conversation_id": "c"}
    store.submit(validate_task(raw), time.time())
    task = store.claim("d/w0", sim.serial, time.time(), lease_s=60)
    assert task is not None
    attempt = AttemptEvidence(Device(sim.serial, DeviceAdbServer(port=adb_server.port)))
    kept = attempt.track(Recorder(attempt.device, "dnd.get"))
    kept.read(ZEN_MODE_GET)
    attempt.kept(kept)  # as the executor does once the outcome document is stored
    failure = Failure(FailureReason.ACTION_ERROR, "internal error: the report failed")
    attempt.keep_failure(store, task, failure, time.time())
    (doc,) = store.evidence(task.id)
    store.close()
    evidence = doc["body"]["evidence"]
    assert evidence["commands"] == []
    assert (
        evidence["notes"][0] == "the commands this attempt ran are in its other evidence documents"
    )
