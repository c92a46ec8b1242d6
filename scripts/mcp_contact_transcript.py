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

import argparse
import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.stack import free_port  # the checkout's own; every private port comes from it

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
OUT = ROOT / "docs" / "transcripts" / "mcp-contact-by-name.md"
CONVERSATION = "conv-transcript"
BOOK = (
    "contact:Ivan Petrov=+79160000001:mobile,"
    "contact:Ivan Petrov=+79160000002:work:new,"
    "contact:Иван Сидоров=+79160000003:mobile"
)
BODY = "Running late, see you at 8"
CUT = 160  # characters of a string kept in the transcript


@dataclass
class Step:
    """One exchange: who asked what, and the answer."""

    title: str
    request: Any
    response: Any
    kind: str = "mcp"  # "mcp": a tool call; "shell": a command a person ran


@dataclass
class Transcript:
    steps: list[Step] = field(default_factory=list)
    work: str = ""  # the temporary folder, left out of the page

    def add(self, title: str, request: Any, response: Any, kind: str = "mcp") -> None:
        self.steps.append(Step(title, request, response, kind))


class Stack:
    """The processes of the session, stopped in reverse order."""

    def __init__(self, work: Path, adb_port: int | None) -> None:
        self.work = work
        self.own_adb = adb_port is None
        self.adb_port = adb_port or free_port()
        self.queue = f"sqlite:///{work / 'queue.db'}"
        self.env = {
            **os.environ, "ANDROID_ADB_SERVER_PORT": str(self.adb_port),
            "PHONED_STATE_DIR": str(work / "state"), "PHONED_CONFIG": "/dev/null",
            "PHONED_POLL_INTERVAL": "0.2", "PHONED_HEARTBEAT_INTERVAL": "1",
        }  # fmt: skip
        self.procs: list[subprocess.Popen[bytes]] = []

    def spawn(self, name: str, *args: str) -> None:
        argv = [PY, "-m", "phoned.daemon.cli", *args]
        with (self.work / f"{name}.log").open("wb") as log:  # the child keeps its own copy
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=ROOT
            )
        self.procs.append(proc)

    def phoned(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PY, "-m", "phoned.daemon.cli", *args], env=self.env, cwd=ROOT, capture_output=True,
            text=True, timeout=60, check=False,
        )  # fmt: skip

    def adb(self, *args: str) -> None:
        import adbutils

        subprocess.run([adbutils.adb_path(), "-P", str(self.adb_port), *args], env=self.env,
                       check=True, capture_output=True, timeout=30)  # fmt: skip

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=25)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.own_adb:
            with contextlib.suppress(Exception):
                self.adb("kill-server")


