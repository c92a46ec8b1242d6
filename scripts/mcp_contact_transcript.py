#!/usr/bin/env python3
"""A message to a contact by name over MCP, recorded as a transcript (issue #26 item 2).

Starts (and always stops) on a temporary queue: an adb server (a private one unless
``--adb-port`` names a running one), a simulated phone whose book holds two contacts both
named "Ivan Petrov" (``phoned sim --scenario contact:...``), a daemon (``phoned run``) and
``phoned mcp`` over stdio, driven by the MCP SDK's own client. The session:

1. ``sms_send`` to "Ivan Petrov": the task waits for a choice of ``to``, with the candidates;
2. ``task_amend`` with the second candidate's params: the task comes back ``approval``
   pending, the preview naming the contact and the number;
3. a person approves with ``phoned approve`` (a separate process, the line the result gave);
4. ``task_status``: completed, with the evidence of the sent box.

Each request and response (trimmed) is written to ``docs/transcripts/mcp-contact-by-name.md``
(or ``--out``). ``tests/integration/test_mcp_contact_transcript.py`` runs ``record`` so the
committed transcript stays true.

    .venv/bin/python scripts/mcp_contact_transcript.py [--out FILE] [--adb-port PORT]
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts import mcp_transcript
from scripts.stack import free_port, wait_device

OUT = mcp_transcript.ROOT / "docs" / "transcripts" / "mcp-contact-by-name.md"
BOOK = (
    "contact:Ivan Petrov=+79160000001:mobile,"
    "contact:Ivan Petrov=+79160000002:work:new,"
    "contact:Иван Сидоров=+79160000003:mobile"
)
BODY = "Running late, see you at 8"
HEADING = "Transcript: a message to a contact by name over MCP"
INTRO = (
    'Written by `scripts/mcp_contact_transcript.py` (issue #26 item 2; seed 000: "a '
    'message to Ivan", "an ambiguous contact"): a real MCP client session (the `mcp` '
    "SDK over stdio) against `phoned mcp`, a `phoned run` daemon and a simulated phone "
    '(SDK 34) whose book holds two contacts named "Ivan Petrov" (mobile +79160000001, '
    'work +79160000002) and one "Иван Сидоров". Responses are the tools\' structured '
    "content, trimmed (long strings cut, the evidence summed up). Evidence keeps numbers "
    "and texts redacted; the candidates and the approval preview are shown in clear to "
    "this conversation (a bound viewer of the plane sees them redacted)."
)


@contextlib.contextmanager
def running(work: Path, adb_port: int | None) -> Iterator[tuple[mcp_transcript.Stack, str]]:
    """The phone (with its book) and a daemon serving it on a fresh queue; the stack and
    the phone's serial."""
    stack = mcp_transcript.Stack(work, adb_port)
    try:
        if stack.own_adb:
            stack.adb("start-server")
        port = free_port()
        serial = f"127.0.0.1:{port}"
        stack.spawn("sim", "sim", "--port", str(port), "--sdk", "34", "--connect",
                    "--scenario", BOOK)  # fmt: skip
        wait_device(stack.adb_port, serial, logs=f"{stack.work}/sim.log")
        stack.start_daemon(serial)
        yield stack, serial
    finally:
        stack.stop()


async def _session(
    stack: mcp_transcript.Stack, transcript: mcp_transcript.Transcript
) -> dict[str, Any]:
    async with mcp_transcript.mcp_session(stack) as session:

        async def call(title: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(tool, arguments)
            content = dict(result.structured_content or {})
            if result.is_error:
                content = {"is_error": True, "text": [c.model_dump() for c in result.content]}
            transcript.add(
                title, {"tool": tool, "arguments": arguments}, mcp_transcript.trim(content)
            )
            return content

        sent = await call("sms_send to a name", "sms_send", {"to": "Ivan Petrov", "body": BODY})
        task_id = sent["task_id"]
        status = await call("task_status lists the candidates", "task_status", {"task_id": task_id})
        chosen = status["choice"]["candidates"][1]["amend"]
        amended = await call(
            "task_amend with the chosen number",
            "task_amend",
            {"task_id": task_id, "params": chosen},
        )
        approve = shlex.split(amended["approval"]["approve_command"])  # carries --queue
        done = stack.phoned(*approve[1:])
        transcript.add(
            "a person approves (a separate process)",
            shlex.join(approve),
            (done.stdout + done.stderr).strip(),
            kind="shell",
        )
        final = await mcp_transcript.until_terminal(session, task_id)
        content = dict(final.structured_content or {})
        transcript.add(
            "task_status: completed", {"tool": "task_status", "arguments": {"task_id": task_id}},
            mcp_transcript.trim(content),
        )  # fmt: skip
        return content


def record(work: Path, adb_port: int | None = None) -> mcp_transcript.Transcript:
    """Run the whole session on ``work`` (a fresh folder); the transcript of it."""
    transcript = mcp_transcript.Transcript(work=str(work))
    with running(work, adb_port) as (stack, _serial):
        anyio.run(_session, stack, transcript)
    return transcript


def markdown(transcript: mcp_transcript.Transcript) -> str:
    """The transcript as the committed Markdown page."""
    return mcp_transcript.render(transcript, HEADING, INTRO)


if __name__ == "__main__":
    sys.exit(mcp_transcript.main(__doc__, OUT, record, markdown))
