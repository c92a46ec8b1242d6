"""Pure framing of the ADB transport protocol, device side: no sockets, no threads.

Sources (facts, not code, are taken from them):

- message header, commands, magic, checksum: AOSP ``packages/modules/adb/protocol.txt`` and
  ``adb.h`` (``struct amessage``, ``A_CNXN``..., ``A_VERSION``, ``MAX_PAYLOAD``), mirrored at
  GrapheneOS/platform_packages_modules_adb ``adb.h``.
- checksum skipped from version 0x01000001: ``adb.h`` ``A_VERSION_SKIP_CHECKSUM``.
- connection banner ``device::prop=v;...;features=a,b``: ``adb.cpp`` ``get_connection_string``.
- shell protocol v2 packets ``[id:u8][length:u32 LE][data]`` and ids 0..5:
  ``shell_protocol.h`` (``ShellProtocol::Id``).
- service prefixes ``shell[,arg...]:command``: ``daemon/services.cpp`` ``daemon_service_to_fd``
  and ``services.cpp`` ``parse_shell_args`` (args ``v1``/``v2``, ``raw``/``pty``, ``TERM=``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_STLS = 0x534C5453

COMMAND_NAMES = {
    A_SYNC: "SYNC",
    A_CNXN: "CNXN",
    A_AUTH: "AUTH",
    A_OPEN: "OPEN",
    A_OKAY: "OKAY",
    A_CLSE: "CLSE",
    A_WRTE: "WRTE",
    A_STLS: "STLS",
}

A_VERSION_MIN = 0x01000000
A_VERSION_SKIP_CHECKSUM = 0x01000001
A_VERSION = 0x01000001
MAX_PAYLOAD = 1024 * 1024  # adb.h MAX_PAYLOAD (1 MiB since Android 9)
MAX_PAYLOAD_V1 = 4 * 1024

# AUTH arg0 (adb.h ADB_AUTH_*)
AUTH_TOKEN = 1
AUTH_SIGNATURE = 2
AUTH_RSAPUBLICKEY = 3
TOKEN_SIZE = 20  # adb_auth.h TOKEN_SIZE

HEADER = struct.Struct("<6I")
HEADER_SIZE = HEADER.size  # 24


class ProtocolError(Exception):
    """The peer sent something that is not a valid ADB message; the connection must close."""


@dataclass(frozen=True)
class Message:
    """One ADB message: ``command(arg0, arg1, data)``."""

    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return COMMAND_NAMES.get(self.command, f"0x{self.command:08x}")


@dataclass(frozen=True)
class Header:
    """A decoded, validated 24-byte message header."""

    command: int
    arg0: int
    arg1: int
    data_length: int
    data_check: int


def checksum(data: bytes) -> int:
    """The legacy payload checksum: the byte sum modulo 2**32 (not a CRC, despite its name)."""
    return sum(data) & 0xFFFFFFFF


def encode_message(msg: Message, *, with_checksum: bool = False) -> bytes:
    """Header plus payload, ready for the socket; the checksum is 0 unless asked for."""
    check = checksum(msg.data) if with_checksum else 0
    header = HEADER.pack(
        msg.command, msg.arg0, msg.arg1, len(msg.data), check, msg.command ^ 0xFFFFFFFF
    )
    return header + msg.data


def decode_header(raw: bytes, *, max_payload: int = MAX_PAYLOAD) -> Header:
    """Parse and validate a header; raise ``ProtocolError`` for a bad magic, an unknown
    command or a payload longer than ``max_payload``."""
    if len(raw) != HEADER_SIZE:
        raise ProtocolError(f"header must be {HEADER_SIZE} bytes, got {len(raw)}")
    command, arg0, arg1, length, check, magic = HEADER.unpack(raw)
    if command not in COMMAND_NAMES:
        raise ProtocolError(f"unknown command 0x{command:08x}")
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic 0x{magic:08x} for {COMMAND_NAMES[command]}")
    if length > max_payload:
        raise ProtocolError(f"payload of {length} bytes exceeds {max_payload}")
    return Header(command, arg0, arg1, length, check)


def verify_payload(header: Header, data: bytes, *, check_sum: bool) -> Message:
    """Join header and payload; with ``check_sum`` a wrong checksum raises ``ProtocolError``."""
    if check_sum and checksum(data) != header.data_check:
        raise ProtocolError("payload checksum mismatch")
    return Message(header.command, header.arg0, header.arg1, data)


def chunks(data: bytes, size: int) -> list[bytes]:
    """Split ``data`` into pieces of at most ``size`` bytes (one empty piece for no data)."""
    if not data:
        return [b""]
    return [data[i : i + size] for i in range(0, len(data), size)]


# --- CNXN banner ----------------------------------------------------------------------------

BANNER_PROPS = ("ro.product.name", "ro.product.model", "ro.product.device")


def connection_banner(props: dict[str, str], features: tuple[str, ...]) -> bytes:
    """``device::ro.product.name=..;ro.product.model=..;ro.product.device=..;features=..``.

    Same layout as adbd's ``get_connection_string`` (adb.cpp): properties joined by ``;``, no
    trailing separator, no NUL.
    """
    parts = [f"{key}={props.get(key, '')}" for key in BANNER_PROPS]
    parts.append("features=" + ",".join(features))
    return ("device::" + ";".join(parts)).encode("utf-8")


def parse_host_banner(data: bytes) -> dict[str, str]:
    """The ``key=value`` pairs of the host's CNXN banner (``host::features=...``)."""
    text = data.rstrip(b"\0").decode("utf-8", "replace")
    _, _, props = text.partition("::")
    out: dict[str, str] = {}
    for item in props.split(";"):
        key, sep, value = item.partition("=")
        if sep:
            out[key] = value
    return out


