"""TASK in every verb that takes one: the full id, a unique prefix of at least 6 hex
characters, or ``last`` (``phoned.daemon.verbs.common.resolve_task``), through click's CliRunner
against a real SQLite queue file."""

from __future__ import annotations

import json
import time
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import Result
from helpers import phoned
from phoned.daemon.cli import main
from phoned.daemon.lifecycle.records import Preview
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.verbs import common

TASK_VERBS = {"show", "rerun", "approve", "deny", "amend", "cancel", "pause", "resume",
              "revisions", "wait"}  # fmt: skip


def submit(queue: str, conversation: str = "c1", method: str = "dnd.get", *pairs: str) -> str:
    args = [a for pair in pairs for a in ("--param", pair)]
    result = phoned(queue, "submit", "--method", method, *args, "--conversation", conversation)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def record(result: Result) -> dict[str, Any]:
    assert result.exit_code in (0, 3), result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def one_line_error(result: Result, code: int) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("phoned: "), result.stderr
    return lines[0]


def with_ids(monkeypatch: pytest.MonkeyPatch, *hex_ids: str) -> None:
    """The next tasks submitted get these ids (the store draws them from ``uuid4``)."""
    ids = iter(uuid.UUID(h) for h in hex_ids)
    monkeypatch.setattr("phoned.daemon.store.rows.uuid", SimpleNamespace(uuid4=lambda: next(ids)))


def to_approval(queue: str, task_id: str) -> Preview:
    store = SqliteStore(queue[len("sqlite://") :])
    try:
        claimed = store.claim("daemon-x/w0", None, time.time(), task_id=task_id)
        assert claimed is not None
        task = store.start(claimed.ticket, time.time())
        preview = Preview(task_id, "c1", "sms.send", "+15551234567", {"body": "hi"}, "sha256:0")
        store.request_approval(task.ticket, preview, time.time())
    finally:
        store.close()
    return preview


def test_every_verb_that_takes_task_resolves_references() -> None:
    takes_task = {
        name
        for name, command in main.commands.items()
        if any(p.name == "task_id" for p in command.params)
    }
    assert takes_task == TASK_VERBS
    for name in sorted(takes_task):
        assert getattr(main.commands[name].callback, "resolves_task_reference", False), name


def test_a_unique_prefix_works_in_every_verb(queue: str) -> None:
    full = submit(queue, "c1", "dnd.set", "mode=priority")
    submit(queue, "c1")  # another task, newer
    short = full[:8]
    assert record(phoned(queue, "show", short, "--json"))["task"]["id"] == full
    assert record(phoned(queue, "show", full.upper(), "--json"))["task"]["id"] == full
    assert [r["revision"] for r in record(phoned(queue, "revisions", short, "--json"))] == [1]
    assert record(phoned(queue, "wait", short, "--timeout", "0", "--json"))["id"] == full
    amended = record(phoned(queue, "amend", short, "--param", "mode=off", "--conversation", "c1",
                            "--json"))  # fmt: skip
    assert (amended["id"], amended["revision"]) == (full, 2)
    paused = record(phoned(queue, "pause", short, "--conversation", "c1", "--json"))
    assert (paused["id"], paused["state"]) == (full, "waiting")
    assert record(phoned(queue, "resume", short, "--conversation", "c1", "--json"))["id"] == full
    cancelled = record(phoned(queue, "cancel", short, "--conversation", "c1", "--json"))
    assert (cancelled["id"], cancelled["state"]) == (full, "stopped")
    assert record(phoned(queue, "rerun", short.upper(), "--json"))["rerun_of"] == full


def test_approve_and_deny_take_a_prefix(queue: str) -> None:
    first = submit(queue, "c1", "sms.send", "to=+15551234567", "body=hi")
    second = submit(queue, "c1", "sms.send", "to=+15551234567", "body=hi")
    for task_id in (first, second):
        preview = to_approval(queue, task_id)
    decision = ("--revision", "1", "--digest", preview.digest, "--conversation", "c1", "--json")
    approved = record(phoned(queue, "approve", first[:6], *decision))
    assert (approved["id"], approved["state"]) == (first, "queued")
    denied = record(phoned(queue, "deny", second[:6], *decision))
    assert (denied["id"], denied["state"]) == (second, "stopped")


def test_last_is_the_newest_task_or_the_newest_of_the_conversation(queue: str) -> None:
    of_c1 = submit(queue, "c1")
    newest = submit(queue, "c2")
    assert record(phoned(queue, "show", "last", "--json"))["task"]["id"] == newest
    shown = record(phoned(queue, "show", "last", "--conversation", "c1", "--json"))
    assert shown["task"]["id"] == of_c1
    cancelled = record(phoned(queue, "cancel", "last", "--conversation", "c1", "--json"))
    assert (cancelled["id"], cancelled["state"]) == (of_c1, "stopped")
    line = one_line_error(phoned(queue, "show", "last", "--conversation", "c3"), 1)
    assert "no task of conversation c3 yet" in line


def test_an_ambiguous_prefix_is_exit_2_naming_the_candidates(
    queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = ("abcdef01" + "0" * 24, "abcdef02" + "0" * 24, "abcd0000" + "0" * 24)
    with_ids(monkeypatch, *ids)
    for _ in ids:
        submit(queue)
    line = one_line_error(phoned(queue, "show", "abcdef"), 2)
    assert "task id prefix abcdef is ambiguous" in line and "give more characters" in line
    assert ids[0] in line and ids[1] in line and ids[2] not in line
    assert "(dnd.get, queued, c1)" in line
    assert record(phoned(queue, "show", "abcdef02", "--json"))["task"]["id"] == ids[1]


def test_a_short_or_unknown_prefix_is_refused(queue: str) -> None:
    full = submit(queue)
    line = one_line_error(phoned(queue, "show", full[:5]), 2)
    assert "too short: give at least 6 characters" in line
    other = "0" * 6 if not full.startswith("0" * 6) else "f" * 6
    assert f"no task has an id starting with {other}" in one_line_error(
        phoned(queue, "show", other), 1
    )
    # a verb with --conversation looks among that conversation's tasks
    line = one_line_error(phoned(queue, "cancel", full[:8], "--conversation", "c2"), 1)
    assert f"no task of conversation c2 has an id starting with {full[:8]}" in line
    assert "no task nope" in one_line_error(phoned(queue, "show", "nope"), 1)  # not hex: as given


def test_a_prefix_is_looked_for_among_the_newest_tasks_only(
    queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "TASK_PREFIX_SCAN", 2)
    oldest = submit(queue)
    submit(queue)
    submit(queue)
    line = one_line_error(phoned(queue, "show", oldest[:10]), 1)
    assert f"among the newest 2 has an id starting with {oldest[:10]}" in line
    assert record(phoned(queue, "show", oldest, "--json"))["task"]["id"] == oldest  # full id
