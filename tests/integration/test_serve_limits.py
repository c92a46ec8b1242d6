"""Limits of a real ``phoned serve`` process (issue #12 items 2, 3, 12).

Raw sockets where the point is what the server does before the body arrives: a huge
``Content-Length`` is answered 413 before one body byte is sent. 200 long-polls held open
(by 8 viewer tokens) while a daemon still claims and a planner still reads and submits.
HTTPS with ``--tls-cert/--tls-key`` (a self-signed certificate made with ``openssl``).
NUL characters over a PostgreSQL queue are 422 naming the field, not 503. A client
pointed at a plain ``http://`` plane off this machine logs a warning.
(Memory and latency figures: ``scripts/bench_limits.py``; no timing is asserted here.)
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import stacks
from phoned.daemon.lifecycle.errors import StoreUnavailable
from phoned.daemon.store.plane_client import PlaneClient
from planes import Grant, write_tokens
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)
from stacks import REPO

SERIAL = "emu-1"
DND = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c1"}
VIEWERS = 8  # 8 tokens x 25 polls = 200 open long-polls, each token within its share


class Serve(stacks.Serve):
    """``phoned serve`` with a token per role (and VIEWERS viewer tokens)."""

    def __init__(self, tmp: Path, queue: str | None = None, *extra: str) -> None:
        grants = {"daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner")}
        grants.update({f"viewer{i}": Grant("viewer") for i in range(VIEWERS)})
        self.tokens = write_tokens(tmp / "tokens.yaml", grants)
        super().__init__(tmp, tmp / "tokens.yaml", queue, *extra)

    def auth(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    server = Serve(tmp_path).start()
    try:
        yield server
    finally:
        server.stop()


def first_line_before_body(port: int, head: bytes, timeout: float = 15) -> str:
    """Send only the request head; the status line the server answers without the body."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head)
        try:
            answer = sock.recv(4096)
        except TimeoutError:
            return "(no answer: the server is waiting for the body)"
    return answer.split(b"\r\n", 1)[0].decode()


def test_a_huge_body_is_refused_before_it_is_sent(serve: Serve) -> None:
    size = 300 * 1024 * 1024
    tokenless = (
        b"POST /v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {size}\r\n\r\n".encode()
    )
    assert first_line_before_body(serve.port, tokenless) == "HTTP/1.1 413 Request Entity Too Large"
    planner = tokenless.replace(
        b"Host: x\r\n", f"Host: x\r\nAuthorization: Bearer {serve.tokens['planner']}\r\n".encode()
    )
    assert first_line_before_body(serve.port, planner).startswith("HTTP/1.1 413")
    with httpx.Client(base_url=serve.url, timeout=20) as client:
        task = client.post("/v1/tasks", json=DND, headers=serve.auth("planner")).json()["task"]
    upload = (
        f"PUT /v1/tasks/{task['id']}/artifacts/shot.png HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {serve.tokens['daemon']}\r\nContent-Length: {size}\r\n\r\n"
    ).encode()
    assert first_line_before_body(serve.port, upload).startswith("HTTP/1.1 413")
    with httpx.Client(base_url=serve.url, timeout=20) as client:  # the server is still fine
        assert client.get("/v1/queue", headers=serve.auth("planner")).status_code == 200


def test_a_request_without_a_known_token_is_401_before_its_body(serve: Serve) -> None:
    head = "POST /v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n{}\r\n"
    assert first_line_before_body(serve.port, head.format("").encode()).startswith("HTTP/1.1 401")
    wrong = head.format("Authorization: Bearer phd_not-a-token\r\n").encode()
    assert first_line_before_body(serve.port, wrong).startswith("HTTP/1.1 401")
    known = head.format(f"Authorization: Bearer {serve.tokens['planner']}\r\n").encode()
    assert first_line_before_body(serve.port, known, timeout=3).startswith("(no answer")


def test_claims_and_reads_answer_while_200_long_polls_are_open(serve: Serve) -> None:
    client = httpx.Client(base_url=serve.url, timeout=15)  # polls wait 30 s: far longer
    cursor = client.get("/v1/events", headers=serve.auth("planner")).json()["cursor"]
    polls = []
    try:
        for i in range(200):
            sock = socket.create_connection(("127.0.0.1", serve.port))
            sock.sendall(
                f"GET /v1/events?after={cursor + 10**6}&wait=30 HTTP/1.1\r\nHost: x\r\n"
                f"Authorization: Bearer {serve.tokens[f'viewer{i % VIEWERS}']}\r\n\r\n".encode()
            )
            polls.append(sock)
        time.sleep(2)  # let the server take every poll in
        task = client.post("/v1/tasks", json=DND, headers=serve.auth("planner"))
        assert task.status_code == 201, task.text
        claim = {"owner": f"d1/{SERIAL}", "device": SERIAL}
        claimed = client.post("/v1/claims", json=claim, headers=serve.auth("daemon"))
        assert (
            claimed.status_code == 200 and claimed.json()["task"]["id"] == task.json()["task"]["id"]
        )
        assert client.get("/v1/queue", headers=serve.auth("planner")).status_code == 200
        assert client.get("/v1/tasks", headers=serve.auth("viewer0")).status_code == 200
        for sock in polls:  # every poll was admitted and is still waiting (none refused)
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)
    finally:
        client.close()
        for sock in polls:
            sock.close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")
