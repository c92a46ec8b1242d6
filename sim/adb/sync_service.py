"""The ``sync:`` service (adb push/pull/stat/ls) over the phone's in-memory file system.

Wire format and behaviour follow AOSP ``packages/modules/adb/file_sync_protocol.h`` (ids,
packed little-endian structs, ``SYNC_DATA_MAX`` = 64 KiB) and ``daemon/file_sync_service.cpp``
(read at LineageOS/android_packages_modules_adb): ``STAT`` answers all zeros for a missing
path; ``STA2``/``LST2`` answer with ``error`` = errno; ``LIST`` sends one ``DENT`` per
``readdir`` entry (``.`` and ``..`` included) then a ``DONE`` record of the same size;
``SEND`` creates missing parent directories (``fixed_push_mkdir``), copies the user
permission bits to group and other, and takes the mtime from ``DONE``; ``RECV`` sends
``DATA`` chunks then ``DONE``; errors are ``FAIL`` + message (``"open failed: No such file
or directory"``). A failed ``SEND`` keeps draining ``DATA`` until ``DONE``, then the service
ends.
"""

from __future__ import annotations

import errno
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoned.sim.phone_state import FileSystem

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState


def sync_id(name: str) -> int:
    """``MKID(a,b,c,d)``: the four ASCII letters read as a little-endian u32."""
    return int.from_bytes(name.encode("ascii"), "little")


ID_STAT = sync_id("STAT")
ID_STA2 = sync_id("STA2")
ID_LST2 = sync_id("LST2")
ID_LIST = sync_id("LIST")
ID_LIS2 = sync_id("LIS2")
ID_DENT = sync_id("DENT")
ID_DNT2 = sync_id("DNT2")
ID_SEND = sync_id("SEND")
ID_SND2 = sync_id("SND2")
ID_RECV = sync_id("RECV")
ID_RCV2 = sync_id("RCV2")
ID_DONE = sync_id("DONE")
ID_DATA = sync_id("DATA")
ID_OKAY = sync_id("OKAY")
ID_FAIL = sync_id("FAIL")
ID_QUIT = sync_id("QUIT")

SYNC_DATA_MAX = 64 * 1024
MAX_PATH_LENGTH = 1024
FLAG_DRY_RUN = 0x80000000

REQUEST = struct.Struct("<II")  # SyncRequest {id, path_length}; also sync_data/sync_status
STAT_V1 = struct.Struct("<IIII")  # id, mode, size, mtime
STAT_V2 = struct.Struct(
    "<IIQQIIIIQqqq"
)  # id, error, dev, ino, mode, nlink, uid, gid, size, a/m/ctime
DENT_V1 = struct.Struct("<IIIII")  # id, mode, size, mtime, namelen
DENT_V2 = struct.Struct("<IIQQIIIIQqqqI")  # stat_v2 fields + namelen
SEND_V2 = struct.Struct("<III")  # id, mode, flags
RECV_V2 = struct.Struct("<II")  # id, flags

S_IFDIR = 0o040000
S_IFREG = 0o100000
S_IFLNK = 0o120000
SHELL_UID = 2000  # AID_SHELL: adbd runs as shell on user builds
DEVICE_ID = 0xFD00


class SyncEnded(Exception):
    """The sync session is over (QUIT, an error already reported, or the stream closed)."""


@dataclass(frozen=True)
class Stat:
    """What ``lstat`` says about one path on the simulated phone."""

    mode: int
    size: int
    mtime: int
    ino: int
    nlink: int
    uid: int
    gid: int


# --- pure encoders / decoders ---------------------------------------------------------------


def encode_request(request_id: int, path: str) -> bytes:
    """A host request: ``[id][path_length][path]`` (what adb and adbutils send)."""
    raw = path.encode("utf-8")
    return REQUEST.pack(request_id, len(raw)) + raw


def decode_request_header(raw: bytes) -> tuple[int, int]:
    """``(id, path_length)`` of a request header; raises ``SyncEnded`` for an overlong path."""
    request_id, length = REQUEST.unpack(raw)
    if length > MAX_PATH_LENGTH:
        raise SyncEnded("path too long")
    return request_id, length


def parse_send_v1_spec(spec: str) -> tuple[str, int]:
    """Split the ``SEND`` v1 argument ``"/path,0755"`` at the last comma; mode as ``strtoul(,0)``.

    Raises ``ValueError`` with adbd's message (``missing , in ID_SEND_V1`` or ``bad mode``).
    """
    path, comma, mode_text = spec.rpartition(",")
    if not comma:
        raise ValueError("missing , in ID_SEND_V1")
    try:
        mode = _strtoul(mode_text)
    except ValueError:
        raise ValueError("bad mode") from None
    return path, mode


def _strtoul(text: str) -> int:
    """C ``strtoul(text, NULL, 0)``: 0x.. hex, 0.. octal, else decimal."""
    text = text.strip()
    if text.lower().startswith("0x"):
        return int(text[2:], 16)
    if text.startswith("0") and len(text) > 1:
        return int(text[1:], 8)
    return int(text or "0", 10)


