"""Pure framing of the simulated phone's ADB transport: messages, shell v2, sync."""

from __future__ import annotations

import io
import struct
import threading
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from phoned.sim.adb import sync_service as sync
from phoned.sim.adb import wire
from phoned.sim.phone import CommandLog, FileSystem

# A host CNXN captured on the wire by an older adb (version 0x01000000, maxdata 4096,
# banner "host::\0", checksum 0x232), as printed in "Simple ADB Protocol Implementation"
# (github.com/cstyan/adbDocumentation).
CAPTURED_HOST_CNXN = b"CNXN\x00\x00\x00\x01\x00\x10\x00\x00\x07\x00\x00\x00\x32\x02\x00\x00\xbc\xb1\xa7\xb1host::\x00"


def test_captured_host_cnxn_decodes_and_its_checksum_verifies() -> None:
    header = wire.decode_header(CAPTURED_HOST_CNXN[:24])
    assert (header.command, header.arg0, header.arg1) == (wire.A_CNXN, 0x01000000, 4096)
    msg = wire.verify_payload(header, CAPTURED_HOST_CNXN[24:], check_sum=True)
    assert msg.data == b"host::\x00"
    assert wire.encode_message(msg, with_checksum=True) == CAPTURED_HOST_CNXN


@given(
    command=st.sampled_from(sorted(wire.COMMAND_NAMES)),
    arg0=st.integers(0, 2**32 - 1),
    arg1=st.integers(0, 2**32 - 1),
    data=st.binary(max_size=512),
)
def test_message_round_trip(command: int, arg0: int, arg1: int, data: bytes) -> None:
    raw = wire.encode_message(wire.Message(command, arg0, arg1, data), with_checksum=True)
    header = wire.decode_header(raw[:24])
    assert wire.verify_payload(header, raw[24:], check_sum=True) == wire.Message(
        command, arg0, arg1, data
    )


def test_checksum_skipped_from_version_0x01000001_is_zero() -> None:
    raw = wire.encode_message(wire.Message(wire.A_WRTE, 1, 2, b"abc"))
    assert struct.unpack("<6I", raw[:24])[4] == 0


@pytest.mark.parametrize(
    "raw, reason",
    [
        (struct.pack("<6I", wire.A_OKAY, 1, 2, 0, 0, wire.A_OKAY), "bad magic"),
        (struct.pack("<6I", 0x44434241, 0, 0, 0, 0, 0x44434241 ^ 0xFFFFFFFF), "unknown command"),
        (struct.pack("<6I", wire.A_WRTE, 1, 2, 2_000_000, 0, wire.A_WRTE ^ 0xFFFFFFFF), "exceeds"),
        (b"CNXN", "24 bytes"),
    ],
)
def test_bad_headers_are_protocol_errors(raw: bytes, reason: str) -> None:
    with pytest.raises(wire.ProtocolError, match=reason):
        wire.decode_header(raw)


def test_payload_checksum_mismatch_is_rejected_when_checked() -> None:
    header = wire.decode_header(CAPTURED_HOST_CNXN[:24])
    with pytest.raises(wire.ProtocolError):
        wire.verify_payload(header, b"host::\x01", check_sum=True)
    assert wire.verify_payload(header, b"host::\x01", check_sum=False).data == b"host::\x01"


def test_device_banner_layout() -> None:
    props = {
        "ro.product.name": "panther",
        "ro.product.model": "Pixel 7",
        "ro.product.device": "panther",
    }
    banner = wire.connection_banner(props, ("shell_v2", "cmd"))
    assert banner == (
        b"device::ro.product.name=panther;ro.product.model=Pixel 7;"
        b"ro.product.device=panther;features=shell_v2,cmd"
    )


def test_host_banner_parsing() -> None:
    assert wire.parse_host_banner(b"host::features=shell_v2,cmd,stat_v2\0") == {
        "features": "shell_v2,cmd,stat_v2"
    }


def test_chunks_respect_max_payload() -> None:
    assert [len(c) for c in wire.chunks(b"x" * 10, 4)] == [4, 4, 2]
    assert wire.chunks(b"", 4) == [b""]


# --- shell protocol v2 ----------------------------------------------------------------------


def test_shell_packets_encode_id_and_le_length() -> None:
    assert wire.encode_shell_packet(wire.SHELL_STDOUT, b"hi\n") == b"\x01\x03\x00\x00\x00hi\n"
    assert wire.encode_exit_packet(300) == b"\x03\x01\x00\x00\x00\x2c"


def test_shell_packet_parser_handles_split_input() -> None:
    stream = (
        wire.encode_shell_packet(wire.SHELL_STDOUT, b"out")
        + wire.encode_shell_packet(wire.SHELL_STDERR, b"")
        + wire.encode_exit_packet(0)
    )
    parser = wire.ShellPacketParser()
    got = []
    for i in range(len(stream)):
        got += parser.feed(stream[i : i + 1])
    assert got == [(1, b"out"), (2, b""), (3, b"\x00")]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("shell:echo hi", wire.ShellRequest("echo hi")),
        ("shell:", wire.ShellRequest("", pty=True)),
        ("shell,v2,raw:ls -l", wire.ShellRequest("ls -l", v2=True)),
        (
            "shell,v2,TERM=xterm-256color,pty:",
            wire.ShellRequest("", v2=True, pty=True, term="xterm-256color"),
        ),
        ("shell,raw:a:b", wire.ShellRequest("a:b")),
        ("shell,v2:echo", wire.ShellRequest("echo", v2=True)),
        ("shellx:echo", None),
        ("sync:", None),
    ],
)
def test_parse_shell_service(name: str, expected: wire.ShellRequest | None) -> None:
    assert wire.parse_shell_service(name) == expected


