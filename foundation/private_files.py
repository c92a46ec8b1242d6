"""Files phoned creates hold private data: each is 0600, each folder 0700, whatever the umask,
and none of them is reached through a symlink.

The queue (SQLite, with its ``-wal`` and ``-shm``), the daemon's outbox, the artifacts
(hierarchy dumps and screenshots show the message being sent), the state files (the
daemon id) and the plane's report ledger and artifacts are created through these helpers.
A mode is set explicitly (``fchmod`` after creating), never left to the umask: a umask of
0o022 or 0o002 would otherwise make them world- or group-readable. SQLite creates a
database's ``-wal`` and ``-shm`` with the database file's own permissions, so a queue file
created here keeps them private too; ``tighten_sqlite`` also tightens ones left by older runs.

A queue's folder that is setgid and group-writable (the service's ``/var/lib/phoned``, mode
2770, group ``phoned``: ``scripts/install.sh``) shares the queue with that group: its SQLite
files are 0660 there (``queue_mode``), so operators in the group submit to the service's
queue and nobody else reads it. Artifacts stay 0600 in any folder.

**No symlink is followed below a root** (issue #24: a planted ``<state>/artifacts`` link
made a daemon, root's too, chmod and write screenshots wherever it pointed). A root is the
folder a tree of phoned's starts at: the state folder, the queue's folder, the plane's
artifacts folder. It may be reached through symlinked parents (``/var -> /private/var``) but
may not be a symlink itself, and it is this user's, root's, or a group's shared folder
(above). Every folder and file below it is created and opened relative to the descriptor
of the folder above it (``mkdir``/``open`` with ``dir_fd``, ``O_NOFOLLOW`` at each level),
modes are set with ``fchmod`` on the descriptor, never by path (SQLite's own files: a
no-follow ``fchmodat`` relative to the folder, ``tighten_sqlite``), and a folder there must be
this user's (the queue's wake folder may be a group member's, ``group``). A symlink, a file
where a folder belongs (or the reverse) or another user's entry is refused with
``UnsafePath`` before anything is created, written or chmod-ed through it::

    OSError
    └── UnsafePath    a symlink, a wrong kind of file, or another user's entry where phoned
                      keeps private files; nothing was created, written or chmod-ed there

It is an ``OSError`` so every caller that handles a failed write handles it; ``phoned run``
prints it as ``phoned: refusing PATH: WHY`` and exits 2, ``open_store`` raises it as a
``QueueUrlError`` naming the queue.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o600
DIR_MODE = 0o700
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
SHARED_FILE_MODE = 0o660  # a queue in a group's shared folder (see the module docstring)

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC  # one level, no link
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
_REFUSED_HINT = "phoned keeps private files only in real folders of its own user"


class UnsafePath(OSError):
    """``path`` is a symlink, the wrong kind of file or another user's: refused untouched."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"refusing {path}: {why} ({_REFUSED_HINT})")
        self.path = path


def _shared(mode: int) -> bool:
    return bool(mode & stat.S_ISGID and mode & stat.S_IWGRP)


def shared_with_group(folder: str | os.PathLike[str]) -> bool:
    """True when ``folder`` is setgid and group-writable: what it holds is the group's too."""
    try:
        return _shared(os.stat(folder).st_mode)
    except OSError:
        return False


def queue_mode(path: str | os.PathLike[str]) -> int:
    """The mode of a queue file at ``path``: 0660 in a group's shared folder, else 0600."""
    return SHARED_FILE_MODE if shared_with_group(Path(path).parent) else FILE_MODE


def _refusal(dir_fd: int | None, name: str | Path, shown: Path, folder: bool) -> UnsafePath | None:
    """Why ``name`` could not be opened as a folder (or a file) without following a link;
    None when it is gone (the caller's own error then says so)."""
    try:
        found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return _wrong_kind(found, shown, folder)


def _wrong_kind(found: os.stat_result, shown: Path, folder: bool) -> UnsafePath:
    """The refusal of ``found`` where a folder (or a regular file) was wanted; a symlink is
    named as one, since following it is what these checks exist to prevent."""
    if stat.S_ISLNK(found.st_mode):
        return UnsafePath(shown, "it is a symlink")
    return UnsafePath(shown, "it is not a folder" if folder else "it is not a regular file")