def pushed_file_mode(mode: int) -> int:
    """The mode adbd gives a pushed file: permission bits, user bits copied to group/other."""
    mode &= 0o777
    mode |= (mode >> 3) & 0o070
    mode |= (mode >> 3) & 0o007
    return S_IFREG | mode


def encode_stat_v1(st: Stat | None) -> bytes:
    """``STAT`` reply; a missing path is all zeros (adbd ignores the lstat error)."""
    if st is None:
        return STAT_V1.pack(ID_STAT, 0, 0, 0)
    return STAT_V1.pack(ID_STAT, st.mode, st.size & 0xFFFFFFFF, st.mtime)


def encode_stat_v2(reply_id: int, st: Stat | None, error: int = errno.ENOENT) -> bytes:
    """``STA2``/``LST2`` reply carrying the request id; a missing path sets only ``error``."""
    if st is None:
        return STAT_V2.pack(reply_id, error, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    return STAT_V2.pack(reply_id, 0, *_v2_fields(st))


def _v2_fields(st: Stat) -> tuple[int, ...]:
    """What ``STA2`` and ``DNT2`` both carry after their id and error: dev, ino, mode,
    nlink, uid, gid, size, atime, mtime, ctime (all three times are ``st.mtime``)."""
    return (DEVICE_ID, st.ino, st.mode, st.nlink, st.uid, st.gid, st.size, *[st.mtime] * 3)


def encode_dent(name: str, st: Stat, *, v2: bool) -> bytes:
    """One directory entry record followed by its name."""
    raw = name.encode("utf-8")
    if v2:
        head = DENT_V2.pack(ID_DNT2, 0, *_v2_fields(st), len(raw))
    else:
        head = DENT_V1.pack(ID_DENT, st.mode, st.size & 0xFFFFFFFF, st.mtime, len(raw))
    return head + raw


def encode_list_done(*, v2: bool) -> bytes:
    """The end of a listing: a zeroed dent record whose id is ``DONE``."""
    struct_ = DENT_V2 if v2 else DENT_V1
    return ID_DONE.to_bytes(4, "little") + bytes(struct_.size - 4)


def encode_fail(reason: str) -> bytes:
    raw = reason.encode("utf-8")
    return REQUEST.pack(ID_FAIL, len(raw)) + raw


def encode_okay() -> bytes:
    return REQUEST.pack(ID_OKAY, 0)


def encode_data(data: bytes) -> bytes:
    return REQUEST.pack(ID_DATA, len(data)) + data


def encode_done(value: int = 0) -> bytes:
    return REQUEST.pack(ID_DONE, value)


def id_name(value: int) -> str:
    """The four letters of a sync id, for logs."""
    return value.to_bytes(4, "little").decode("ascii", "replace")


# --- file system view -----------------------------------------------------------------------


def lstat(fs: FileSystem, path: str) -> Stat | None:
    """Stat one path of the in-memory file system; None when it does not exist."""
    ino = zlib.crc32(path.encode("utf-8")) or 1
    if path in fs.dirs:
        return Stat(S_IFDIR | 0o755, 4096, 0, ino, 2, 0, 0)
    entry = fs.files.get(path)
    if entry is None:
        return None
    return Stat(entry.mode, len(entry.data), entry.mtime, ino, 1, SHELL_UID, SHELL_UID)


def strerror(code: int) -> str:
    return os.strerror(code)


# --- the service ----------------------------------------------------------------------------

Reader = Callable[[int], bytes]  # read exactly n bytes; raise EOFError when the stream closes
Writer = Callable[[bytes], None]


class SyncSession:
    """Serve sync requests read with ``read`` until QUIT, an error or end of stream."""

    def __init__(self, phone: PhoneState, read: Reader, write: Writer) -> None:
        self.phone = phone
        self.read = read
        self.write = write
        self._handlers: dict[int, Callable[[int, str], None]] = {
            ID_STAT: self._stat_v1,
            ID_STA2: self._stat_v2,
            ID_LST2: self._stat_v2,
            ID_LIST: self._list,
            ID_LIS2: self._list,
            ID_SEND: self._send_v1,
            ID_SND2: self._send_v2,
            ID_RECV: self._recv,
            ID_RCV2: self._recv_v2,
        }

    def serve(self) -> None:
        """Handle requests until the session ends; never raises for protocol problems."""
        try:
            while True:
                self._one_request()
        except (SyncEnded, EOFError):
            return

    def _one_request(self) -> None:
        try:
            request_id, length = decode_request_header(self.read(REQUEST.size))
        except SyncEnded as exc:
            self.write(encode_fail(str(exc)))
            raise
        path = self.read(length).decode("utf-8", "surrogateescape")
        if request_id == ID_QUIT:
            raise SyncEnded("quit")
        handler = self._handlers.get(request_id)
        if handler is None:
            self.write(encode_fail(f"unknown command {request_id:08x}"))
            raise SyncEnded("unknown command")
        handler(request_id, path)

    def _stat_v1(self, _request_id: int, path: str) -> None:
        with self.phone.lock:
            st = lstat(self.phone.fs, _clean(path))
        self.write(encode_stat_v1(st))

    def _stat_v2(self, request_id: int, path: str) -> None:
        with self.phone.lock:
            st = lstat(self.phone.fs, _clean(path))
        self.write(encode_stat_v2(request_id, st))

    def _list(self, request_id: int, path: str) -> None:
        v2 = request_id == ID_LIS2
        out = bytearray()
        with self.phone.lock:
            fs = self.phone.fs
            clean = _clean(path)
            if fs.is_dir(clean):
                parent = clean.rsplit("/", 1)[0] or "/"
                entries = [(".", clean), ("..", parent)]
                entries += [(n, _join(clean, n)) for n in fs.listdir(clean)]
                for name, full in entries:
                    st = lstat(fs, full)
                    if st is not None:
                        out += encode_dent(name, st, v2=v2)
        out += encode_list_done(v2=v2)
        self.write(bytes(out))

    def _send_v1(self, _request_id: int, spec: str) -> None:
        try:
            path, mode = parse_send_v1_spec(spec)
        except ValueError as exc:
            self.write(encode_fail(str(exc)))
            raise SyncEnded(str(exc)) from None
        self._receive_file(path, mode, dry_run=False)

    def _send_v2(self, _request_id: int, path: str) -> None:
        _, mode, flags = SEND_V2.unpack(self.read(SEND_V2.size))
        dry_run = bool(flags & FLAG_DRY_RUN)
        flags &= ~FLAG_DRY_RUN
        if flags:
            self.write(encode_fail(f"unknown flags: {flags}"))
            raise SyncEnded("unknown flags")
        self._receive_file(path, mode, dry_run=dry_run)

    def _receive_file(self, path: str, mode: int, *, dry_run: bool) -> None:
        self.phone.log.record("service", ["sync", "send", path])
        if mode & 0o170000 == S_IFLNK:
            self.write(encode_fail("symlink failed: Operation not permitted"))
            self._drain_data()
            raise SyncEnded("symlink")
        data, mtime = self._read_data_chunks()
        if dry_run:
            self.write(encode_okay())
            return
        error = self._store(_clean(path), data, pushed_file_mode(mode), mtime)
        if error:
            self.write(encode_fail(error))
            raise SyncEnded(error)
        self.write(encode_okay())

    def _read_data_chunks(self) -> tuple[bytes, int]:
        """Collect ``DATA`` chunks until ``DONE``; return the data and DONE's mtime."""
        parts: list[bytes] = []
        while True:
            chunk_id, size = REQUEST.unpack(self.read(REQUEST.size))
            if chunk_id == ID_DONE:
                return b"".join(parts), size
            if chunk_id != ID_DATA:
                self.write(encode_fail("invalid data message"))
                raise SyncEnded("invalid data message")
            parts.append(self.read(size))

    def _drain_data(self) -> None:
        """After a failure keep reading DATA until DONE, as adbd does for old hosts."""
        while True:
            chunk_id, size = REQUEST.unpack(self.read(REQUEST.size))
            if chunk_id != ID_DATA or size > SYNC_DATA_MAX:
                return
            self.read(size)

    def _store(self, path: str, data: bytes, mode: int, mtime: int) -> str | None:
        """Write the pushed file; return adbd's FAIL message or None."""
        fs = self.phone.fs
        with self.phone.lock:
            if fs.is_dir(path):
                return f"couldn't create file: {strerror(errno.EISDIR)}"
            parent = path.rsplit("/", 1)[0] or "/"
            if parent in fs.files:
                return f"secure_mkdirs() failed: {strerror(errno.ENOTDIR)}"
            fs.mkdir(parent, parents=True)
            fs.write(path, data, mode=mode)
            fs.files[path].mtime = mtime
        return None

    def _recv(self, _request_id: int, path: str) -> None:
        self.phone.log.record("service", ["sync", "recv", path])
        clean = _clean(path)
        with self.phone.lock:
            fs = self.phone.fs
            if fs.is_dir(clean):
                # open(O_RDONLY) of a directory succeeds; the first read fails.
                error: str | None = f"read failed: {strerror(errno.EISDIR)}"
                data = b""
            elif not fs.exists(clean):
                error, data = f"open failed: {strerror(errno.ENOENT)}", b""
            else:
                error, data = None, fs.read(clean)
        if error:
            self.write(encode_fail(error))
            raise SyncEnded(error)
        out = bytearray()
        for i in range(0, len(data), SYNC_DATA_MAX):
            out += encode_data(data[i : i + SYNC_DATA_MAX])
        out += encode_done(0)
        self.write(bytes(out))

    def _recv_v2(self, request_id: int, path: str) -> None:
        _, flags = RECV_V2.unpack(self.read(RECV_V2.size))
        if flags:
            self.write(encode_fail(f"unknown flags: {flags}"))
            raise SyncEnded("unknown flags")
        self._recv(request_id, path)


def _clean(path: str) -> str:
    """Collapse ``//``, ``.`` and ``..`` the way the kernel resolves an absolute path."""
    return FileSystem.normalize(path)


def _join(directory: str, name: str) -> str:
    return directory.rstrip("/") + "/" + name