def _wait_device(stack: Stack, serial: str, timeout: float = 30) -> None:
    import adbutils

    client = adbutils.AdbClient(host="127.0.0.1", port=stack.adb_port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(d.serial == serial and d.state == "device" for d in client.list()):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{serial} did not come online (see {stack.work}/sim.log)")


@contextlib.contextmanager
def running(work: Path, adb_port: int | None) -> Iterator[tuple[Stack, str]]:
    """The phone (with its book) and a daemon serving it on a fresh queue; the stack and
    the phone's serial."""
    from phoned.daemon.store.sqlite_store import SqliteStore

    stack = Stack(work, adb_port)
    try:
        if stack.own_adb:
            stack.adb("start-server")
        port = free_port()
        serial = f"127.0.0.1:{port}"
        stack.spawn("sim", "sim", "--port", str(port), "--sdk", "34", "--connect",
                    "--scenario", BOOK)  # fmt: skip
        _wait_device(stack, serial)
        (work / "state").mkdir(exist_ok=True)
        SqliteStore(str(work / "queue.db")).close()  # the schema, before two processes race
        stack.spawn("daemon", "run", "--queue", stack.queue, "--serial", serial)
        yield stack, serial
    finally:
        stack.stop()


def trim(value: Any, key: str = "") -> Any:
    """``value`` cut for reading: long strings shortened, the evidence summed up."""
    if isinstance(value, str):
        return value if len(value) <= CUT else value[:CUT] + "…"
    if isinstance(value, dict):
        if key == "card":
            return {k: trim(v, k) for k, v in value.items() if k not in ("after_denial",)}
        return {k: trim(v, k) for k, v in value.items() if k not in ("read_backs", "commands")}
    if isinstance(value, list):
        if key == "evidence":  # each document's kind and verdict; an outcome's target
            return [
                {k: trim(e.get(k), k) for k in ("kind", "attempt", "status", "message", "target")
                 if e.get(k) or k in ("kind", "attempt")}
                for e in value
                if isinstance(e, dict)
            ]  # fmt: skip
        return [trim(v, key) for v in value]
    return value


async def _session(stack: Stack, transcript: Transcript) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=PY, cwd=str(ROOT), env=stack.env,
        args=["-m", "phoned.daemon.cli", "mcp", "--queue", stack.queue, "--conversation", CONVERSATION,
              "--wait", "30"],
    )  # fmt: skip
    async with AsyncExitStack() as exits:
        read, write = await exits.enter_async_context(stdio_client(server))
        session = await exits.enter_async_context(ClientSession(read, write))
        await session.initialize()

        async def call(title: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await session.call_tool(tool, arguments)
            content = dict(result.structured_content or {})
            if result.is_error:
                content = {"is_error": True, "text": [c.model_dump() for c in result.content]}
            transcript.add(title, {"tool": tool, "arguments": arguments}, trim(content))
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
        deadline = time.monotonic() + 60
        final = await session.call_tool("task_status", {"task_id": task_id})
        while not (final.structured_content or {}).get("terminal"):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.3)
            final = await session.call_tool("task_status", {"task_id": task_id})
        content = dict(final.structured_content or {})
        transcript.add(
            "task_status: completed", {"tool": "task_status", "arguments": {"task_id": task_id}},
            trim(content),
        )  # fmt: skip
        return content


def record(work: Path, adb_port: int | None = None) -> Transcript:
    """Run the whole session on ``work`` (a fresh folder); the transcript of it."""
    import anyio

    transcript = Transcript(work=str(work))
    with running(work, adb_port) as (stack, _serial):
        anyio.run(_session, stack, transcript)
    return transcript


def markdown(transcript: Transcript) -> str:
    """The transcript as the committed Markdown page."""
    lines = [
        "# Transcript: a message to a contact by name over MCP",
        "",
        'Written by `scripts/mcp_contact_transcript.py` (issue #26 item 2; seed 000: "a '
        'message to Ivan", "an ambiguous contact"): a real MCP client session (the `mcp` '
        "SDK over stdio) against `phoned mcp`, a `phoned run` daemon and a simulated phone "
        '(SDK 34) whose book holds two contacts named "Ivan Petrov" (mobile +79160000001, '
        'work +79160000002) and one "Иван Сидоров". Responses are the tools\' structured '
        "content, trimmed (long strings cut, the evidence summed up). Evidence keeps numbers "
        "and texts redacted; the candidates and the approval preview are shown in clear to "
        "this conversation (a bound viewer of the plane sees them redacted).",
        "",
    ]
    for n, step in enumerate(transcript.steps, 1):
        lines += [f"## {n}. {step.title}", ""]
        if step.kind == "shell":
            lines += ["```console", f"$ {step.request}", str(step.response), "```", ""]
            continue
        lines += ["Request:", "", "```json", json.dumps(step.request, ensure_ascii=False,
                                                          indent=2), "```", ""]  # fmt: skip
        lines += ["Response:", "", "```json",
                  json.dumps(step.response, ensure_ascii=False, indent=2), "```", ""]  # fmt: skip
    page = "\n".join(lines)
    return page.replace(transcript.work, "/tmp/…") if transcript.work else page


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--adb-port", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="phoned-transcript-") as tmp:
        transcript = record(Path(tmp), args.adb_port)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(transcript))
    print(f"wrote {args.out} ({len(transcript.steps)} steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
