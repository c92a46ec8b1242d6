"""Issue #24 point 3: no path under a state folder is followed through a symlink.

``phoned.foundation.private_files`` walks from a root (the state folder, the queue's folder) with
``O_NOFOLLOW`` at every level: a link planted for the root itself, a folder below it or a
file name in it is refused with ``UnsafePath``, and the place it points to is neither
written nor chmod-ed. A root may still be reached through symlinked parents
(``/var -> /private/var``). Another user's folder is refused as a root (unless the group
shares it) and below it; the group's shared queue folder keeps its 0660 queue files.
Each case also runs in a real daemon: ``tests/integration/test_security_links.py``.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from helpers import link_target, mode
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.store.wake import WakeChannel
from phoned.foundation.private_files import (
    UnsafePath,
    private_dir,
    private_writer,
    sqlite_file,
    tighten_sqlite,
    write_private,
)

NOBODY = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to another user")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """The folder a planted link points to: 0755, holding one file; it must stay so."""
    return link_target(tmp_path)


def unchanged(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["keep"]
    assert (outside / "keep").read_text() == "untouched"
    assert (mode(outside), mode(outside / "keep")) == (0o755, 0o644)
    assert mode(outside) == 0o755


def test_a_state_folder_that_is_a_link_is_refused_yet_its_parents_may_be(
    tmp_path: Path, outside: Path
) -> None:
    (tmp_path / "state").symlink_to(outside)
    with pytest.raises(UnsafePath, match=r"state: it is a symlink"):
        write_private(tmp_path / "state" / "daemon-id", "d1\n")
    with pytest.raises(UnsafePath, match="symlink"):
        private_dir(tmp_path / "state" / "artifacts", root=tmp_path / "state")
    with pytest.raises(UnsafePath, match="symlink"):
        sqlite_file(tmp_path / "state" / "outbox.db", create=True)
    unchanged(outside)
    # a link above the root is followed: /var -> /private/var
    real = tmp_path / "private" / "var"
    real.mkdir(parents=True)
    (tmp_path / "var").symlink_to(real)
    made = private_dir(tmp_path / "var" / "phoned" / "artifacts", root=tmp_path / "var" / "phoned")
    assert (real / "phoned" / "artifacts").is_dir() and made.is_dir()
    assert mode(real / "phoned") == 0o700 and mode(real / "phoned" / "artifacts") == 0o700


def test_a_link_planted_for_artifacts_or_a_tasks_folder_is_neither_chmod_ed_nor_written(
    tmp_path: Path, outside: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "artifacts").symlink_to(outside)
    with pytest.raises(UnsafePath, match=r"artifacts: it is a symlink"):
        private_dir(state / "artifacts", root=state)
    with pytest.raises(UnsafePath, match=r"artifacts: it is a symlink"):
        private_dir(state / "artifacts" / "t1", root=state)
    unchanged(outside)
    (state / "artifacts").unlink()
    private_dir(state / "artifacts" / "t0", root=state)
    (state / "artifacts" / "t1").symlink_to(outside)
    with pytest.raises(UnsafePath, match=r"t1: it is a symlink"):
        private_dir(state / "artifacts" / "t1", root=state)
    with pytest.raises(UnsafePath, match=r"t1: it is a symlink"):
        write_private(state / "artifacts" / "t1" / "draft_hierarchy.xml", "<hierarchy/>")
    unchanged(outside)
    (state / "artifacts" / "t2").write_text("a file where a folder belongs")
    with pytest.raises(UnsafePath, match=r"t2: it is not a folder"):
        private_dir(state / "artifacts" / "t2", root=state)


def test_a_link_planted_for_a_file_name_is_refused_and_left_as_it_is(
    tmp_path: Path, outside: Path
) -> None:
    folder = private_dir(tmp_path / "state" / "artifacts" / "t1", root=tmp_path / "state")
    link = folder / "snapshot_hierarchy.xml"
    link.symlink_to(outside / "keep")
    with pytest.raises(UnsafePath, match=r"snapshot_hierarchy.xml: it is a symlink"):
        write_private(link, "<hierarchy text='the message'/>")
    dangling = folder / "snapshot_screenshot.png"
    dangling.symlink_to(outside / "new.png")
    refused = pytest.raises(UnsafePath, match=r"snapshot_screenshot.png: it is a symlink")
    with refused, private_writer(dangling) as out:
        out.write(b"\x89PNG")
    assert link.is_symlink() and dangling.is_symlink()
    assert [p.name for p in folder.iterdir() if not p.is_symlink()] == []  # no temporary left
    unchanged(outside)


def test_sqlite_files_that_are_links_are_refused_before_sqlite_opens_them(
    tmp_path: Path, outside: Path
) -> None:
    state = private_dir(tmp_path / "state")
    (state / "outbox.db").symlink_to(outside / "outbox.db")
    with pytest.raises(UnsafePath, match=r"outbox.db: it is a symlink"):
        sqlite_file(state / "outbox.db", create=True)
    (state / "queue.db").touch()
    (state / "queue.db-wal").symlink_to(outside / "keep")
    with pytest.raises(UnsafePath, match=r"queue.db-wal: it is a symlink"):
        sqlite_file(state / "queue.db")
    tighten_sqlite(state / "queue.db")  # a link among the side files: its target is left alone
    unchanged(outside)


def test_the_outbox_refuses_a_planted_link(tmp_path: Path, outside: Path) -> None:
    from phoned.daemon.store.outbox import Outbox

    state = private_dir(tmp_path / "state")
    (state / "outbox.db").symlink_to(outside / "outbox.db")
    with pytest.raises(UnsafePath):
        Outbox(state / "outbox.db")
    unchanged(outside)


def test_the_shared_queue_keeps_its_modes_and_a_planted_wake_folder_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    import socket

    from phoned.daemon.store.open import open_store

    shared = tmp_path / "s"
    shared.mkdir()
    shared.chmod(0o2770)  # the group's shared queue (/var/lib/phoned): 0660 files, 2770 wake
    queue = shared / "queue.db"
    store = open_store(f"sqlite:///{queue}")
    try:
        store.submit(validate_task({"method": "dnd.get", "conversation_id": "c1"}), 1.0)
    finally:
        store.close()
    listener = WakeChannel(str(queue)).listener()
    assert listener is not None
    listener.close()
    assert mode(shared / "queue.db.wake") == 0o2770
    files = {p.name: oct(mode(p)) for p in shared.iterdir() if p.is_file()}
    assert "queue.db" in files and set(files.values()) == {"0o660"}, files
    assert mode(private_dir(shared / "artifacts", root=shared)) == 0o700  # phoned's alone

    shutil.rmtree(shared / "queue.db.wake")
    (shared / "queue.db.wake").symlink_to(outside)  # it would be set 2770 and bound into
    assert WakeChannel(str(queue)).listener() is None
    unchanged(outside)
    planted = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # a socket the link leads to
    planted.bind(str(outside / "x.sock"))
    planted.setblocking(False)
    try:
        assert WakeChannel(str(queue)).poke() == 0
        with pytest.raises(BlockingIOError):
            planted.recv(8)
    finally:
        planted.close()
        (outside / "x.sock").unlink()
    unchanged(outside)


@root_only
def test_another_users_folder_is_refused_as_a_state_folder_and_below_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    os.chown(state, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=rf"state: it belongs to another user \(uid {NOBODY}\)"):
        private_dir(state / "artifacts", root=state)
    with pytest.raises(UnsafePath, match="another user"):
        write_private(state / "daemon-id", "d1\n")
    assert list(state.iterdir()) == []
    os.chown(state, 0, 0)
    (state / "artifacts").mkdir(mode=0o755)
    os.chown(state / "artifacts", NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=r"artifacts: it belongs to another user"):
        private_dir(state / "artifacts" / "t1", root=state)
    assert mode(state / "artifacts") == 0o755 and list((state / "artifacts").iterdir()) == []
    (state / "daemon-id").write_text("theirs\n")
    os.chown(state / "daemon-id", NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=r"daemon-id: it belongs to another user"):
        write_private(state / "daemon-id", "d1\n")
    assert (state / "daemon-id").read_text() == "theirs\n"


@root_only
def test_a_group_members_wake_folder_in_the_shared_queue_folder_is_accepted(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # the service user walks into it
    shared = tmp_path / "s"
    shared.mkdir()
    shared.chmod(0o2770)
    os.chown(shared, NOBODY, NOBODY)  # the service user's folder, shared with its group
    (shared / "queue.db.wake").mkdir()
    (shared / "queue.db.wake").chmod(0o2770)
    os.chown(shared / "queue.db.wake", NOBODY, NOBODY)  # made by another member's run
    stop = threading.Event()
    listener = WakeChannel(str(shared / "queue.db")).listener()
    assert listener is not None
    try:
        assert WakeChannel(str(shared / "queue.db")).poke() == 1
        assert listener.wait(5, stop)
    finally:
        listener.close()
    assert mode(shared / "queue.db.wake") == 0o2770
    (shared / "artifacts").mkdir()
    (shared / "artifacts").chmod(0o2770)
    os.chown(shared / "artifacts", NOBODY, NOBODY)  # but artifacts must be phoned's own
    with pytest.raises(UnsafePath, match=r"artifacts: it belongs to another user"):
        private_dir(shared / "artifacts", root=shared)
