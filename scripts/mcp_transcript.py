"""What the MCP transcript scripts share: the processes of a session, the MCP client, the
trimmed steps and the Markdown page.

``scripts/mcp_contact_transcript.py`` and ``scripts/mcp_handoff_transcript.py`` each drive
one session against ``phoned mcp`` over stdio and write it as a committed page; the stack of
processes they start, the client they drive it with, the wait for a task's end and the page
they write are the same, and live here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import adbutils
from mcp import ClientSession, StdioServerParameters, stdio_client
from phoned.daemon.store.sqlite_store import SqliteStore

from scripts.stack import (
    free_port,
    stop_process,
)  # the checkout's own; every private port comes from it

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
CONVERSATION = "conv-transcript"
CUT = 160  # characters of a string kept in the transcript
# A step no MCP client took, by its kind: the fence of its block and the prefix of its line.
OTHER_STEPS = {"shell": ("console", "$ "), "person": ("text", "(the person) ")}


@dataclass
class Step:
    """One exchange: who asked what, and the answer."""

    title: str
    request: Any
    response: Any
    kind: str = "mcp"  # "mcp": a tool call; "shell": a command a person ran; "person": on the phone


@dataclass
class Transcript:
    steps: list[Step] = field(default_factory=list)
    work: str = ""  # the temporary folder, left out of the page
    phone_log: list[Any] = field(default_factory=list)  # the commands the phone ran, if kept

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
        subprocess.run([adbutils.adb_path(), "-P", str(self.adb_port), *args], env=self.env,
                       check=True, capture_output=True, timeout=30)  # fmt: skip

    def start_daemon(self, serial: str) -> None:
        """``phoned run`` serving ``serial`` on the session's queue, its schema made first."""
        (self.work / "state").mkdir(exist_ok=True)
        SqliteStore(str(self.work / "queue.db")).close()  # the schema, before two processes race
        self.spawn("daemon", "run", "--queue", self.queue, "--serial", serial)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop_process(proc, timeout=25)
        if self.own_adb:
            with contextlib.suppress(Exception):
                self.adb("kill-server")


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


@contextlib.asynccontextmanager
async def mcp_session(stack: Stack) -> AsyncIterator[Any]:
    """An initialised MCP client session with ``phoned mcp`` over stdio on the stack's queue."""
    server = StdioServerParameters(
        command=PY, cwd=str(ROOT), env=stack.env,
        args=["-m", "phoned.daemon.cli", "mcp", "--queue", stack.queue, "--conversation", CONVERSATION,
              "--wait", "30"],
    )  # fmt: skip
    async with contextlib.AsyncExitStack() as exits:
        read, write = await exits.enter_async_context(stdio_client(server))
        session = await exits.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


async def until_terminal(session: Any, task_id: str, timeout: float = 60) -> Any:
    """``task_status`` of ``task_id``, asked again until it is terminal or ``timeout`` ends."""
    deadline = time.monotonic() + timeout
    result = await session.call_tool("task_status", {"task_id": task_id})
    while not (result.structured_content or {}).get("terminal"):
        if time.monotonic() >= deadline:
            break
        time.sleep(0.3)
        result = await session.call_tool("task_status", {"task_id": task_id})
    return result


def render(transcript: Transcript, heading: str, intro: str) -> str:
    """The transcript as a committed Markdown page under ``heading`` and ``intro``."""
    lines = [f"# {heading}", "", intro, ""]
    for n, step in enumerate(transcript.steps, 1):
        lines += [f"## {n}. {step.title}", ""]
        if step.kind in OTHER_STEPS:
            fence, prefix = OTHER_STEPS[step.kind]
            lines += [f"```{fence}", f"{prefix}{step.request}", str(step.response), "```", ""]
            continue
        lines += ["Request:", "", "```json", json.dumps(step.request, ensure_ascii=False,
                                                          indent=2), "```", ""]  # fmt: skip
        lines += ["Response:", "", "```json",
                  json.dumps(step.response, ensure_ascii=False, indent=2), "```", ""]  # fmt: skip
    page = "\n".join(lines)
    return page.replace(transcript.work, "/tmp/…") if transcript.work else page


def main(
    doc: str,
    out: Path,
    record: Callable[[Path, int | None], Transcript],
    markdown: Callable[[Transcript], str],
) -> int:
    """A script's command line: record a session in a temporary folder, write its page."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--adb-port", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="phoned-transcript-") as tmp:
        transcript = record(Path(tmp), args.adb_port)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(transcript))
    print(f"wrote {args.out} ({len(transcript.steps)} steps)")
    return 0
