#!/usr/bin/env python3
"""A step handed to the person over MCP, recorded as a transcript (issue 34).

Starts (and always stops) on a temporary queue: an adb server (a private one unless
``--adb-port`` names a running one), a simulated phone (SDK 34) in this process, so that
the script can play the person on its screen (``notes_app.person_saves_note``), a daemon
(``phoned run``) and ``phoned mcp`` over stdio, driven by the MCP SDK's own client. The
session, in the simulated notes app:

1. ``app_open`` brings the notes app to the front;
2. ``ui_handoff`` returns at once: ``waiting`` for ``person:...``, the instruction, and the
   screen handed over as image content (its input field blanked);
3. the person types a code into the note and taps Save, on the phone;
4. ``task_status``: completed, the expectation observed;
5. a second ``ui_handoff`` (TTL 10 s) that nobody does: ``task_status`` says ``timeout``;
6. a third one, and the person goes to the home screen: ``stale_state``.

Each request and response (trimmed; an image as its type and size) is written to
``docs/transcripts/mcp-handoff.md`` (or ``--out``). ``tests/integration/test_ui_handoff_mcp.py``
runs ``record``, checks what each step answered and that the typed code is nowhere phoned
keeps anything.

    .venv/bin/python scripts/mcp_handoff_transcript.py [--out FILE] [--adb-port PORT]
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phoned.sim.server import Simulator
from phoned.sim.ui import notes_app
from phoned.sim.ui.automation import UiCosts

from scripts import mcp_transcript
from scripts.stack import wait_device

OUT = mcp_transcript.ROOT / "docs" / "transcripts" / "mcp-handoff.md"
NOTES = "com.example.notes"
SECRET = "one-time code 739154"  # what the person types: phoned never keeps it
INSTRUCTION = "Type the one-time code from the SMS into the note and tap Save"
SAVED = {"appears": {"resource_id": f"{NOTES}:id/saved_count", "text": "1"}}
SAVED_TWICE = {"appears": {"resource_id": f"{NOTES}:id/saved_count", "text": "2"}}
HEADING = "Transcript: a step handed to the person over MCP"
INTRO = (
    "Written by `scripts/mcp_handoff_transcript.py` (issue 34): a real MCP client session "
    "(the `mcp` SDK over stdio) against `phoned mcp`, a `phoned run` daemon and a simulated "
    "phone (SDK 34) with the notes app `com.example.notes`. `ui_handoff` returns at once "
    "with `waiting`; the person does the step on the phone; `task_status` reports the "
    "outcome. phoned never taps, types or reads what the person enters: the code typed "
    "is in no evidence, screen or log (the screens kept have the note field blanked). "
    "Responses are the tools' structured content, trimmed; an image is shown by its size."
)


@contextlib.contextmanager
def running(work: Path, adb_port: int | None) -> Iterator[tuple[mcp_transcript.Stack, Simulator]]:
    """The simulated phone (in this process) and a daemon serving it on a fresh queue."""
    stack = mcp_transcript.Stack(work, adb_port)
    sim = Simulator(sdk=34)
    sim.phone.ui.automation.costs = UiCosts.none()
    try:
        if stack.own_adb:
            stack.adb("start-server")
        sim.start()
        stack.adb("connect", sim.serial)
        wait_device(stack.adb_port, sim.serial)
        stack.start_daemon(sim.serial)
        yield stack, sim
    finally:
        stack.stop()
        sim.stop()


def _shown(result: Any) -> dict[str, Any]:
    """A tool's structured content, with its other content named (an image by its size)."""
    content = dict(result.structured_content or {})
    if result.is_error:
        return {"is_error": True, "text": [c.model_dump() for c in result.content]}
    extra = []
    for item in result.content:
        if item.type == "image":
            extra.append(
                {"type": "image", "mime_type": item.mime_type, "base64_chars": len(item.data)}
            )
        elif item.type == "text" and item.text.startswith("screenshot"):
            extra.append({"type": "text", "text": item.text.splitlines()[0]})
    content = mcp_transcript.trim(content)
    if extra:
        content["content"] = extra
    return content


async def _session(
    stack: mcp_transcript.Stack, sim: Simulator, transcript: mcp_transcript.Transcript
) -> None:
    async with mcp_transcript.mcp_session(stack) as session:

        async def call(title: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(tool, arguments)
            transcript.add(title, {"tool": tool, "arguments": arguments}, _shown(result))
            return dict(result.structured_content or {})

        async def until_ended(title: str, task_id: str) -> None:
            result = await mcp_transcript.until_terminal(session, task_id)
            transcript.add(title, {"tool": "task_status", "arguments": {"task_id": task_id}},
                           _shown(result))  # fmt: skip

        await call("app_open brings the notes app to the front", "app_open", {"package": NOTES})
        handed = await call("ui_handoff returns at once: waiting for the person", "ui_handoff",
                            {"package": NOTES, "instruction": INSTRUCTION, "expect": SAVED,
                             "ttl_s": 120})  # fmt: skip
        await call("task_status while it waits", "task_status", {"task_id": handed["task_id"]})
        notes_app.person_saves_note(sim.phone.ui, SECRET)
        transcript.add("the person types the code and taps Save, on the phone",
                       "notes_app.person_saves_note(phone.ui, <the code>)",
                       f"saved_count {sim.phone.ui.top().state.get('saved')}", kind="person")  # fmt: skip
        await until_ended("task_status: completed", handed["task_id"])

        late = await call("ui_handoff that nobody does (TTL 10 s)", "ui_handoff",
                          {"package": NOTES, "instruction": "Tap Save once more",
                           "expect": SAVED_TWICE, "ttl_s": 10})  # fmt: skip
        await until_ended("task_status: failed timeout", late["task_id"])

        gone = await call("ui_handoff, then the person leaves the app", "ui_handoff",
                          {"package": NOTES, "instruction": "Tap Save once more",
                           "expect": SAVED_TWICE, "ttl_s": 120})  # fmt: skip
        sim.phone.ui.go_home()
        transcript.add("the person goes to the home screen", "phone.ui.go_home()",
                       "the launcher in front", kind="person")  # fmt: skip
        await until_ended("task_status: failed stale_state", gone["task_id"])


def record(work: Path, adb_port: int | None = None) -> mcp_transcript.Transcript:
    """Run the whole session on ``work`` (a fresh folder); the transcript and the phone."""
    transcript = mcp_transcript.Transcript(work=str(work))
    with running(work, adb_port) as (stack, sim):
        anyio.run(_session, stack, sim, transcript)
        transcript.phone_log = [e.argv for e in sim.phone.log.entries()]
    return transcript


def markdown(transcript: mcp_transcript.Transcript) -> str:
    """The transcript as the committed Markdown page."""
    return mcp_transcript.render(transcript, HEADING, INTRO)


if __name__ == "__main__":
    sys.exit(mcp_transcript.main(__doc__, OUT, record, markdown))
