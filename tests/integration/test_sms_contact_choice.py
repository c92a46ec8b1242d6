"""A message to a person, not a number (issue #26 item 2; seed 000: "a message to Ivan", "an
ambiguous contact"), from the outside: real ``phoned`` processes over one SQLite queue and a
simulated phone whose book holds two contacts named alike.

* CLI: ``phoned run --once`` pauses the task ``waiting`` for ``choice:to`` (exit 4, paused) with
  nothing drafted; ``phoned tasks`` and ``phoned show`` name the choice, the candidates and
  the ``phoned amend`` line; that line, run as printed, answers it (a new revision), and the
  next ``run --once`` drafts to the chosen number.
* MCP: a real MCP client over stdio against ``phoned mcp`` and a ``phoned run`` daemon:
  ``sms_send`` to the name comes back waiting with the candidates; ``task_amend`` with the
  chosen one comes back with the approval question naming the contact and the number; the
  person accepts (elicitation) and the message is in the phone's sent box, to that number.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from phoned.daemon.rendering.render import approval_preview
from phoned_process import REPO, Daemon

pytestmark = pytest.mark.integration

IVAN_1, IVAN_2, BODY = "+79160000001", "+79160000002", "See you at 8 $(reboot)"


def _book(sim: Any) -> None:
    sim.phone.contacts.add("Ivan Petrov", IVAN_1, 2)
    sim.phone.contacts.add("Ivan Petrov", IVAN_2, 3, separate=True)
    sim.phone.contacts.add("Иван Сидоров", "+79160000003", 2)


def _phoned(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", *args], env=env, cwd=REPO, capture_output=True,
        text=True, timeout=90, check=False,
    )  # fmt: skip


def _once_to_a_name(
    env: dict[str, str], sim: Any, tmp_path: Path, method: str, to: str, exits: int
) -> subprocess.CompletedProcess[str]:
    """``phoned run --once`` of a task file: ``method`` to the name ``to``, on ``sim`` with
    the address book of ``_book``: the process's result, which exited ``exits`` (asserted)."""
    _book(sim)
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps({
        "conversation_id": "conv-ivan", "method": method, "params": {"to": to, "body": BODY},
    }))  # fmt: skip
    ran = _phoned(env, "run", "--once", "--json", "--serial", sim.serial, "--task", str(task_file))
    assert ran.returncode == exits, ran.stdout[-2000:] + ran.stderr[-2000:]
    return ran


