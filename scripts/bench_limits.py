"""Measure the control plane's resource limits against a real ``phoned serve`` process.

    .venv/bin/python scripts/bench_limits.py [--repo DIR] [--body-mb 300] [--polls 200]
        [--only post post-chunked put chunked polls]

1. Memory: the server's RSS (``/proc/<pid>/status`` VmRSS, and VmHWM for the peak) before
   and after a ``--body-mb`` MB body sent over a raw socket in 1 MiB chunks until the
   server answers: ``post`` a ``POST /v1/tasks`` without a token (``post-chunked``: the
   same without a length); ``put`` an artifact
   upload with a daemon token and ``Content-Length``; ``chunked`` the same without a
   length (chunked transfer). Each on a fresh server process.
2. Long-polls: ``--polls`` ``GET /v1/events?wait=30`` left open (spread over several viewer
   tokens, 25 each, so a per-token cap does not refuse them), then the latency of
   ``GET /v1/queue`` and of a daemon claim (median of 5 each).

``--repo`` runs the server from another checkout (e.g. ``/work/main`` for the "before"
figures); the script itself only speaks HTTP, so it measures either version the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from phoned.daemon.server.auth import Role, make_token  # noqa: E402

from scripts.stack import free_port, start_server  # noqa: E402

SERIAL = "emu-1"
PER_TOKEN = 25


def rss_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def _openapi_ok(url: str) -> bool:
    """The server answers its OpenAPI document: its routes are up."""
    return httpx.get(f"{url}/openapi.json", timeout=1).status_code == 200


def start(repo: Path, tmp: Path, tokens: Path) -> tuple[subprocess.Popen[bytes], str]:
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    args = [sys.executable, "-m", "phoned.daemon.verbs.serve", "--queue",
            f"sqlite:///{tmp / 'queue.db'}", "--port", str(port), "--tokens", str(tokens),
            "--state-dir", str(tmp / "serve")]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(repo), "PHONED_LOG_LEVEL": "WARNING"}
    url = f"http://127.0.0.1:{port}"
    proc = start_server("serve", args, repo, env, tmp / "serve.log", lambda: _openapi_ok(url))
    return proc, url


def big_post(port: int, megabytes: int, request: str, headers: str) -> tuple[str, int]:
    """Send a huge JSON body; the status line answered and the bytes sent before it."""
    head, tail = b'{"method": "sms.send", "text": "', b'"}'
    total = megabytes * 1024 * 1024
    chunks = [head, *([b"a" * (1024 * 1024)] * (megabytes - 1)),
              b"a" * (1024 * 1024 - len(head) - len(tail)), tail]  # fmt: skip
    sent = 0
    status = ""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        chunked = "Transfer-Encoding: chunked" in headers
        length = "" if chunked else f"Content-Length: {total}\r\n"
        sock.sendall(
            f"{request} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{headers}".encode()
            + f"{length}\r\n".encode()
        )
        if chunked:
            chunks = [b"%x\r\n%b\r\n" % (len(c), c) for c in chunks] + [b"0\r\n\r\n"]
        for chunk in chunks:
            sock.settimeout(0.0)
            try:
                answer = sock.recv(4096)
            except BlockingIOError:
                answer = b""
            if answer:
                status = answer.split(b"\r\n", 1)[0].decode()
                break
            sock.settimeout(60)
            try:
                sock.sendall(chunk)
            except OSError:
                break
            sent += len(chunk)
        if not status:
            sock.settimeout(300)
            status = sock.recv(4096).split(b"\r\n", 1)[0].decode()
    return status, sent


def measure_memory(proc: subprocess.Popen[bytes], url: str, megabytes: int, request: str,
                   headers: str = "", what: str = "") -> None:  # fmt: skip
    port = int(url.rsplit(":", 1)[1])
    before = rss_kib(proc.pid)
    t0 = time.monotonic()
    status, sent = big_post(port, megabytes, request, headers)
    took = time.monotonic() - t0
    time.sleep(0.5)
    after = rss_kib(proc.pid)
    print(f"memory: {megabytes} MB {request.split(' /')[0]} {what} -> {status!r} after {sent / 2**20:.0f} MiB "
          f"sent, {took:.2f} s")  # fmt: skip
    print(f"  RSS before {before['VmRSS'] / 1024:.0f} MiB, peak so far {after['VmHWM'] / 1024:.0f} MiB, "
          f"after {after['VmRSS'] / 1024:.0f} MiB")  # fmt: skip


def open_polls(port: int, tokens: list[str], polls: int, after: int) -> list[socket.socket]:
    socks = []
    for i in range(polls):
        sock = socket.create_connection(("127.0.0.1", port))
        token = tokens[i // PER_TOKEN]
        sock.sendall(
            f"GET /v1/events?after={after}&wait=30 HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {token}\r\n\r\n".encode()
        )
        socks.append(sock)
    return socks


def measure_polls(url: str, raw: dict[str, str], viewers: list[str], polls: int) -> None:
    port = int(url.rsplit(":", 1)[1])
    client = httpx.Client(base_url=url, timeout=120)
    planner = {"Authorization": f"Bearer {raw['planner']}"}
    daemon = {"Authorization": f"Bearer {raw['daemon']}"}
    task = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c1"}

    def timed(method: str, path: str, headers: dict[str, str], **kw: object) -> float:
        t0 = time.monotonic()
        response = client.request(method, path, headers=headers, **kw)  # type: ignore[arg-type]
        assert response.status_code < 300, response.text
        return time.monotonic() - t0

    cursor = client.get("/v1/events", headers=planner).json()["cursor"]
    base_q = statistics.median(timed("GET", "/v1/queue", planner) for _ in range(5))
    socks = open_polls(port, viewers, polls, cursor + 10**9)
    time.sleep(2.0)
    queue = [timed("GET", "/v1/queue", planner) for _ in range(5)]
    claims = []
    for _ in range(5):
        client.post("/v1/tasks", json=task, headers=planner)
        body = {"owner": f"d1/{SERIAL}", "device": SERIAL}
        claims.append(timed("POST", "/v1/claims", daemon, json=body))
    answered = 0
    for sock in socks:
        sock.settimeout(0.0)
        with contextlib.suppress(BlockingIOError):
            answered += bool(sock.recv(64))
        sock.close()
    print(f"long-polls: {polls} open /v1/events (wait=30); {answered} had answered already")
    ms = ", ".join(f"{q * 1000:.0f}" for q in queue)
    print(f"  GET /v1/queue idle median {base_q * 1000:.1f} ms; with the polls open: {ms} ms")
    ms = ", ".join(f"{c * 1000:.0f}" for c in claims)
    print(f"  then submit + POST /v1/claims, claim latencies: {ms} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", type=Path, default=REPO, help="checkout to run serve from")
    parser.add_argument("--body-mb", type=int, default=300)
    parser.add_argument("--polls", type=int, default=200)
    cases = ["post", "post-chunked", "put", "chunked", "polls"]
    parser.add_argument("--only", nargs="+", default=cases, choices=cases)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="phoned-bench-limits-"))
    raw, entries, viewers = {}, [], []
    for role, devices in (("daemon", (SERIAL,)), ("planner", ())):
        raw[role], entry = make_token(Role(role), devices, name=role)
        entries.extend(yaml.safe_load(entry))
    for i in range((args.polls + PER_TOKEN - 1) // PER_TOKEN):
        token, entry = make_token(Role.VIEWER, (), name=f"viewer-{i}")
        viewers.append(token)
        entries.extend(yaml.safe_load(entry))
    tokens = tmp / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"tokens": entries}))
    print(f"server from {args.repo} ({subprocess.run(['git', '-C', str(args.repo), 'log', '-1', '--format=%h'], capture_output=True, text=True).stdout.strip()})")  # fmt: skip
    daemon = f"Authorization: Bearer {raw['daemon']}\r\n"
    cases = {
        "post": ("POST /v1/tasks", "", "/v1/tasks, no token"),
        "post-chunked": ("POST /v1/tasks", "Transfer-Encoding: chunked\r\n",
                         "/v1/tasks, no token, chunked (no length)"),
        "put": ("PUT {artifact}", daemon, "artifact, daemon token"),
        "chunked": ("PUT {artifact}", daemon + "Transfer-Encoding: chunked\r\n",
                    "artifact, daemon token, chunked (no length)"),
    }  # fmt: skip
    for case in args.only:  # each on a fresh server, so every peak RSS is its own
        proc, url = start(args.repo, tmp / case, tokens)
        try:
            if case == "polls":
                measure_polls(url, raw, viewers, args.polls)
                continue
            planner = {"Authorization": f"Bearer {raw['planner']}"}
            task = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c1",
                    "device": SERIAL}  # fmt: skip
            task_id = httpx.post(f"{url}/v1/tasks", json=task, headers=planner).json()["task"]["id"]
            request, headers, what = cases[case]
            request = request.format(artifact=f"/v1/tasks/{task_id}/artifacts/big.bin")
            measure_memory(proc, url, args.body_mb, request, headers, what)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