def _open_dir(dir_fd: int | None, name: str | Path, shown: Path) -> int:
    """The descriptor of folder ``name`` (relative to ``dir_fd``), its last component never
    followed; ``UnsafePath`` for a symlink or a file."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ENOTDIR for a link or a file (ELOOP on some systems)
        refused = _refusal(dir_fd, name, shown, folder=True)
        if refused is None:
            raise
        raise refused from exc


def _child(dir_fd: int, name: str, shown: Path) -> tuple[int, bool]:
    """Open folder ``name`` in ``dir_fd``, made 0700 when missing; (fd, made here)."""
    if name in ("", ".", "..") or "/" in name:
        raise ValueError(f"not one folder name: {name!r} (in {shown})")
    with contextlib.suppress(FileNotFoundError):
        return _open_dir(dir_fd, name, shown), False
    made = True
    try:
        os.mkdir(name, DIR_MODE, dir_fd=dir_fd)
    except FileExistsError:  # another process made it meanwhile (or planted something)
        made = False
    return _open_dir(dir_fd, name, shown), made


def _open_root(root: Path) -> tuple[int, bool]:
    """The root's descriptor, the root made (with its missing parents, each 0700) when
    missing; (fd, made here). Parents above it are followed, the root itself is not."""
    with contextlib.suppress(FileNotFoundError):
        return _open_dir(None, root, root), False
    missing = [root]
    while not missing[-1].parent.exists() and missing[-1].parent != missing[-1]:
        missing.append(missing[-1].parent)
    fd = os.open(missing[-1].parent, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    made = False
    for folder in reversed(missing):
        try:
            child, made = _child(fd, folder.name, folder)
        finally:
            os.close(fd)
        fd = child
        if made:
            os.fchmod(fd, DIR_MODE)
    return fd, made


def _settle(fd: int, shown: Path, made: bool, mode: int | None, root: bool, group: bool) -> None:
    """Check the folder just opened is one phoned may use and, with ``mode``, set it."""
    if made:
        os.fchmod(fd, DIR_MODE if mode is None else mode)
        return
    found = os.fstat(fd)
    mine = found.st_uid == os.geteuid()
    trusted = mine or (root and found.st_uid == 0) or ((root or group) and _shared(found.st_mode))
    if not trusted:
        raise UnsafePath(shown, f"it belongs to another user (uid {found.st_uid})")
    if mode is not None and mine:
        os.fchmod(fd, mode)
    elif mode is not None and not (group and _shared(found.st_mode)):
        raise UnsafePath(shown, f"its mode is phoned's to set, but it is uid {found.st_uid}'s")


@contextlib.contextmanager
def _opened_dir(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    own: bool = False,
    mode: int = DIR_MODE,
    group: bool = False,
) -> Iterator[int]:
    """The descriptor of folder ``path``, walked from ``root`` (default: ``path`` itself)
    as the module docstring says; ``UnsafePath`` for a link, a file or another user's
    folder on the way. Missing folders are made 0700 (``path`` itself: ``mode``); with ``own`` an existing ``path`` of this user's is set to ``mode``; with
    ``group`` another user's folder that the group shares (setgid, group-writable) is
    accepted and left as it is."""
    path = Path(path)
    top = path if root is None else Path(root)
    names = path.relative_to(top).parts
    fd, made = _open_root(top)
    try:
        _settle(fd, top, made, mode if not names and (own or made) else None, True, group)
        shown = top
        for index, name in enumerate(names):
            shown = shown / name
            child, made = _child(fd, name, shown)
            os.close(fd)
            fd = child
            last = index == len(names) - 1
            wanted = mode if last and (own or made) else None
            _settle(fd, shown, made, wanted, False, group)
        yield fd
    finally:
        os.close(fd)


def private_dir(
    path: str | os.PathLike[str],
    own: bool = True,
    *,
    root: str | os.PathLike[str] | None = None,
    mode: int = DIR_MODE,
    group: bool = False,
) -> Path:
    """Make ``path`` (and its missing parents, each 0700) exist, walked from ``root`` without
    following a link (``_opened_dir``), ``path`` made with ``mode``; with ``own`` (a folder
    that is phoned's alone: ``artifacts/<task id>``) an existing ``path`` is set to ``mode``
    too; ``group``: another user's folder the group shares is accepted (the wake folder)."""
    with _opened_dir(path, root=root, own=own, mode=mode, group=group):
        return Path(path)


def _existing_file(dir_fd: int, name: str, shown: Path, foreign_ok: bool) -> os.stat_result | None:
    """What ``name`` in ``dir_fd`` is (None: nothing); ``UnsafePath`` unless a regular file
    (with ``foreign_ok`` false: of this user's)."""
    try:
        found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(found.st_mode):
        raise _wrong_kind(found, shown, folder=False)
    if not foreign_ok and found.st_uid != os.geteuid():
        raise UnsafePath(shown, f"it belongs to another user (uid {found.st_uid})")
    return found


@contextlib.contextmanager
def private_writer(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content to (mode 0600); on a clean exit it is
    renamed over ``path``, so a reader never sees a partial file, else removed.

    Its folder is walked from ``root`` (default: the folder itself) as ``_opened_dir`` does;
    the temporary file is created ``O_EXCL|O_NOFOLLOW`` there and renamed within that
    folder's descriptor. An existing ``path`` that is a link, not a regular file or another
    user's is ``UnsafePath``, before anything is written.
    """
    path = Path(path)
    with _opened_dir(path.parent, root=root) as dir_fd:
        _existing_file(dir_fd, path.name, path, foreign_ok=False)
        tmp = f".{path.name}.{uuid.uuid4().hex}.tmp"
        out = os.fdopen(_made_file(dir_fd, tmp, FILE_MODE), "wb")
        try:
            with out:
                yield out
            os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise


def write_private(
    path: str | os.PathLike[str], data: bytes | str, *, root: str | os.PathLike[str] | None = None
) -> Path:
    """Write ``data`` to ``path`` (mode 0600) through ``private_writer``: atomic, no link
    followed, no moment where it is readable by others."""
    with private_writer(path, root=root) as out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


def sqlite_file(
    path: str | os.PathLike[str],
    *,
    create: bool = False,
    root: str | os.PathLike[str] | None = None,
) -> Path:
    """Make SQLite file ``path`` safe for SQLite to open by name: its folder walked from
    ``root`` (made 0700 when missing), and the file and its side files, where they exist,
    regular files, never links (``UnsafePath``); another user's is accepted (an operator's
    queue in the group's folder). With ``create`` a missing file is made here, 0600 (0660
    in a group's shared folder), so SQLite never creates it through a planted link."""
    path = Path(path)
    with _opened_dir(path.parent, root=root) as dir_fd:
        for suffix in ("", *SQLITE_SIDE_FILES):
            name = path.name + suffix
            _existing_file(dir_fd, name, path.with_name(name), foreign_ok=True)
        if create:
            mode = SHARED_FILE_MODE if _shared(os.fstat(dir_fd).st_mode) else FILE_MODE
            with contextlib.suppress(FileExistsError):
                os.close(_made_file(dir_fd, path.name, mode))
    return path


def _made_file(dir_fd: int, name: str, mode: int) -> int:
    """A new file ``name`` in ``dir_fd`` (``O_EXCL|O_NOFOLLOW``), set to ``mode``; its fd."""
    fd = os.open(name, _NEW_FILE, mode, dir_fd=dir_fd)
    try:
        os.fchmod(fd, mode)
    except OSError:
        os.close(fd)
        raise
    return fd


def tighten_sqlite(path: str | os.PathLike[str]) -> None:
    """Set a SQLite file that SQLite itself created (the queue, the outbox, the ledger) and
    its side files to 0600 (0660 in a group's shared folder, ``queue_mode``). Called right
    after opening, before any private row is written; SQLite creates later ``-wal``/``-shm``
    files with the database file's mode. A link, a file of another user (or ``:memory:``)
    is left as it is.

    Each file is set relative to its folder's descriptor without following a link
    (``fchmodat`` with ``AT_SYMLINK_NOFOLLOW``), never opened: closing a descriptor of a
    SQLite file drops every POSIX lock this process holds on it, the other connections'
    too. A C library without that flag (glibc before 2.32) gets a ``chmod`` relative to the
    folder right after ``lstat`` said it is this user's regular file.
    """
    base = Path(path)
    try:
        dir_fd = os.open(base.parent, _DIR_FLAGS)
    except OSError:  # a link or gone: refused (sqlite_file) where the file is opened
        return
    try:
        mode = SHARED_FILE_MODE if _shared(os.fstat(dir_fd).st_mode) else FILE_MODE
        for suffix in ("", *SQLITE_SIDE_FILES):
            _tighten(dir_fd, base.name + suffix, mode)
    finally:
        os.close(dir_fd)


def _tighten(dir_fd: int, name: str, mode: int) -> None:
    try:
        found = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return
    mine = stat.S_ISREG(found.st_mode) and found.st_uid == os.geteuid()
    if not mine or stat.S_IMODE(found.st_mode) == mode:
        return
    with contextlib.suppress(FileNotFoundError, PermissionError):
        try:
            os.chmod(name, mode, dir_fd=dir_fd, follow_symlinks=False)
        except (NotImplementedError, ValueError):  # a link by now, or no AT_SYMLINK_NOFOLLOW
            if stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                os.chmod(name, mode, dir_fd=dir_fd)