# --- sync -----------------------------------------------------------------------------------


def test_sync_ids_are_mkid_little_endian() -> None:
    assert sync.ID_STAT == 0x54415453
    assert struct.pack("<I", sync.ID_SND2) == b"SND2"


def test_sync_struct_sizes_match_file_sync_protocol_h() -> None:
    assert (sync.STAT_V1.size, sync.STAT_V2.size) == (16, 72)
    assert (sync.DENT_V1.size, sync.DENT_V2.size) == (20, 76)
    assert len(sync.encode_list_done(v2=True)) == 76
    assert sync.encode_list_done(v2=False) == b"DONE" + bytes(16)


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("/sdcard/a,33188", ("/sdcard/a", 33188)),  # adb sends "%s,%d"
        ("/sdcard/a,b.txt,0644", ("/sdcard/a,b.txt", 0o644)),
        ("/x,0x1ff", ("/x", 0o777)),
    ],
)
def test_send_v1_spec(spec: str, expected: tuple[str, int]) -> None:
    assert sync.parse_send_v1_spec(spec) == expected


def test_send_v1_spec_errors_use_adbd_messages() -> None:
    with pytest.raises(ValueError, match="missing , in ID_SEND_V1"):
        sync.parse_send_v1_spec("/sdcard/a")
    with pytest.raises(ValueError, match="bad mode"):
        sync.parse_send_v1_spec("/sdcard/a,zz")


def test_pushed_mode_copies_user_bits() -> None:
    assert sync.pushed_file_mode(0o100644) == 0o100666
    assert sync.pushed_file_mode(0o755) == 0o100777
    assert sync.pushed_file_mode(0o600) == 0o100666


def test_stat_v2_of_missing_path_carries_only_errno() -> None:
    raw = sync.encode_stat_v2(sync.ID_LST2, None, 2)
    fields = sync.STAT_V2.unpack(raw)
    assert fields[0] == sync.ID_LST2 and fields[1] == 2 and not any(fields[2:])


class _Pipe:
    """Feeds scripted host bytes to a SyncSession and collects what it writes."""

    def __init__(self, data: bytes) -> None:
        self._in = io.BytesIO(data)
        self.out = bytearray()

    def read(self, n: int) -> bytes:
        data = self._in.read(n)
        if len(data) < n:
            raise EOFError
        return data

    def write(self, data: bytes) -> None:
        self.out += data


def _session(host_bytes: bytes) -> tuple[SimpleNamespace, _Pipe]:
    phone = SimpleNamespace(lock=threading.RLock(), fs=FileSystem(), log=CommandLog())
    pipe = _Pipe(host_bytes)
    sync.SyncSession(phone, pipe.read, pipe.write).serve()  # type: ignore[arg-type]
    return phone, pipe


def test_sync_send_v2_then_recv_then_quit() -> None:
    body = b"x" * 70_000
    host = (
        sync.encode_request(sync.ID_SND2, "/data/local/tmp/d/f.bin")
        + sync.SEND_V2.pack(sync.ID_SND2, 0o644, 0)
        + sync.encode_data(body[:65536])
        + sync.encode_data(body[65536:])
        + sync.encode_done(1_700_000_000)
        + sync.encode_request(sync.ID_RECV, "/data/local/tmp/d/f.bin")
        + sync.encode_request(sync.ID_QUIT, "")
    )
    phone, pipe = _session(host)
    entry = phone.fs.files["/data/local/tmp/d/f.bin"]
    assert (entry.data, entry.mtime, entry.mode) == (body, 1_700_000_000, 0o100666)
    expected = (
        sync.encode_okay()
        + sync.encode_data(body[:65536])
        + sync.encode_data(body[65536:])
        + sync.encode_done()
    )
    assert bytes(pipe.out) == expected


def test_sync_recv_missing_file_fails_with_strerror() -> None:
    _, pipe = _session(sync.encode_request(sync.ID_RECV, "/sdcard/nope"))
    assert bytes(pipe.out) == sync.encode_fail("open failed: No such file or directory")


def test_sync_list_v1_includes_dot_entries_then_done() -> None:
    _, pipe = _session(sync.encode_request(sync.ID_LIST, "/data/local"))
    out = bytes(pipe.out)
    names = []
    while out[:4] == b"DENT":
        namelen = sync.DENT_V1.unpack(out[:20])[4]
        names.append(out[20 : 20 + namelen].decode())
        out = out[20 + namelen :]
    assert names == [".", "..", "tmp"]
    assert out == sync.encode_list_done(v2=False)


def test_sync_rejects_overlong_path_and_unknown_ids() -> None:
    _, pipe = _session(struct.pack("<II", sync.ID_STAT, 1025))
    assert bytes(pipe.out) == sync.encode_fail("path too long")
    _, pipe = _session(sync.encode_request(sync.sync_id("ABCD"), "/"))
    assert bytes(pipe.out) == sync.encode_fail("unknown command 44434241")
