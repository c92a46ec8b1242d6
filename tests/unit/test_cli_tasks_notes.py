"""``phoned tasks`` says in NOTE what a paused task waits for, and ``phoned show --html``
writes only a new file (or, with ``--force``, a replaced one), never through a symbolic
link, saying where on stderr; through CliRunner against a real SQLite queue file."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest
from helpers import phoned
from phoned.daemon.lifecycle.records import Preview, Ticket
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore


def submit(queue: str, method: str, *pairs: str) -> str:
    args = [a for pair in pairs for a in ("--param", pair)]
    result = phoned(queue, "submit", "--method", method, *args, "--conversation", "c1")
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def started(store: SqliteStore, task_id: str) -> Ticket:
    claimed = store.claim("daemon-x/w0", None, time.time(), task_id=task_id)
    assert claimed is not None
    return store.start(claimed.ticket, time.time()).ticket


def notes(queue: str) -> dict[str, str]:
    """Each task's NOTE cell, by id (the cells of a row are two spaces apart)."""
    lines = phoned(queue, "tasks").stdout.splitlines()
    at = lines[0].index("NOTE")
    return {line.split()[0]: line[at:].strip() for line in lines[1:]}


def test_paused_tasks_say_what_they_wait_for(queue: str) -> None:
    approval = submit(queue, "sms.send", "to=+15551234567", "body=hi")
    permission = submit(queue, "permission.request", "package=com.example.app",
                        "permission=android.permission.POST_NOTIFICATIONS")  # fmt: skip
    unlock = submit(queue, "dnd.get")
    user = submit(queue, "dnd.get")
    store = SqliteStore(queue[len("sqlite://") :])
    try:
        preview = Preview(approval, "c1", "sms.send", "+15551234567", {"body": "hi"}, "sha256:0")
        store.request_approval(started(store, approval), preview, time.time())
        store.pause(started(store, permission), TaskState.PERMISSION, time.time(),
                    waiting_for="permission:com.example.app:android.permission.POST_NOTIFICATIONS")  # fmt: skip
        store.pause(started(store, unlock), TaskState.WAITING, time.time(), waiting_for="unlock")
    finally:
        store.close()
    assert phoned(queue, "pause", user, "--conversation", "c1").exit_code == 0
    found = notes(queue)
    digest = preview.digest.partition(":")[2][:8]
    assert found[approval] == (
        f"approval: phoned approve {approval[:8]} --revision 1 --digest sha256:{digest}…"
    )
    assert (
        found[permission] == "permission: android.permission.POST_NOTIFICATIONS (com.example.app)"
    )
    assert found[unlock] == "waiting: unlock"
    assert found[user] == f"waiting: user (phoned resume {user[:8]})"


def test_a_wait_note_is_escaped_for_the_terminal(queue: str) -> None:
    task_id = submit(queue, "dnd.get")
    store = SqliteStore(queue[len("sqlite://") :])
    try:
        store.pause(started(store, task_id), TaskState.WAITING, time.time(),
                    waiting_for="unlock\x1b]0;owned\x07")  # fmt: skip
    finally:
        store.close()
    listed = phoned(queue, "tasks").stdout
    assert "\x1b" not in listed and "waiting: unlock\\x1b]0;owned\\x07" in listed


def test_show_html_says_where_it_wrote_and_keeps_an_existing_file(
    queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task_id = submit(queue, "dnd.get")
    monkeypatch.chdir(tmp_path)
    first = phoned(queue, "show", task_id, "--html", "report.html")
    assert first.exit_code == 0, first.output
    assert first.stdout == ""
    assert first.stderr.strip() == f"phoned: report written to {tmp_path / 'report.html'}"
    page = tmp_path / "report.html"
    assert stat.S_IMODE(page.stat().st_mode) == 0o600 and task_id in page.read_text()
    page.write_text("mine")
    again = phoned(queue, "show", task_id, "--html", "report.html")
    assert again.exit_code == 2 and page.read_text() == "mine"
    assert again.stderr.strip() == f"phoned: {page} exists; --force replaces it"
    page.chmod(0o644)
    forced = phoned(queue, "show", task_id, "--html", "report.html", "--force")
    assert forced.exit_code == 0, forced.output
    assert task_id in page.read_text() and stat.S_IMODE(page.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["queue.db", "report.html"]


@pytest.mark.parametrize("force", [False, True])
def test_show_html_never_writes_through_a_symbolic_link(
    queue: str, tmp_path: Path, force: bool
) -> None:
    task_id = submit(queue, "dnd.get")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep")
    link = tmp_path / "report.html"
    link.symlink_to(elsewhere)
    dangling = tmp_path / "dangling.html"
    dangling.symlink_to(tmp_path / "not-there.txt")
    for target in (link, dangling):
        result = phoned(queue, "show", task_id, "--html", str(target), *(["--force"] * force))
        assert result.exit_code == 2, result.output
        assert "is a symbolic link" in result.stderr and target.is_symlink()
    assert elsewhere.read_text() == "keep" and not (tmp_path / "not-there.txt").exists()
