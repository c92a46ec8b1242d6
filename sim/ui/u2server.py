"""``app_process`` running the uiautomator2 server jar: a loopback HTTP JSON-RPC server.

The uiautomator2 client (3.7.1 ``core.py``) pushes ``u2.jar`` then runs
``CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008`` as a
streaming shell, polls ``GET /ping`` for ``pong`` through ``tcp:9008`` and posts JSON-RPC to
``/jsonrpc/0``. The server's startup lines are the jar's own strings (``[server] INFO: ``,
``[UiAutomator2Server] Starting Server``, ``http server listening on *:``). A missing jar
or class aborts the runtime: the shell prints ``Aborted`` and exits 134 (captured in
Genymobile/scrcpy#902 and jiahuanyu/open-rc#3: ClassNotFoundException is fatal in
app_process); the ``u2-broken`` scenario makes every launch end that way.

The server registers UiAutomation for its whole life (``automation.py``): it refuses to
start while another client holds it (the "already registered" trace the client matches)
and a ``uiautomator dump`` meanwhile fails. It takes ``costs.u2_start_s`` to answer
``/ping``; ``u2-dies-after:N`` or ``automation.kill_u2()`` kill it (the shell stream ends
with 137, the port stops answering), as the system does to a background process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.ui.automation import ALREADY_REGISTERED, U2_HOLDER
from phoned.sim.ui.model import Ui
from phoned.sim.ui.u2rpc import Rpc

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState
    from phoned.sim.ui.automation import UiAutomation

U2_MAIN = "com.wetest.uia2.Main"
ABORTED_EXIT = 134
KILLED_EXIT = 137


def _handler_for(rpc: Rpc, kill: Callable[[], None]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """``/ping`` and ``/jsonrpc/0`` of the uiautomator2 server (NanoHTTPD on the phone)."""

        def _reply(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/ping":
                self._reply(200, b"pong", "text/plain")
            else:
                self._reply(404, b"Not Found", "text/plain")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path != "/jsonrpc/0":
                self._reply(404, b"Not Found", "text/plain")
                return
            try:
                request = json.loads(raw)
            except ValueError:
                response = {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32700, "message": "JSON parse error"},
                }
            else:
                response = rpc.call(request)
            body = json.dumps(response, ensure_ascii=False).encode("utf-8")
            self._reply(200, body, "application/json")
            if rpc.phone.service(Ui).automation.rpc_served():
                kill()  # u2-dies-after: this was the last call it answers

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


class U2Server:
    """One running uiautomator2 server: an HTTP listener registered as ``tcp:PORT``."""

    def __init__(self, phone: PhoneState, device_port: int) -> None:
        self.phone = phone
        self.device_port = device_port
        self.death = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(Rpc(phone), self.kill))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, name="u2-server", daemon=True
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self.thread.start()
        with self.phone.lock:
            self.phone.tcp_listeners[self.device_port] = self.address

    def kill(self) -> None:
        """The process dies now: its port stops answering and UiAutomation is released
        (the serving loop then finishes the shutdown)."""
        with self.phone.lock:
            if self.phone.tcp_listeners.get(self.device_port) == self.address:
                del self.phone.tcp_listeners[self.device_port]
            self.phone.service(Ui).automation.release(U2_HOLDER)
            self.death.set()

    def stop(self) -> None:
        with self.phone.lock:
            if self.phone.tcp_listeners.get(self.device_port) == self.address:
                del self.phone.tcp_listeners[self.device_port]
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def _port(args: list[str]) -> int:
    return int(args[args.index("-p") + 1]) if "-p" in args[:-1] else 9008


@tool("app_process", "app_process64")
def app_process(io: ToolIO, argv: list[str]) -> int:
    """``app_process DIR CLASS ARGS``; only the uiautomator2 server class is runnable."""
    classpath = io.env.get("CLASSPATH", "")
    cls = argv[2] if len(argv) > 2 else ""
    with io.phone.lock:
        jar_ok = bool(classpath) and all(
            io.phone.fs.exists(p) and not io.phone.fs.is_dir(p) for p in classpath.split(":")
        )
    automation = io.phone.service(Ui).automation
    if not jar_ok or cls != U2_MAIN or automation.faults.u2_broken:
        io.err("Aborted \n")
        return ABORTED_EXIT
    port = _port(argv[3:])
    with io.phone.lock:
        if port in io.phone.tcp_listeners:
            io.err(
                "[server] ERROR: java.net.BindException: bind failed: EADDRINUSE "
                "(Address already in use)\n"
            )
            return 1
    io.out("[server] INFO: [UiAutomator2Server] Starting Server\n")
    if io.cancelled.wait(automation.costs.u2_start_s):
        return KILLED_EXIT
    if not automation.acquire(U2_HOLDER):
        io.out(ALREADY_REGISTERED)
        return 1
    return _serve(io, automation, port, argv)


def _serve(io: ToolIO, automation: UiAutomation, port: int, argv: list[str]) -> int:
    """Listen until the stream is closed (0) or the server is killed (137).

    The server is a process ``ps -A`` lists (user ``shell``, NAME ``app_process``, ARGS the
    command line) that ``kill PID`` ends. With ``u2-left-running`` it outlives its stream:
    the server stays registered until it is killed (the state openatx/uiautomator2#298 and
    #1013 report, where a later ``uiautomator dump`` finds UiAutomation taken).
    """
    server = U2Server(io.phone, port)
    with io.phone.lock:
        server.start()
        automation.u2_starts += 1
        automation.server_kill = server.kill
        pid = io.phone.processes.spawn("shell", argv[0], " ".join(argv), server.kill)
    io.out(f"[server] INFO: http server listening on *:{port}\n")
    while not io.cancelled.wait(0.05):
        if server.death.is_set():
            _gone(io.phone, automation, server, pid)
            return KILLED_EXIT
    if automation.faults.u2_left_running:
        threading.Thread(
            target=_orphan, args=(io.phone, automation, server, pid), name="u2-orphan",
            daemon=True,
        ).start()  # fmt: skip
        return 0
    _gone(io.phone, automation, server, pid)
    return 0


def _orphan(phone: PhoneState, automation: UiAutomation, server: U2Server, pid: int) -> None:
    """A server whose stream is gone keeps serving until something kills it."""
    server.death.wait()
    _gone(phone, automation, server, pid)


def _gone(phone: PhoneState, automation: UiAutomation, server: U2Server, pid: int) -> None:
    """The process is gone: port closed, UiAutomation released, out of the process table."""
    with phone.lock:
        if automation.server_kill == server.kill:
            automation.server_kill = None
        phone.processes.exited(pid)
    server.kill()
    server.stop()
