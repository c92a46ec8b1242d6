"""A headless Chromium driven over the Chrome DevTools Protocol (test helper, stdlib only).

``Chromium.start(tmp)`` runs ``/usr/bin/chromium --headless`` with a fresh user data dir,
``--remote-debugging-port=0`` and the flags this closed network needs; the port is read
from ``DevToolsActivePort`` in the user data dir. ``page()`` connects to the first page
target (``GET /json/list``) over a minimal RFC 6455 websocket client (client frames
masked, text and continuation frames reassembled, pings answered). ``Page.call(method,
**params)`` sends one CDP command and returns its ``result`` (events are skipped);
``Page.evaluate(expr)`` returns the value of a JavaScript expression (promises awaited).
``stop()`` kills the browser and removes nothing it did not create.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1400,1800", "--remote-debugging-port=0",
)  # fmt: skip


class CdpError(RuntimeError):
    """The browser answered a command with an error, or the connection broke."""


class WebSocket:
    """One client websocket over a plain TCP connection (loopback only)."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        assert url.startswith("ws://127.0.0.1:"), url
        host_port, _, path = url[len("ws://") :].partition("/")
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise CdpError("websocket handshake: connection closed")
            head += chunk
        if not head.startswith(b"HTTP/1.1 101"):
            raise CdpError(f"websocket handshake refused: {head[:200]!r}")

    def send_text(self, text: str) -> None:
        """One masked text frame."""
        payload = text.encode()
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x81, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise CdpError("websocket closed")
            data += chunk
        return data

    def _frame(self) -> tuple[int, bool, bytes]:
        first, second = self._exact(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack("!H", self._exact(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", self._exact(8))[0]
        mask = self._exact(4) if second & 0x80 else b""
        payload = self._exact(size)
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return first & 0x0F, bool(first & 0x80), payload

    def recv_text(self) -> str:
        """The next whole text message (pings answered, close raises)."""
        parts: list[bytes] = []
        while True:
            opcode, fin, payload = self._frame()
            if opcode == 0x8:
                raise CdpError("websocket closed by the browser")
            if opcode == 0x9:
                self.sock.sendall(
                    struct.pack("!BB", 0x8A, 0x80 | len(payload)) + b"\0" * 4 + payload
                )
                continue
            if opcode in (0x1, 0x0):
                parts.append(payload)
                if fin:
                    return b"".join(parts).decode()

    def close(self) -> None:
        self.sock.close()


class Page:
    """A CDP session on one page target."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command; its result (CdpError on an error answer)."""
        self.next_id += 1
        wanted = self.next_id
        self.ws.send_text(json.dumps({"id": wanted, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv_text())
            if message.get("id") != wanted:
                continue  # an event
            if "error" in message:
                raise CdpError(f"{method}: {message['error']}")
            result: dict[str, Any] = message.get("result", {})
            return result

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise CdpError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll ``expression`` until it is truthy; its value (AssertionError on timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"page never satisfied: {expression}")

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page."""
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


class Chromium:
    """A headless Chromium with a fresh profile, reachable over CDP on loopback."""

    def __init__(self, profile: Path, proc: subprocess.Popen[bytes], port: int) -> None:
        self.profile = profile
        self.proc = proc
        self.port = port
        self.pages: list[Page] = []

    @classmethod
    def start(cls, tmp: Path, timeout: float = 30.0) -> Chromium:
        """Launch the browser; raise RuntimeError (with its log) if it does not come up."""
        profile = tmp / "chromium-profile"
        profile.mkdir()
        with (tmp / "chromium.log").open("wb") as log:
            proc = subprocess.Popen(
                [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        active = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (active.is_file() and active.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise RuntimeError(
                    f"chromium did not start: {(tmp / 'chromium.log').read_text()[-2000:]}"
                )
            time.sleep(0.05)
        port = int(active.read_text().split()[0])
        return cls(profile, proc, port)

    def page(self) -> Page:
        """A CDP session on the browser's first page."""
        targets = httpx.get(f"http://127.0.0.1:{self.port}/json/list", timeout=10).json()
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        page = Page(WebSocket(url))
        self.pages.append(page)
        return page

    def stop(self) -> None:
        for page in self.pages:
            page.ws.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)
