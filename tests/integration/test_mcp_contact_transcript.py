"""The committed MCP transcript of a message to a contact by name
(``docs/transcripts/mcp-contact-by-name.md``) stays true: ``scripts/mcp_contact_transcript.py``
runs its whole session again (a simulated phone, ``phoned run``, ``phoned mcp`` and the MCP
SDK's client) and what each step answered matches the committed page, ids and digests aside.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import load_script, transcript_steps
from phoned_process import REPO

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "transcripts" / "mcp-contact-by-name.md"


def _facts(page: str) -> list[tuple[str, Any]]:
    """Per step: its title and what it answered (state, wait, revision, the candidates, the
    preview, the approval's output), read from the page's JSON and console blocks."""
    facts = []
    for title, kind, text in transcript_steps(page, "json|console"):
        if kind == "console":
            facts.append((title, re.sub(r"^\w{32} ", "TASK ", text.splitlines()[-1])))
            continue
        out = json.loads(text)
        choice = out.get("choice") or {}
        approval = out.get("approval") or {}
        facts.append((title, (
            out.get("state"), out.get("waiting_for"), out.get("revision"), out.get("attempt"),
            [(c["display_name"], c["number"], c["type_name"], c["amend"])
             for c in choice.get("candidates", [])],
            {k: v for k, v in (approval.get("preview") or {}).items() if k != "snapshot_digest"},
            [(e["kind"], e.get("status")) for e in out.get("evidence", [])],
        )))  # fmt: skip
    return facts


def test_the_committed_transcript_is_what_the_session_answers(adb_server, tmp_path: Path) -> None:
    script = load_script("mcp_contact_transcript")
    page = script.markdown(script.record(tmp_path, adb_server.port))
    facts = _facts(page)
    assert [title for title, _ in facts] == [
        "sms_send to a name", "task_status lists the candidates",
        "task_amend with the chosen number", "a person approves (a separate process)",
        "task_status: completed",
    ]  # fmt: skip
    sent, _, amended, approved, done = (f for _, f in facts)
    assert sent[:2] == ("waiting", "choice:to") and len(sent[4]) == 2
    assert amended[0] == "approval" and amended[5]["data"]["contact"] == "Ivan Petrov"
    assert amended[5]["target"] == "+79160000002"
    assert approved == "TASK queued revision 2"
    assert done[:3] == ("completed", None, 2) and done[6][-1] == ("outcome", "met")
    assert _facts(PAGE.read_text()) == facts, "run scripts/mcp_contact_transcript.py again"
