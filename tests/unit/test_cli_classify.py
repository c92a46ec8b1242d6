"""``phoned classify``: the verdict without queueing or executing anything; and the pure
context parsers of ``phoned.daemon.planning.device_context`` on source-derived output."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import phoned
from phoned.daemon.planning.device_context import (
    parse_battery_percent,
    parse_default_sms,
    zen_mode_name,
)

SEND = {
    "method": "sms.send",
    "params": {"to": "+15551234567", "body": "hi"},
    "conversation_id": "c",
}


def test_classify_an_approval_method_from_stdin(queue: str) -> None:
    result = phoned(queue, "classify", "-", stdin=json.dumps(SEND))
    assert result.exit_code == 0, result.output
    assert "accepted: yes" in result.stdout and "methods: sms.send" in result.stdout
    assert "needs approval: yes" in result.stdout and "not checked" in result.stdout
    assert "no queue at" in phoned(queue, "tasks").output  # classify queued nothing


def test_classify_json_for_a_seed004_workflow(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(
        "method: submitWorkflow\nconversation_id: c\nsubTasks:\n"
        "  - {taskMethod: dnd.set, mode: priority}\n  - {taskMethod: dnd.set, mode: 'off'}\n"
    )
    verdict = json.loads(phoned(queue, "classify", str(path), "--json").stdout)
    assert (verdict["accepted"], verdict["kind"], verdict["methods"]) == (
        True, "workflow", ["dnd.set", "dnd.set"],
    )  # fmt: skip
    assert verdict["needs_approval"] is False and verdict["supported"] is None


def test_classify_refusal_names_the_field_and_exits_1(queue: str) -> None:
    bad = {"method": "dnd.set", "params": {"mode": "loud"}, "conversation_id": "c"}
    result = phoned(queue, "classify", "-", "--json", stdin=json.dumps(bad))
    assert result.exit_code == 1
    verdict = json.loads(result.stdout)
    assert verdict["kind"] == "invalid" and verdict["errors"][0]["field"] == "params.mode"
    text = phoned(queue, "classify", "-", stdin=json.dumps(bad))
    assert "error: params.mode:" in text.stdout and "accepted: no" in text.stdout


def test_classify_unreadable_file_is_exit_2(queue: str) -> None:
    result = phoned(queue, "classify", "/nonexistent.json")
    assert result.exit_code == 2 and result.stderr.startswith("phoned: cannot read")


# BatteryService.dumpInternal layout (aosp-mirror/platform_frameworks_base,
# services/core/java/com/android/server/BatteryService.java), Android 14 fields.
DUMPSYS_BATTERY_34 = """Current Battery Service state:
  AC powered: false
  USB powered: true
  Wireless powered: false
  Dock powered: false
  Max charging current: 500000
  Max charging voltage: 5000000
  Charge counter: 3977000
  status: 2
  health: 2
  present: true
  level: 85
  scale: 100
  voltage: 4312
  temperature: 290
  technology: Li-ion
  Charging state: 1
  Charging policy: 1
"""


def test_battery_percent_from_level_and_scale() -> None:
    assert parse_battery_percent(DUMPSYS_BATTERY_34) == 85
    half_scale = DUMPSYS_BATTERY_34.replace("level: 85", "level: 25").replace(
        "scale: 100", "scale: 50"
    )
    assert parse_battery_percent(half_scale) == 50
    assert parse_battery_percent("Can't find service: battery\n") is None


def test_zen_mode_names_follow_settings_global() -> None:
    assert [zen_mode_name(v) for v in (0, 1, 2, 3, None, 9)] == [
        "off", "priority", "total_silence", "alarms", None, None,
    ]  # fmt: skip


def test_default_sms_app_from_role_or_setting() -> None:
    # RoleShellCommand prints holders joined by ';' (API 29+); the secure setting below.
    assert parse_default_sms(34)("com.google.android.apps.messaging\n") == (
        "com.google.android.apps.messaging"
    )
    assert parse_default_sms(34)("\n") is None
    assert parse_default_sms(28)("com.android.mms\n") == "com.android.mms"
    assert parse_default_sms(28)("null\n") is None