# --- shell protocol v2 ----------------------------------------------------------------------

SHELL_STDIN = 0
SHELL_STDOUT = 1
SHELL_STDERR = 2
SHELL_EXIT = 3
SHELL_CLOSE_STDIN = 4
SHELL_WINDOW_SIZE = 5
SHELL_HEADER = struct.Struct("<BI")


def encode_shell_packet(packet_id: int, data: bytes) -> bytes:
    """One shell-v2 packet: ``[id:u8][length:u32 LE][data]``."""
    return SHELL_HEADER.pack(packet_id, len(data)) + data


def encode_exit_packet(code: int) -> bytes:
    """The exit packet carries the status as a single byte (``code & 0xff``)."""
    return encode_shell_packet(SHELL_EXIT, bytes([code & 0xFF]))


class ShellPacketParser:
    """Incremental decoder of shell-v2 packets from arbitrary byte chunks."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """Append bytes; return every packet that is now complete, in order."""
        self._buf.extend(data)
        out: list[tuple[int, bytes]] = []
        while len(self._buf) >= SHELL_HEADER.size:
            packet_id, length = SHELL_HEADER.unpack_from(self._buf)
            end = SHELL_HEADER.size + length
            if len(self._buf) < end:
                break
            out.append((packet_id, bytes(self._buf[SHELL_HEADER.size : end])))
            del self._buf[:end]
        return out


# --- service names --------------------------------------------------------------------------


@dataclass(frozen=True)
class ShellRequest:
    """A parsed ``shell[,args]:command`` service name."""

    command: str
    v2: bool = False
    pty: bool = False
    term: str = ""


def parse_shell_service(name: str) -> ShellRequest | None:
    """Parse ``shell:CMD`` / ``shell,v2,raw,TERM=x:CMD``; None when ``name`` is no shell service.

    Without ``raw``/``pty`` a command runs raw and an empty command (interactive) gets a pty,
    as ``parse_shell_args``/``ShellService`` do in adbd. Unknown arguments are ignored.
    """
    if not (name.startswith("shell:") or name.startswith("shell,")):
        return None
    head, _, command = name.partition(":")
    args = head.split(",")[1:]
    v2 = "v2" in args and "v1" not in args
    term = next((a[5:] for a in args if a.startswith("TERM=")), "")
    if "pty" in args:
        pty = True
    elif "raw" in args:
        pty = False
    else:
        pty = command == ""
    return ShellRequest(command=command, v2=v2, pty=pty, term=term)
