"""Issue #12 item 5 on the control plane (FastAPI TestClient over a real SQLite queue).

A daemon token posts an ``sms.send`` outcome whose evidence holds the number and the body in
clear (as a daemon of an older build, or a hand-made POST, would): the plane keeps it
redacted; the approver reads the preview in clear from ``GET /v1/tasks/{id}``
(``approval_preview``, rebuilt from the params, bound to the approval digest). An uploaded
artifact, the ledger and the queue are 0600 in 0700 folders under umask 0o002.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from phoned.foundation.digest import digest
from planes import AppPlane, Grant, claimed, loose_umask_plane, submit
from planes import ticket as ticket_of

SERIAL, TO, BODY = "emu-1", "+15551234567", "the gate code is 4417"
APP = "com.google.android.apps.messaging"


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[AppPlane]:
    grants = {"daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner"),
              "approver": Grant("approver")}  # fmt: skip
    with loose_umask_plane(tmp_path, grants) as made:
        yield made


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_plane_keeps_evidence_redacted_and_shows_the_approver_the_bound_preview(
    plane: AppPlane, tmp_path: Path
) -> None:
    task = submit(plane, method="sms.send", params={"to": TO, "body": BODY}, device=SERIAL)
    t = ticket_of(claimed(plane))  # attempt 1, revision 1
    plane.ok("daemon", "POST", f"/v1/tasks/{task['id']}/start", json={"ticket": t})
    preview = {"effect": "sms.send", "target": TO, "data": {"text": BODY, "app": APP},
               "snapshot_digest": "sha256:screen"}  # fmt: skip
    outcome = {"status": "needs_approval", "detail": {"preview": preview,
               "preview_digest": digest(preview)},
               "evidence": {"observations": [{"name": "sms_sent", "value": [
                   {"_id": "3", "address": "+4915112345678", "body": "older private text"}]}]}}  # fmt: skip
    plane.ok("daemon", "POST", f"/v1/tasks/{task['id']}/evidence",
             json={"ticket": t, "kind": "outcome", "body": outcome})  # fmt: skip
    plane.ok("daemon", "POST", f"/v1/tasks/{task['id']}/request_approval",
             json={"ticket": t, "preview": preview})  # fmt: skip

    status = plane.ok("approver", "GET", f"/v1/tasks/{task['id']}")
    stored = json.dumps(status["evidence"], ensure_ascii=False)
    for clear in (TO, BODY, "+4915112345678", "older private text"):
        assert clear not in stored, clear
    shown = status["approval_preview"]
    assert (shown["target"], shown["data"]["text"], shown["data"]["app"]) == (TO, BODY, APP)
    assert shown["digest"] == status["task"]["approval_digest"] == digest(preview)
    decision = {"conversation_id": "c1", "revision": 1, "preview_digest": shown["digest"]}
    approved = plane.ok("approver", "POST", f"/v1/tasks/{task['id']}/approve", json=decision)
    assert approved["task"]["approval_status"] == "approved"

    # an uploaded screenshot, the ledger and the queue: 0600 in 0700 folders (umask 0o002)
    plane.ok("daemon", "PUT", f"/v1/tasks/{task['id']}/artifacts/shot.png", content=b"\x89PNG")
    serve = tmp_path / "serve"
    files = [p for p in serve.rglob("*") if p.is_file()] + [tmp_path / "queue.db"]
    assert serve / "artifacts" / task["id"] / "shot.png" in files
    assert {str(p): oct(mode(p)) for p in files if mode(p) != 0o600} == {}
    folders = [serve, *(p for p in serve.rglob("*") if p.is_dir())]
    assert {str(p): oct(mode(p)) for p in folders if mode(p) != 0o700} == {}
