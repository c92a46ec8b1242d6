"""Memory of never-closed MCP sessions in a real ``phoned mcp --http`` process.

    .venv/bin/python scripts/bench_mcp_sessions.py [--repo DIR] [--sessions 1000]
        [--max-sessions N]

Starts ``phoned mcp --http 127.0.0.1:PORT`` over a fresh SQLite queue with one planner
token, opens 20 sessions to warm it up (each an ``initialize`` POST that is never followed
by a ``DELETE``), reads the server's RSS (``/proc/<pid>/status`` VmRSS), opens
``--sessions`` more and reads it again: the difference over the sessions admitted is the
memory one open session holds. Prints how many were admitted and refused (503): with the
per-token cap every request past ``--max-sessions`` is refused and the RSS stays put.

``--max-sessions`` is passed to the server when given (the "after" figure per session needs
it above ``--sessions``); ``--repo`` runs the server from another checkout (the "before"
figures; it then gets no session options). The script only speaks HTTP.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from phoned.daemon.server.auth import Role, make_token  # noqa: E402

from scripts.stack import free_port, start_server  # noqa: E402

WARM_UP = 20
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "1"}},
}  # fmt: skip


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit(f"no VmRSS for {pid}")


def _answers(url: str) -> bool:
    """Any HTTP answer at all: the MCP endpoint refuses a bare GET, but it listens."""
    httpx.get(url, timeout=1)
    return True


def start(repo: Path, tmp: Path, extra: list[str]) -> tuple[subprocess.Popen[bytes], str, str]:
    token, entry = make_token(Role.PLANNER, name="bench")
    tokens = tmp / "tokens.yaml"
    tokens.write_text("tokens:\n" + entry)
    tokens.chmod(0o600)
    port = free_port()
    args = [sys.executable, "-m", "phoned.daemon.cli", "mcp", "--queue", f"sqlite:///{tmp / 'q.db'}",
            "--http", f"127.0.0.1:{port}", "--tokens", str(tokens), *extra]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(repo), "PHONED_CONFIG": "/dev/null",
           "PHONED_STATE_DIR": str(tmp), "PHONED_LOG_LEVEL": "WARNING"}  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    proc = start_server("phoned mcp", args, repo, env, tmp / "mcp.log", lambda: _answers(url), 60)
    return proc, url, token


def open_sessions(client: httpx.Client, url: str, count: int) -> tuple[int, int]:
    """Open ``count`` sessions and leave them open; (admitted, refused)."""
    admitted = refused = 0
    for _ in range(count):
        answer = client.post(url, json=INITIALIZE)
        if answer.status_code == 200 and "mcp-session-id" in answer.headers:
            admitted += 1
        elif answer.status_code == 503:
            refused += 1
        else:
            raise SystemExit(f"unexpected {answer.status_code}: {answer.text[:200]}")
    return admitted, refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--max-sessions", type=int, default=None)
    opts = parser.parse_args()
    extra = [] if opts.max_sessions is None else ["--max-sessions", str(opts.max_sessions)]
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, token = start(opts.repo, Path(tmp), extra)
        try:
            headers = {"Authorization": f"Bearer {token}",
                       "Accept": "application/json, text/event-stream"}  # fmt: skip
            with httpx.Client(headers=headers, timeout=30) as client:
                open_sessions(client, url, WARM_UP)
                time.sleep(1)
                before = rss_kib(proc.pid)
                started = time.monotonic()
                admitted, refused = open_sessions(client, url, opts.sessions)
                took = time.monotonic() - started
                time.sleep(1)
                after = rss_kib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    print(f"server {opts.repo} {' '.join(extra)}".rstrip())
    print(f"  {opts.sessions} opening requests in {took:.1f} s after {WARM_UP} warm-up sessions: "
          f"{admitted} admitted, {refused} refused (503)")  # fmt: skip
    print(f"  RSS {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB "
          f"(+{(after - before) / 1024:.1f} MiB)")  # fmt: skip
    if admitted:
        print(f"  {(after - before) / admitted:.1f} KiB per open session")


if __name__ == "__main__":
    main()
