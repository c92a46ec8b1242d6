#!/usr/bin/env python3
"""Time from a fresh ``phoned mcp`` start to the first verified tool call, as an agent sees it.

Starts (and always stops) a private adb server, a simulated phone (``phoned sim --connect``)
and a daemon (``phoned run``) over a fresh SQLite queue. Then, ``--runs`` times, an MCP
client (the SDK's ``ClientSession`` over ``stdio_client``) spawns a fresh ``phoned mcp``,
initializes, lists the tools and calls ``dnd_set``; the call counts once its result says
``completed`` and the phone itself (``adb shell settings get global zen_mode``) shows the
mode. Prints the median and every run; ``--tools`` prints the tool list as the client saw it
(``--tools-json FILE``: the whole ``tools/list`` result).

    .venv/bin/python scripts/bench_mcp.py [--runs 5] [--tools] [--tools-json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import adbutils
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts.* when run as a file
from scripts.stack import free_port

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
MODES = {"priority": "1", "total_silence": "2", "alarms": "3", "off": "0"}


def adb(env: dict[str, str], port: int, *args: str) -> str:
    done = subprocess.run([adbutils.adb_path(), "-P", str(port), *args], env=env, check=True,
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    return done.stdout.strip()


async def one_run(params: StdioServerParameters, mode: str, check: Any) -> dict[str, Any]:
    started = time.perf_counter()
    marks: dict[str, float] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        marks["initialized"] = time.perf_counter() - started
        listed = await session.list_tools()
        marks["tools_listed"] = time.perf_counter() - started
        result = await session.call_tool("dnd_set", {"mode": mode})
        out = result.structured_content or {}
        if result.is_error or out.get("state") != "completed" or not check(mode):
            raise RuntimeError(f"dnd_set {mode} not verified: {result.content}")
        marks["first_verified_call"] = time.perf_counter() - started
        marks["call_only"] = marks["first_verified_call"] - marks["tools_listed"]
    return {"marks": marks, "tools": listed.tools}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tools", action="store_true", help="print the tool list as seen")
    parser.add_argument("--tools-json", metavar="FILE", help="write the tools/list result here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="phoned-bench-mcp-"))
    adb_port, sim_port = free_port(), free_port()
    serial = f"127.0.0.1:{sim_port}"
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb_port), "PHONED_CONFIG": "/dev/null",
           "PHONED_STATE_DIR": str(work / "state"), "PHONED_POLL_INTERVAL": "0.2"}  # fmt: skip
    queue = f"sqlite:///{work / 'state' / 'queue.db'}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        adb(env, adb_port, "start-server")
        log = (work / "sim.log").open("wb")
        procs.append(subprocess.Popen([PY, "-m", "phoned.daemon.cli", "sim", "--port", str(sim_port),
                                       "--connect"], env=env, cwd=ROOT, stdout=log, stderr=log))  # fmt: skip
        deadline = time.monotonic() + 30
        while f"{serial}\tdevice" not in adb(env, adb_port, "devices"):
            if time.monotonic() > deadline:
                raise RuntimeError("the simulated phone did not come online")
            time.sleep(0.2)
        log = (work / "daemon.log").open("wb")
        procs.append(subprocess.Popen([PY, "-m", "phoned.daemon.cli", "run", "--queue", queue], env=env,
                                      cwd=ROOT, stdout=log, stderr=log))  # fmt: skip

        def on_phone(mode: str) -> bool:
            shown = adb(env, adb_port, "-s", serial, "shell", "settings get global zen_mode")
            return shown == MODES[mode]

        params = StdioServerParameters(
            command=PY, args=["-m", "phoned.daemon.cli", "mcp", "--queue", queue, "--conversation",
                              "bench"], env=env, cwd=str(ROOT),
        )  # fmt: skip
        runs = []
        names = list(MODES)
        for i in range(args.runs):
            runs.append(anyio.run(one_run, params, names[i % len(names)], on_phone))
    finally:
        for proc in reversed(procs):
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=20)
        with contextlib.suppress(Exception):
            adb(env, adb_port, "kill-server")
    for key in ("initialized", "tools_listed", "first_verified_call", "call_only"):
        values = [r["marks"][key] for r in runs]
        shown = ", ".join(f"{v * 1000:.0f}" for v in values)
        print(f"{key:<20} median {statistics.median(values) * 1000:7.0f} ms   runs: {shown}")
    if args.tools:
        for tool in runs[0]["tools"]:
            hints = tool.annotations
            flags = (f"readOnly={hints.read_only_hint} destructive={hints.destructive_hint} "
                     f"idempotent={hints.idempotent_hint}")  # fmt: skip
            params_ = ", ".join(
                f"{name}{'*' if name in tool.input_schema.get('required', []) else ''}"
                for name in tool.input_schema["properties"]
            )
            print(f"{tool.name:<20} ({params_})  {flags}")
    if args.tools_json:
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in runs[0]["tools"]]
        Path(args.tools_json).write_text(json.dumps(tools, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
