"""``phoned context`` and ``phoned classify --serial`` against simulated phones through the
real adb server on a private port (``PHONED_ADB_PORT``); device errors are one line, exit 1."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from phoned.daemon.cli import main

pytestmark = pytest.mark.integration


def phoned(adb_port: int, queue: str, *args: str, stdin: str | None = None) -> Result:
    env = {"PHONED_ADB_PORT": str(adb_port), "PHONED_ADB_HOST": "127.0.0.1"}
    return CliRunner().invoke(main, [*args, "--queue", queue], input=stdin, env=env)


@pytest.fixture
def queue(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'queue.db'}"


def context_of(adb_port: int, queue: str, serial: str) -> dict[str, Any]:
    result = phoned(adb_port, queue, "context", "--serial", serial, "--json")
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_context_of_an_android_14_phone(adb_server: Any, sim_factory: Any, queue: str) -> None:
    sim = sim_factory(sdk=34)
    phone = sim.phone
    phoned(adb_server.port, queue, "submit", "--method", "dnd.get", "--conversation", "c",
           "--device", sim.serial)  # fmt: skip
    before = time.time()
    doc = context_of(adb_server.port, queue, sim.serial)
    device = doc["device"]
    assert device["serial"] == sim.serial
    assert device["sdk"]["value"] == 34 and device["sdk"]["source"] == "getprop"
    assert device["model"]["value"] == phone.props["ro.product.model"]
    assert device["battery_percent"]["value"] == phone.battery.level
    assert device["battery_percent"]["source"] == "dumpsys battery"
    assert device["dnd_mode"] == {
        "value": "off", "observed_at": device["dnd_mode"]["observed_at"],
        "source": "settings get global zen_mode",
    }  # fmt: skip
    assert isinstance(device["bluetooth_on"]["value"], bool)
    assert device["screen_on"]["source"] == "dumpsys power"
    assert set(device["volumes"]["value"]) >= {"music", "ring", "alarm"}
    assert "dnd.set" in device["supported_methods"]["value"]
    for name, item in device.items():
        if isinstance(item, dict):
            assert before - 1 <= item["observed_at"] <= time.time() + 1, name
    assert doc["queue"]["queued"] == 1 and doc["stale"] == []


def test_context_text_names_each_command(adb_server: Any, sim_factory: Any, queue: str) -> None:
    sim = sim_factory(sdk=30)
    result = phoned(adb_server.port, queue, "context", "--serial", sim.serial)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"device {sim.serial}")
    sdk = next(ln for ln in lines if ln.split()[0] == "sdk")
    assert sdk.split()[1] == "30" and "[getprop at " in sdk
    assert any(ln.split()[0] == "queue" and "empty" in ln for ln in lines)


def test_android_9_has_no_set_dnd(adb_server: Any, sim_factory: Any, queue: str) -> None:
    sim = sim_factory(sdk=28)
    device = context_of(adb_server.port, queue, sim.serial)["device"]
    assert device["sdk"]["value"] == 28
    assert "dnd.set" not in device["supported_methods"]["value"]
    assert "dnd.get" in device["supported_methods"]["value"]
    task = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c"}
    result = phoned(adb_server.port, queue, "classify", "-", "--serial", sim.serial,
                    stdin=json.dumps(task))  # fmt: skip
    assert result.exit_code == 1
    assert f"supported on {sim.serial}: no (not: dnd.set)" in result.stdout


def test_classify_with_serial_on_android_14(adb_server: Any, sim_factory: Any, queue: str) -> None:
    sim = sim_factory(sdk=34)
    task = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c"}
    result = phoned(adb_server.port, queue, "classify", "-", "--serial", sim.serial, "--json",
                    stdin=json.dumps(task))  # fmt: skip
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert (verdict["accepted"], verdict["supported"], verdict["serial"]) == (
        True,
        True,
        sim.serial,
    )


def test_unknown_serial_is_one_line_exit_1(adb_server: Any, queue: str) -> None:
    result = phoned(adb_server.port, queue, "context", "--serial", "127.0.0.1:1")
    assert result.exit_code == 1
    assert result.stderr.strip() == "phoned: device 127.0.0.1:1 not found"
    assert "Traceback" not in result.output
