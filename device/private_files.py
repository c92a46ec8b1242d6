"""Files phoned creates hold private data: each is 0600, each folder 0700, whatever the umask.

The queue (SQLite, with its ``-wal`` and ``-shm``), the daemon's outbox, the artifacts
(hierarchy dumps and screenshots show the message being sent), the state files (the
daemon id) and the plane's report ledger and artifacts are created through these helpers.
A mode is set explicitly (``chmod`` after creating), never left to the umask: a umask of
0o022 or 0o002 would otherwise make them world- or group-readable. SQLite creates a
database's ``-wal`` and ``-shm`` with the database file's own permissions, so a queue file
created here keeps them private too; ``private_file`` also tightens ones left by older runs.

A queue's folder that is setgid and group-writable (the service's ``/var/lib/phoned``, mode
2770, group ``phoned``: ``scripts/install.sh``) shares the queue with that group: its SQLite
files are 0660 there (``queue_mode``), so operators in the group submit to the service's
queue and nobody else reads it. Artifacts stay 0600 in any folder.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
SHARED_FILE_MODE = 0o660  # a queue in a group's shared folder (see the module docstring)


def shared_with_group(folder: str | os.PathLike[str]) -> bool:
    """True when ``folder`` is setgid and group-writable: what it holds is the group's too."""
    try:
        mode = os.stat(folder).st_mode
    except OSError:
        return False
    return bool(mode & stat.S_ISGID and mode & stat.S_IWGRP)


def queue_mode(path: str | os.PathLike[str]) -> int:
    """The mode of a queue file at ``path``: 0660 in a group's shared folder, else 0600."""
    return SHARED_FILE_MODE if shared_with_group(Path(path).parent) else FILE_MODE


def private_dir(path: str | os.PathLike[str], own: bool = True) -> Path:
    """Make ``path`` (and its missing parents, each 0700) exist; with ``own`` (a folder that
    is phoned's alone: ``artifacts/<task id>``) an existing ``path`` is set to 0700 too."""
    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            folder.mkdir(mode=DIR_MODE)
        os.chmod(folder, DIR_MODE)
    if own and not missing:
        os.chmod(path, DIR_MODE)
    return path


def private_file(path: str | os.PathLike[str]) -> Path:
    """Make the file ``path`` exist with mode 0600 (an existing one is set to 0600, and so are
    its SQLite side files); its missing folders are created 0700."""
    path = Path(path)
    private_dir(path.parent, own=False)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    for suffix in SQLITE_SIDE_FILES:
        side = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(side, FILE_MODE)
    return path


def tighten_sqlite(path: str | os.PathLike[str]) -> None:
    """Set a SQLite file that SQLite itself created (the queue, the outbox, the ledger) and
    its side files to 0600 (0660 in a group's shared folder, ``queue_mode``). Called right
    after opening, before any private row is written; SQLite creates later ``-wal``/``-shm``
    files with the database file's mode. A file of another user (or ``:memory:``) is left
    as it is."""
    base = Path(path)
    mode = queue_mode(base)
    for candidate in (base, *(base.with_name(base.name + s) for s in SQLITE_SIDE_FILES)):
        with contextlib.suppress(FileNotFoundError, PermissionError):
            if not candidate.is_symlink() and candidate.stat().st_uid == os.geteuid():
                os.chmod(candidate, mode)


def write_private(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` to ``path`` (mode 0600) through a temporary file renamed over it, so a
    reader never sees a partial file and no moment exists where it is readable by others."""
    path = Path(path)
    private_dir(path.parent, own=False)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path