def test_cli_waits_for_the_choice_and_the_printed_amend_line_answers_it(
    daemon_env, sim_factory, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    first = _once_to_a_name(daemon_env, sim, tmp_path, "sms.draft", "Ivan Petrov", exits=4)
    record = json.loads(first.stdout)["task"]
    assert (record["state"], record["waiting_for"]) == ("waiting", "choice:to")
    assert not [a for a in sim.phone.log.argvs() if a[:2] == ("am", "start")]
    assert not any("Ivan" in e for a in sim.phone.log.argvs() for e in a)

    listed = _phoned(daemon_env, "tasks")
    assert "choice: to" in listed.stdout and "phoned show" in listed.stdout, listed.stdout
    shown = _phoned(daemon_env, "show", record["id"], "--json")
    choice = json.loads(shown.stdout)["pending_choice"]
    assert [(c["display_name"], c["number"], c["type_name"]) for c in choice["candidates"]] == [
        ("Ivan Petrov", IVAN_1, "mobile"),
        ("Ivan Petrov", IVAN_2, "work"),
    ]
    text = _phoned(daemon_env, "show", record["id"]).stdout
    assert "waiting for a choice of to" in text
    [line] = [ln.strip() for ln in text.splitlines() if IVAN_2 in ln and "phoned amend" in ln]
    amend = shlex.split(line)
    assert amend[:3] == ["phoned", "amend", record["id"]]
    answered = _phoned(daemon_env, *amend[1:])
    assert answered.returncode == 0, answered.stderr

    second = _phoned(daemon_env, "run", "--once", "--json", "--serial", sim.serial)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    done = json.loads(second.stdout)["task"]
    assert (done["state"], done["revision"], done["attempt"]) == ("completed", 2, 1)
    assert done["params"] == {"to": IVAN_2, "contact": "Ivan Petrov", "body": BODY}
    [am] = [a for a in sim.phone.log.argvs() if a[:2] == ("am", "start")]
    assert f"smsto:{IVAN_2}" in am and BODY in am


def test_cli_no_such_contact_fails_invalid_params_naming_to(
    daemon_env, sim_factory, tmp_path: Path
) -> None:
    result = _once_to_a_name(daemon_env, sim_factory(sdk=34), tmp_path, "sms.send", "Пётр", exits=1)
    failure = json.loads(result.stdout)["task"]["failure"]
    assert failure["reason"] == "invalid_params" and failure["message"].startswith("to:")
    assert "Пётр" in failure["message"]  # the task's own record: its params are there too


def test_mcp_send_to_a_name_choose_approve_and_sent(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    _book(sim)
    daemon.start()
    asked: list[str] = []

    async def accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept")

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            session = await daemon.mcp_session(stack, "conv-mcp", 30, elicitation_callback=accept)
            sent = await session.call_tool("sms_send", {"to": "Ivan Petrov", "body": BODY})
            task_id = sent.structured_content["task_id"]
            status = await session.call_tool("task_status", {"task_id": task_id})
            [_, second] = status.structured_content["choice"]["candidates"]
            foreign = await session.call_tool(
                "task_amend", {"task_id": "no-such-task", "params": second["amend"]}
            )
            answered = await session.call_tool(
                "task_amend", {"task_id": task_id, "params": second["amend"]}
            )
            return sent, status, foreign, answered

    sent, status, foreign, answered = anyio.run(main)
    waiting = sent.structured_content
    assert (waiting["state"], waiting["waiting_for"]) == ("waiting", "choice:to")
    assert "task_amend" in waiting["message"]
    candidates = status.structured_content["choice"]["candidates"]
    assert [c["number"] for c in candidates] == [IVAN_1, IVAN_2]
    assert candidates[1]["amend"] == {"to": IVAN_2, "contact": "Ivan Petrov"}
    assert foreign.is_error
    assert not answered.is_error, answered.content
    done = answered.structured_content
    assert done["state"] == "completed" and done["revision"] == 2, done["message"]
    assert done["decision"]["decision"] == "approved"
    [question] = asked
    assert f"Ivan Petrov ({IVAN_2}, work)" in question
    [row] = [r for r in sim.phone.sms.rows if r["type"] == 2]
    assert (row["address"], row["body"]) == (IVAN_2, BODY)


def test_a_draft_to_a_contact_edited_while_waiting_for_approval_is_stale_and_not_sent(
    daemon: Daemon, sim_factory
) -> None:
    """The stale check knows the draft by the number the name stands for: a person's edit of
    the draft a name-addressed task prepared is kept, nothing is sent."""
    from phoned.daemon.lifecycle.states import FailureReason, TaskState

    sim = sim_factory(sdk=34)
    sim.phone.contacts.add("Иван Сидоров", "+79160000003", 2)
    daemon.start()
    task_id = daemon.submit({"method": "sms.send", "conversation_id": "conv-ivan",
                             "params": {"to": "Иван Сидоров", "body": BODY}})  # fmt: skip
    task = daemon.state(task_id, TaskState.APPROVAL)
    (pause,) = daemon.evidence(task_id, "pause_snapshot")
    assert pause["body"]["snapshot"]["texts"]["recipient_shown"] is True
    # the approver's card: the contact in clear, the number the book gave in its stand-in
    shown = daemon.using(
        lambda store: approval_preview(store.get(task_id), store.evidence(task_id))
    )
    assert shown is not None and shown["data"]["contact"] == "Иван Сидоров"
    assert (shown["target"], shown["data"]["text"]) == ("<number •••0003>", BODY)
    assert sim.phone.ui.type_text(" -- actually, cancel that")  # the person edits the draft
    daemon.approve(task)
    failed = daemon.state(task_id, TaskState.FAILED)
    assert failed.failure is not None and failed.failure.reason is FailureReason.STALE_STATE
    assert sim.phone.sms.messages("sent") == []
    assert sim.phone.ui.top().state["body"].endswith("cancel that")


def test_run_once_sim_with_a_book_waits_for_the_choice_and_a_second_run_drafts_it(
    adb_server, tmp_path: Path
) -> None:
    """``phoned run --once --sim --sim-port P --sim-scenario contact:...``: the first run
    pauses on the choice and keeps the phone; ``phoned amend`` as ``phoned show`` prints it
    answers; the second run adopts the phone and drafts to the chosen number."""
    import os
    import signal

    from phoned_process import daemon_env

    from scripts.stack import free_port

    queue = f"sqlite:///{tmp_path / 'queue.db'}"
    env = daemon_env(adb_server.port, tmp_path / "state", PHONED_CONFIG="/dev/null")
    port = free_port()
    book = f"contact:Ivan Petrov={IVAN_1}:mobile,contact:Ivan Petrov={IVAN_2}:work:new"
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps({
        "conversation_id": "conv-ivan", "method": "sms.draft",
        "params": {"to": "Ivan Petrov", "body": BODY},
    }))  # fmt: skip
    pid_file = tmp_path / "state" / "sim" / f"{port}.pid"
    sim = ["--sim", "--sim-port", str(port)]
    try:
        first = _phoned(env, "run", "--once", "--json", *sim, "--sim-scenario", book,
                        "--task", str(task_file), "--queue", queue)  # fmt: skip
        assert first.returncode == 4, first.stdout[-2000:] + first.stderr[-2000:]
        task_id = json.loads(first.stdout)["task"]["id"]
        shown = _phoned(env, "show", task_id, "--queue", queue).stdout
        [line] = [ln.strip() for ln in shown.splitlines() if f"to={IVAN_2}" in ln]
        amend = shlex.split(line)
        assert amend[-2:] == ["--queue", queue]
        assert _phoned(env, *amend[1:]).returncode == 0
        second = _phoned(env, "run", "--once", "--json", *sim, "--queue", queue)
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
        report = json.loads(second.stdout)
        assert (report["task"]["state"], report["task"]["revision"]) == ("completed", 2)
        ran = json.dumps(report["evidence"], ensure_ascii=False)
        assert "smsto:<number •••0002>" in ran and IVAN_2 not in ran
    finally:
        if pid_file.exists():
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
        adb_server.adb("disconnect", f"127.0.0.1:{port}")


def test_a_bad_sim_scenario_is_refused_naming_the_option(daemon_env) -> None:
    bad = _phoned(daemon_env, "run", "--once", "--sim", "--sim-scenario", "contact:Ivan")
    assert bad.returncode == 2 and "--sim-scenario" in bad.stderr, bad.stderr
    alone = _phoned(daemon_env, "run", "--once", "--sim-scenario", "locked")
    assert alone.returncode == 2 and "--sim-scenario needs --sim" in alone.stderr
