"""The services a host can open on the simulated phone, and how each one is served.

``resolve_service(ctx, name)`` turns the OPEN payload into a handler, or None (the
connection then refuses the stream with ``CLSE(0, remote-id)`` as adbd does for an unknown
service or a refused ``tcp:`` connect). A handler runs on the stream's own thread.

Behaviour sources (AOSP ``packages/modules/adb``):

- ``daemon/services.cpp`` ``daemon_service_to_fd``: ``shell``/``exec:``/``sync:``/``tcp:``/
  ``localabstract:``/``reboot:`` prefixes.
- ``daemon/shell_service.cpp``: without the shell protocol (``shell:CMD``, ``exec:CMD``)
  the command runs in a raw-mode pty, so stderr is merged into stdout and no exit status is
  sent; with ``shell,v2`` stdout/stderr/exit travel as shell packets; a ``pty`` session
  merges stderr into the terminal and the line discipline turns ``\\n`` into ``\\r\\n``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from phoned.sim.adb.stream import Stream, StreamClosed
from phoned.sim.adb.sync_service import SyncSession
from phoned.sim.adb.wire import (
    SHELL_CLOSE_STDIN,
    SHELL_STDERR,
    SHELL_STDIN,
    SHELL_STDOUT,
    ShellPacketParser,
    ShellRequest,
    encode_exit_packet,
    encode_shell_packet,
    parse_shell_service,
)
from phoned.sim.shell.interpreter import Shell

if TYPE_CHECKING:
    from phoned.sim.phone import Phone
    from phoned.sim.shell.registry import OutputSink

TCP_CONNECT_TIMEOUT = 2.0


class ShellRunner(Protocol):
    """What the transport needs from the shell interpreter (``phoned.sim.shell.interpreter.Shell``)."""

    def run(
        self,
        line: str,
        stdout: OutputSink,
        stderr: OutputSink,
        *,
        stdin: bytes = b"",
        cancelled: threading.Event | None = None,
    ) -> int: ...


ShellFactory = Callable[["Phone"], ShellRunner]
Handler = Callable[[Stream], None]


def default_shell_factory(phone: Phone) -> ShellRunner:
    """The real interpreter."""

    return Shell(phone)


@dataclass
class ServiceContext:
    """What a service handler may use: the phone and the shell to run commands with."""

    phone: Phone
    shell_factory: ShellFactory


# --- output sinks ---------------------------------------------------------------------------


class RawSink:
    """Bytes straight to the stream (shell v1 / exec); ``crlf`` emulates a cooked pty."""

    def __init__(self, stream: Stream, *, crlf: bool = False) -> None:
        self.stream = stream
        self.crlf = crlf

    def write(self, data: bytes) -> None:
        if self.crlf:
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        self.stream.write(data)


class PacketSink:
    """Bytes wrapped as shell-v2 packets of one id (stdout or stderr)."""

    def __init__(self, stream: Stream, packet_id: int, *, crlf: bool = False) -> None:
        self.stream = stream
        self.packet_id = packet_id
        self.crlf = crlf

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self.crlf:
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        self.stream.write(encode_shell_packet(self.packet_id, data))


# --- shell and exec -------------------------------------------------------------------------


def run_command(
    ctx: ServiceContext, stream: Stream, line: str, sinks: tuple[OutputSink, OutputSink]
) -> int:
    """Run one command line on the phone (the shell applies ``faults.slow_ms``)."""
    shell = ctx.shell_factory(ctx.phone)
    return shell.run(line, sinks[0], sinks[1], stdin=b"", cancelled=stream.cancelled)


def shell_handler(ctx: ServiceContext, request: ShellRequest) -> Handler:
    """``shell[,v2][,raw|pty]:CMD``: v2 sends packets and an exit code, v1 only bytes."""

    def serve(stream: Stream) -> None:
        if request.v2:
            out: OutputSink = PacketSink(stream, SHELL_STDOUT, crlf=request.pty)
            err: OutputSink = out if request.pty else PacketSink(stream, SHELL_STDERR)
        else:
            out = err = RawSink(stream, crlf=request.pty)
        if request.command == "":
            code = interactive_loop(ctx, stream, (out, err), request)
        else:
            code = run_command(ctx, stream, request.command, (out, err))
        if request.v2:
            stream.write(encode_exit_packet(code))

    return serve


def exec_handler(ctx: ServiceContext, command: str) -> Handler:
    """``exec:CMD``: a raw pty without the shell protocol; stderr shares the stdout stream."""

    def serve(stream: Stream) -> None:
        sink = RawSink(stream)
        run_command(ctx, stream, command, (sink, sink))

    return serve


def prompt(phone: Phone) -> bytes:
    """The user-build ``mksh`` prompt, e.g. ``panther:/ $ ``."""
    return f"{phone.props.get('ro.product.device', 'android')}:/ $ ".encode()


class StdinReader:
    """The host's keystrokes: raw stream bytes, or the stdin packets of shell v2."""

    def __init__(self, stream: Stream, *, v2: bool) -> None:
        self.stream = stream
        self.parser = ShellPacketParser() if v2 else None
        self.eof = False

    def read(self) -> bytes:
        """Some input (``b""`` after a quiet second); ``StreamClosed`` at end of input."""
        data = self.stream.read_some(timeout=1.0)
        if self.parser is None:
            return data
        out = bytearray()
        for packet_id, payload in self.parser.feed(data):
            if packet_id == SHELL_STDIN:
                out += payload
            elif packet_id == SHELL_CLOSE_STDIN:
                self.eof = True
        if self.eof and not out:
            raise StreamClosed("stdin closed")
        return bytes(out)