def test_serve_over_tls_with_a_self_signed_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = Serve(tmp_path, None, "--tls-cert", str(cert), "--tls-key", str(key))
    trusted = ssl.create_default_context(cafile=str(cert))
    try:
        server.start(verify=trusted)
        with httpx.Client(base_url=server.url, verify=trusted, timeout=10) as client:
            assert client.post("/v1/tasks", json=DND, headers=server.auth("planner")).is_success
            assert client.get("/v1/queue", headers=server.auth("planner")).json()["queue"]
        # the phoned client trusts the certificate SSL_CERT_FILE names, else certifi's
        # bundle, which does not hold a self-signed one: unreachable, never unchecked
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        untrusting = PlaneClient(server.url, server.tokens["planner"])
        with pytest.raises(StoreUnavailable, match="SSLError"):
            untrusting.queue_status()
        untrusting.close()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        trusting = PlaneClient(server.url, server.tokens["planner"])
        assert trusting.queue_status()["queued"] == 1
        trusting.close()
        with pytest.raises(httpx.HTTPError):  # plain HTTP to the TLS port gets nowhere
            httpx.get(f"http://127.0.0.1:{server.port}/openapi.json", timeout=5).raise_for_status()
    finally:
        server.stop()
    half = subprocess.run(
        [*server.args[:-4], "--tls-cert", str(cert)], capture_output=True, text=True, cwd=REPO
    )
    assert half.returncode == 2 and "--tls-cert and --tls-key go together" in half.stderr


@pytest.mark.usefixtures("postgres_url")  # starts the session's throwaway server
def test_nul_over_postgresql_is_422_naming_the_field_not_503(tmp_path: Path) -> None:
    server = Serve(tmp_path, fresh_schema_url(f"nul-{tmp_path.name}"))
    try:
        server.start()
        with httpx.Client(base_url=server.url, timeout=20) as client:
            planner, daemon = server.auth("planner"), server.auth("daemon")
            bad = client.post(
                "/v1/tasks", json={**DND, "conversation_id": "c\x001"}, headers=planner
            )
            assert bad.status_code == 422, bad.text
            assert [e["field"] for e in bad.json()["errors"]] == ["conversation_id"]
            client.post("/v1/tasks", json=DND, headers=planner).raise_for_status()
            claim = {"owner": f"d1/{SERIAL}", "device": SERIAL}
            task = client.post("/v1/claims", json=claim, headers=daemon).json()["task"]
            ticket = {"owner": task["lease_owner"], "attempt": 1, "revision": task["revision"]}
            doc = {"ticket": ticket, "kind": "outcome", "body": {"read_back": "a\x00b"}}
            bad = client.post(f"/v1/tasks/{task['id']}/evidence", json=doc, headers=daemon)
            assert bad.status_code == 422, bad.text
            assert [e["field"] for e in bad.json()["errors"]] == ["body.read_back"]
            listed = client.get("/v1/tasks", params={"device": "e\x00"}, headers=planner)
            assert listed.status_code == 422, listed.text
            status = client.get(f"/v1/tasks/{task['id']}", headers=planner)
            assert status.status_code == 200 and status.json()["evidence"] == []
    finally:
        server.stop()


def test_a_plain_http_plane_off_this_machine_is_warned_about(serve: Serve, tmp_path: Path) -> None:
    env = {**os.environ, "PHONED_TOKEN": serve.tokens["planner"],
           "PHONED_OUTBOX": str(tmp_path / "outbox.db")}  # fmt: skip
    far = subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "tasks", "--queue", "http://192.0.2.1:8400"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert "plain http:// on a non-loopback address" in far.stderr, far.stderr
    near = subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "tasks", "--queue", serve.url],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert near.returncode == 0, near.stderr
    assert "plain http://" not in near.stderr


def test_a_shutdown_answers_waiting_long_polls_instead_of_waiting_them_out(
    serve: Serve,
) -> None:
    with httpx.Client(base_url=serve.url, timeout=20) as client:
        cursor = client.get("/v1/events", headers=serve.auth("planner")).json()["cursor"]
    polls = []
    for i in range(5):
        sock = socket.create_connection(("127.0.0.1", serve.port), timeout=25)
        sock.sendall(
            f"GET /v1/events?after={cursor}&wait=30 HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {serve.tokens[f'viewer{i}']}\r\n\r\n".encode()
        )
        polls.append(sock)
    time.sleep(1)
    assert serve.proc is not None
    serve.proc.terminate()
    try:
        for sock in polls:  # each answers now (25 s socket timeout < its 30 s wait)
            answer = b""
            while chunk := sock.recv(65536):  # the server closes it after the answer
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer
            assert b'"events":[]' in answer
        assert serve.proc.wait(timeout=25) in (0, -15)  # uvicorn re-raises the SIGTERM
    finally:
        for sock in polls:
            sock.close()
