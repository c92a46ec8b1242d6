"""The task report renderers on a real queue record and evidence in the device layer's shape
(``phoned.device.evidence.Evidence.to_json`` inside an outcome document)."""

from __future__ import annotations

import base64
import io
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.records import Event, JournalEntry, JournalOutcome, TaskRecord
from phoned.daemon.rendering import render
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.device.evidence import CommandRecord, Evidence, Observation

# Identity from tests/fixtures/android/getprop-34-emulator.txt (Android 14 emulator).
DEVICE = {
    "serial": "emulator-5554",
    "model": "sdk_gphone64_x86_64",
    "manufacturer": "Google",
    "sdk": 34,
    "release": "14",
    "fingerprint": "google/sdk_gphone64_x86_64/emu64xa:14/UE1A.230829.050/12077443:userdebug/dev-keys",
}
ZEN = ("settings", "get", "global", "zen_mode")
SET_DND = ("cmd", "notification", "set_dnd", "priority")


def png_bytes() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 8), (10, 120, 200)).save(out, format="PNG")
    return out.getvalue()


def dnd_evidence() -> dict[str, Any]:
    """A dnd.set outcome: before 0, set_dnd priority (exit 0), polls, after 1 (met)."""
    evidence = Evidence(
        method="dnd.set",
        device=DEVICE,
        commands=(
            CommandRecord(ZEN, 0, 12.5, "2025-01-01T10:00:00.000Z", stdout_excerpt="0\n"),
            CommandRecord(SET_DND, 0, 40.25, "2025-01-01T10:00:00.020Z"),
            CommandRecord(ZEN, 0, 11.0, "2025-01-01T10:00:00.100Z", stdout_excerpt="0\n"),
            CommandRecord(ZEN, 0, 10.0, "2025-01-01T10:00:00.300Z", stdout_excerpt="1\n"),
        ),
        observations=(
            Observation("zen_mode", 0, "before", ZEN, "2025-01-01T10:00:00.000Z"),
            Observation("zen_mode", 0, "poll", ZEN, "2025-01-01T10:00:00.100Z"),
            Observation("zen_mode", 1, "after", ZEN, "2025-01-01T10:00:00.300Z"),
        ),
        target={"expected": 1, "observed": 1, "met": True},
        notes=("set_dnd exits 0 even when it did nothing; judged by read-back",),
    )
    return {"status": "met", "method": "dnd.set", "message": "DND priority", "value": "priority",
            "detail": {}, "evidence": evidence.to_json()}  # fmt: skip


def snapshot_evidence(shot: Path) -> dict[str, Any]:
    """A bare screen.snapshot evidence with a file screenshot (by the daemon's path), a
    base64 one, the XML (by name), one missing from the task's folder and one outside it."""
    xml = shot.parent / "snapshot_hierarchy.xml"
    xml.write_text('<hierarchy rotation="0"><script>alert(1)</script></hierarchy>')
    evidence = Evidence(
        method="screen.snapshot",
        device=DEVICE,
        commands=(
            CommandRecord(
                ("screencap", "-p", "/sdcard/phoned_snapshot.png"),
                0,
                310.0,
                "2025-01-01T10:00:01.000Z",
            ),
        ),
        observations=(),
        target={"expected": None, "observed": None, "met": True},
        artifacts={
            "snapshot_screenshot": str(shot),
            "inline_screenshot": base64.b64encode(png_bytes()).decode(),
            "snapshot_hierarchy": xml.name,
            "gone": "shot.png",
            "elsewhere": "/nonexistent/shot.png",
        },
    )
    return evidence.to_json()


Inputs = tuple[TaskRecord, list[dict[str, Any]], list[JournalEntry], list[Event]]