def interactive_loop(
    ctx: ServiceContext, stream: Stream, sinks: tuple[OutputSink, OutputSink], request: ShellRequest
) -> int:
    """A minimal interactive shell: read a line, run it; ``exit`` or end of input ends it.

    With a pty mksh is interactive: it prints its prompt and the terminal echoes each typed
    line; on a raw pipe (``echo ls | adb shell``) it reads commands silently.
    """
    code = 0
    pending = bytearray()
    stdin = StdinReader(stream, v2=request.v2)
    show_prompt = prompt(ctx.phone) if request.pty else b""
    sinks[0].write(show_prompt)
    while not stream.cancelled.is_set():
        try:
            pending += stdin.read()
        except StreamClosed:
            break
        for line in _take_lines(pending):
            if request.pty:  # the terminal echoes what the user typed
                sinks[0].write(line.encode() + b"\n")
            if line == "exit":
                return code
            if line:
                code = run_command(ctx, stream, line, sinks)
            sinks[0].write(show_prompt)
    return code


def _take_lines(pending: bytearray) -> list[str]:
    """Remove and return every complete line (ended by CR or LF) from ``pending``."""
    text = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    *lines, rest = text.split(b"\n")
    pending[:] = rest
    return [line.decode("utf-8", "replace").strip() for line in lines]


# --- sync -----------------------------------------------------------------------------------


def sync_handler(ctx: ServiceContext) -> Handler:
    def serve(stream: Stream) -> None:
        SyncSession(ctx.phone, stream.read_exact, stream.write).serve()

    return serve


# --- tcp bridge -----------------------------------------------------------------------------


def connect_listener(phone: Phone, port: int) -> socket.socket | None:
    """A connected socket to whatever listens on the phone's ``port``; None if refused.

    Nagle is off on it, as adbd turns it off on every ``tcp:`` socket it connects
    (``disable_tcp_nagle`` in ``socket_spec_connect``, AOSP packages/modules/adb/
    socket_spec.cpp): what the host sends in two writes leaves the bridge as two writes,
    the second not held back for the listener's ACK of the first."""
    with phone.lock:
        target = phone.tcp_listeners.get(port)
    if target is None:
        return None
    try:
        sock = socket.create_connection(target, timeout=TCP_CONNECT_TIMEOUT)
    except OSError:
        return None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def tcp_handler(sock: socket.socket) -> Handler:
    """Bridge bytes both ways between the stream and a connected local socket."""

    def serve(stream: Stream) -> None:
        sock.settimeout(None)
        pump = threading.Thread(target=_host_to_socket, args=(stream, sock), daemon=True)
        pump.start()
        try:
            while True:
                data = sock.recv(256 * 1024)
                if not data:
                    break
                stream.write(data)
        except (OSError, StreamClosed):
            pass
        finally:
            _close_quietly(sock)
            pump.join(timeout=2.0)

    return serve


def _host_to_socket(stream: Stream, sock: socket.socket) -> None:
    try:
        while True:
            data = stream.read_some(timeout=1.0)
            if data:
                sock.sendall(data)
    except (OSError, StreamClosed):
        pass
    finally:
        _close_quietly(sock)


def _close_quietly(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def parse_tcp_port(spec: str) -> int | None:
    """``tcp:PORT`` or ``tcp:PORT:HOST`` → PORT (only the phone's own listeners are reachable)."""
    port_text = spec.split(":", 1)[0]
    if not port_text.isdigit():
        return None
    port = int(port_text)
    return port if 0 < port < 65536 else None


def _closing_handler(stream: Stream) -> None:
    """A service that does its work at once and closes (``reboot:``)."""


# --- dispatch -------------------------------------------------------------------------------


def _resolve_tcp(ctx: ServiceContext, rest: str) -> Handler | None:
    port = parse_tcp_port(rest)
    if port is None:
        return None
    sock = connect_listener(ctx.phone, port)
    return tcp_handler(sock) if sock is not None else None


def _resolve_exec(ctx: ServiceContext, rest: str) -> Handler | None:
    return exec_handler(ctx, rest)


def _resolve_sync(ctx: ServiceContext, _rest: str) -> Handler | None:
    return sync_handler(ctx)


def _resolve_reboot(_ctx: ServiceContext, _rest: str) -> Handler | None:
    return _closing_handler


PREFIXES: dict[str, Callable[[ServiceContext, str], Handler | None]] = {
    "tcp:": _resolve_tcp,
    "exec:": _resolve_exec,
    "sync:": _resolve_sync,
    "reboot:": _resolve_reboot,
}


def resolve_service(ctx: ServiceContext, name: str) -> Handler | None:
    """The handler for an OPEN payload (NUL stripped); None refuses the stream.

    Non-shell services are recorded in ``phone.log`` as ``("service", [name])``; shell
    commands are recorded by the interpreter itself.
    """
    request = parse_shell_service(name)
    if request is not None:
        return shell_handler(ctx, request)
    for prefix, resolve in PREFIXES.items():
        if name.startswith(prefix):
            ctx.phone.log.record("service", [name])
            return resolve(ctx, name[len(prefix) :])
    ctx.phone.log.record("service", [name])
    return None
