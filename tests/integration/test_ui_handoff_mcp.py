"""Issue 34 over MCP: a step handed to the person, through a real MCP stdio client.

``scripts/mcp_handoff_transcript.py`` runs the whole session (a simulated phone in this
process, ``phoned run``, ``phoned mcp`` and the MCP SDK's client): ``ui_handoff`` returns at
once ``waiting`` with the screen as image content, the simulated person does the step and
``task_status`` reports it completed; a handoff nobody does fails ``timeout``; one whose app
leaves the front fails ``stale_state``. The code the person typed is in no response, no
evidence, no log of phoned and no command the phone ran; the committed transcript
(``docs/transcripts/mcp-handoff.md``) answers the same, ids and times aside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import load_script, transcript_steps
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned_process import REPO

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "transcripts" / "mcp-handoff.md"


def _facts(page: str) -> list[tuple[str, Any]]:
    """Per step: its title and what it answered (state, waiting_for kind, failure reason,
    the person's instruction, the content besides the structured one)."""
    facts = []
    for title, kind, text in transcript_steps(page, "json|text"):
        if kind == "text":
            facts.append((title, text.splitlines()[-1]))
            continue
        out = json.loads(text)
        failure = out.get("failure") or {}
        person = out.get("person") or {}
        facts.append((title, (
            out.get("state"), (out.get("waiting_for") or "").split(":")[0] or None,
            failure.get("reason"), person.get("instruction"),
            [c["type"] for c in out.get("content", [])],
        )))  # fmt: skip
    return facts


def test_a_handoff_over_mcp_completes_times_out_and_goes_stale(
    adb_server: Any, tmp_path: Path
) -> None:
    script = load_script("mcp_handoff_transcript")
    transcript = script.record(tmp_path, adb_server.port)
    page = script.markdown(transcript)
    facts = _facts(page)
    assert [title for title, _ in facts] == [
        "app_open brings the notes app to the front",
        "ui_handoff returns at once: waiting for the person", "task_status while it waits",
        "the person types the code and taps Save, on the phone", "task_status: completed",
        "ui_handoff that nobody does (TTL 10 s)", "task_status: failed timeout",
        "ui_handoff, then the person leaves the app", "the person goes to the home screen",
        "task_status: failed stale_state",
    ]  # fmt: skip
    steps = dict(facts)
    handed = steps["ui_handoff returns at once: waiting for the person"]
    assert handed[:4] == ("waiting", "person", None, script.INSTRUCTION)
    assert "image" in handed[4]  # the screen handed over, as image content
    assert steps["task_status while it waits"][:2] == ("waiting", "person")
    assert "image" in steps["task_status while it waits"][4]
    assert steps["the person types the code and taps Save, on the phone"] == "saved_count 1"
    assert steps["task_status: completed"][:3] == ("completed", None, None)
    assert steps["task_status: failed timeout"][:3] == ("failed", "person", "timeout")
    assert steps["task_status: failed stale_state"][:3] == ("failed", None, "stale_state")

    # the code the person typed: nowhere phoned keeps or says anything
    assert script.SECRET not in page
    store = SqliteStore(str(tmp_path / "queue.db"))
    try:
        kept = [json.dumps(store.evidence(t.id), ensure_ascii=False) for t in store.list_tasks()]
        kept += [json.dumps([j.__dict__ for j in store.journal(t.id)], default=str)
                 for t in store.list_tasks()]  # fmt: skip
    finally:
        store.close()
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix in (".log", ".xml", ".json", ".jsonl"):
            kept.append(path.read_text(errors="replace"))
    assert kept and not [k for k in kept if script.SECRET in k or "739154" in k]
    phone_log = json.dumps(transcript.phone_log, ensure_ascii=False)
    assert "739154" not in phone_log and "setText" not in phone_log
    assert sum(1 for argv in transcript.phone_log if argv[:1] == ("tap",)) == 1  # the person's
    assert _facts(PAGE.read_text()) == facts, "run scripts/mcp_handoff_transcript.py again"