@pytest.fixture
def report_inputs(tmp_path: Path) -> Inputs:
    store = SqliteStore(str(tmp_path / "q.db"))
    try:
        spec = validate_task(
            {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c1"}
        )
        task = store.submit(spec, time.time())
        shot = tmp_path / "artifacts" / task.id / "snapshot_screenshot.png"  # the task's folder
        shot.parent.mkdir(parents=True)
        shot.write_bytes(png_bytes())
        claimed = store.claim("daemon-x/w0", "emulator-5554", time.time())
        assert claimed is not None
        ticket = store.start(claimed.ticket, time.time()).ticket
        store.journal_before(ticket, "op1", "dnd.set", "zen_mode=1", "sha256:ab", time.time())
        store.journal_after("op1", JournalOutcome.CONFIRMED_SUCCESS, "", time.time())
        refs = (
            store.put_evidence(ticket, "outcome", dnd_evidence(), time.time()),
            store.put_evidence(ticket, "snapshot", snapshot_evidence(shot), time.time()),
        )
        store.complete(ticket, time.time(), "dnd.priority", evidence_refs=refs)
        return (store.get(task.id), store.evidence(task.id), store.journal(task.id),
                store.events())  # fmt: skip
    finally:
        store.close()


def test_text_report_shows_identity_observations_commands_target(report_inputs: Inputs) -> None:
    text = render.render_text(*report_inputs)
    record = report_inputs[0]
    assert text.startswith(f"task {record.id}  dnd.set  completed")
    assert "device: emulator-5554  Google sdk_gphone64_x86_64  SDK 34 (Android 14)" in text
    assert f"fingerprint: {DEVICE['fingerprint']}" in text
    assert (
        "before  zen_mode = 0  via `settings get global zen_mode` at 2025-01-01T10:00:00.000Z"
        in text
    )
    assert "after   zen_mode = 1  via `settings get global zen_mode`" in text
    assert "polls\n    poll    zen_mode = 0" in text
    assert (
        "`cmd notification set_dnd priority`  exit 0  40.2 ms  at 2025-01-01T10:00:00.020Z" in text
    )
    assert "target: expected 1, observed 1, met: yes" in text
    assert "status: met  DND priority" in text
    assert "op op1  dnd.set zen_mode=1" in text and "-> confirmed_success" in text
    states = [ln.split()[2] for ln in text.split("transitions\n")[1].split("\n\n")[0].splitlines()]
    assert states == ["queued", "dispatched", "running", "completed"]
    assert "snapshot_screenshot: " in text and "(inline data, " in text


def test_json_report_is_stable_and_parseable(report_inputs: Inputs) -> None:
    first = json.dumps(render.render_json(*report_inputs), sort_keys=True)
    assert first == json.dumps(render.render_json(*report_inputs), sort_keys=True)
    report = json.loads(first)
    assert report["report_version"] == 1 and report["task"]["state"] == "completed"
    outcome = report["evidence"][0]
    assert (outcome["status"], outcome["method"], outcome["target"]["met"]) == (
        "met",
        "dnd.set",
        True,
    )
    assert [o["phase"] for o in outcome["observations"]] == ["before", "after"]
    assert [o["phase"] for o in outcome["polls"]] == ["poll"]
    assert outcome["commands"][1]["argv"] == list(SET_DND)
    assert report["evidence"][1]["method"] == "screen.snapshot"
    assert report["journal"][0]["outcome"] == "confirmed_success"


def test_html_inlines_screenshots_and_escapes_text(report_inputs: Inputs, tmp_path: Path) -> None:
    page = render.render_html(*report_inputs, artifact_roots=[tmp_path / "artifacts"])
    assert page.startswith("<!DOCTYPE html>")
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', page)
    assert {name for name, _ in images} == {"snapshot_screenshot", "inline_screenshot"}
    for _, payload in images:
        assert base64.b64decode(payload) == png_bytes()
    assert "&lt;script&gt;" in page and "<script" not in page
    assert "shot.png</code> (not readable here)" in page
    assert "/nonexistent/shot.png</code> (refused: not a file of this task" in page
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing loaded from elsewhere
    assert "met: yes" in page and "cmd notification set_dnd priority" in page


def test_html_without_artifacts_has_no_img(report_inputs: Inputs) -> None:
    record, evidence, journal, events = report_inputs
    page = render.render_html(record, evidence[:1], journal, events)
    assert "<img" not in page and "Evidence" in page


def test_unreachable_device_identity_is_reported(report_inputs: Inputs) -> None:
    record, evidence, journal, events = report_inputs
    doc = json.loads(json.dumps(evidence[0]))
    doc["body"]["evidence"]["device"] = {"serial": "emulator-5554", "error": "DeviceOffline: gone"}
    text = render.render_text(record, [doc], journal, events)
    assert "device: emulator-5554 (identity unreadable: DeviceOffline: gone)" in text


def test_iso_times() -> None:
    assert render.iso(0.0) == "1970-01-01T00:00:00.000Z"
    assert render.iso(1.9996) == "1970-01-01T00:00:02.000Z"
    assert render.iso(None) is None


def test_show_names_the_phones_locale_and_what_proved_the_verdict() -> None:
    """Issue #22: the evidence says which language the phone spoke and which read proved a
    send (the chat store, the sent box, a word and its resource, a stamp)."""
    from phoned.daemon.rendering.render import _evidence_lines, evidence_view

    doc = {
        "ref": "e1", "attempt": 1, "revision": 1, "kind": "action",
        "body": {
            "status": "met", "message": "sent",
            "detail": {"proved_by": "conversation", "conversation_proof": "word 'Доставлено'"},
            "evidence": {"device": {"serial": "S", "sdk": 34, "locale": "ru-RU"}},
        },
    }  # fmt: skip
    text = "\n".join(_evidence_lines(evidence_view(doc)))
    assert "locale ru-RU" in text
    assert "proof: proved_by conversation, conversation_proof word 'Доставлено'" in text
