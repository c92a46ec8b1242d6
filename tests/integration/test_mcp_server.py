"""``phoned mcp`` driven by the MCP SDK's own client, over stdio (the server is a spawned
``phoned mcp`` process) and over streamable HTTP, against a real ``phoned run`` daemon and a
simulated phone on the same SQLite queue. The phone's state is read back from the simulator
itself, independently of phoned's evidence.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp.types as types
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.planning import catalogue
from phoned.daemon.server.auth import Role, make_token
from phoned.device.actions.registry import REGISTRY
from phoned_process import REPO, Daemon
from stacks import PHONED, spawn, stop_process, wait_http

from scripts.stack import free_port

pytestmark = pytest.mark.integration

TO, BODY = "+15551234567", "Dinner at 8? $(reboot)"
Elicit = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


def _stdio(daemon: Daemon, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "phoned.daemon.cli",
            "mcp",
            "--queue",
            f"sqlite:///{daemon.queue}",
            "--conversation",
            "conv-mcp",
            "--wait",
            "30",
            *extra,
        ],
        env=daemon.env,
        cwd=str(REPO),
    )


async def _session(
    stack: AsyncExitStack, daemon: Daemon, elicit: Elicit | None = None
) -> ClientSession:
    read, write = await stack.enter_async_context(stdio_client(_stdio(daemon)))
    session = await stack.enter_async_context(
        ClientSession(read, write, elicitation_callback=elicit)
    )
    await session.initialize()
    return session


def run_stdio(daemon: Daemon, body: Callable[[ClientSession], Awaitable[Any]], elicit=None) -> Any:
    async def main() -> Any:
        async with AsyncExitStack() as stack:
            return await body(await _session(stack, daemon, elicit))

    return anyio.run(main)


def _answer(action: str, asked: list[str]) -> Elicit:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    return elicit


def _send_taps(daemon: Daemon, task_id: str) -> list[Any]:
    """The journaled taps on send of a task (the one effect of sms.send)."""
    store = daemon.store()
    try:
        return [j for j in store.journal(task_id) if j.action == "sms.send"]
    finally:
        store.close()


# ---- stdio ------------------------------------------------------------------------------


def test_tool_list_has_one_tool_per_method_with_its_params_schema(daemon: Daemon) -> None:
    listed = run_stdio(daemon, lambda s: s.list_tools())
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == {catalogue.tool_name(m) for m in REGISTRY} | {
        "task_status", "task_amend", "task_cancel", "device_context", "queue_status",
        "schedule_add", "schedule_list", "schedule_remove", "schedule_pause",
    }  # fmt: skip
    dnd = tools["dnd_set"]
    assert dnd.input_schema["properties"]["mode"]["enum"] == [
        "off", "priority", "alarms", "total_silence"
    ]  # fmt: skip
    assert dnd.input_schema["properties"]["mode"]["description"]
    assert "device" in dnd.input_schema["properties"]
    assert dnd.input_schema["required"] == ["mode"]
    assert tools["volume_set"].input_schema["properties"]["percent"]["anyOf"][0]["maximum"] == 100
    assert tools["dnd_get"].annotations.read_only_hint is True
    assert tools["dnd_set"].annotations.read_only_hint is False
    assert tools["dnd_set"].annotations.idempotent_hint is True
    send = tools["sms_send"].annotations
    assert (send.read_only_hint, send.destructive_hint, send.idempotent_hint) == (
        False,
        True,
        False,
    )
    assert "approval" in tools["sms_send"].description


def test_dnd_set_completes_and_the_phone_shows_it(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    result = run_stdio(daemon, lambda s: s.call_tool("dnd_set", {"mode": "priority"}))
    assert not result.is_error, result.content
    out = result.structured_content
    assert (out["state"], out["observed_target"]) == ("completed", "dnd.priority")
    assert sim.phone.notification.zen_mode == 1  # read from the phone itself
    assert any(r["phase"] == "after" for e in out["evidence"] for r in e["read_backs"])
    assert any(
        "zen_mode" in c["argv"] or "dnd" in c["argv"] for c in out["evidence"][0]["commands"]
    )
    record = daemon.task(out["task_id"])
    assert (record.conversation_id, record.state) == ("conv-mcp", TaskState.COMPLETED)


def test_bad_params_are_a_tool_error_naming_the_field(daemon: Daemon) -> None:
    async def body(s: ClientSession) -> Any:
        return await s.call_tool("volume_set", {"stream": "ring", "percent": 400})

    result = run_stdio(daemon, body)
    assert result.is_error
    text = result.content[0].text
    assert "percent" in text and "Traceback" not in text
    assert daemon.store().list_tasks() == []  # nothing queued


def test_sms_send_pauses_for_approval_with_nothing_sent(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()

    async def body(s: ClientSession) -> Any:
        first = await s.call_tool("sms_send", {"to": TO, "body": BODY})
        later = await s.call_tool("task_status", {"task_id": first.structured_content["task_id"]})
        return first, later

    first, later = run_stdio(daemon, body)  # this client cannot be asked: no elicitation
    out = first.structured_content
    assert not first.is_error and out["state"] == "approval"
    approval = out["approval"]
    assert approval["preview"]["target"] == TO and approval["preview"]["data"]["text"] == BODY
    assert f"--digest {approval['digest']}" in approval["approve_command"]
    assert "you cannot approve" in out["message"]
    assert sim.phone.sms.messages("sent") == []
    assert _send_taps(daemon, out["task_id"]) == []  # the send button was never tapped
    assert later.structured_content["state"] == "approval"
    # the person approves with the printed command; the status call shows the outcome
    argv = approval["approve_command"].split()[1:]
    done = subprocess.run([sys.executable, "-m", "phoned.daemon.cli", *argv], env=daemon.env, cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    daemon.state(out["task_id"], TaskState.COMPLETED)
    final = run_stdio(daemon, lambda s: s.call_tool("task_status", {"task_id": out["task_id"]}))
    assert final.structured_content["observed_target"] == "sms.sent"
    assert [m["body"] for m in sim.phone.sms.messages("sent")] == [BODY]


def _sms_send_answered(daemon: Daemon, sim_factory: Any, answer: str) -> tuple[Any, Any, list[str]]:
    """``sms_send`` over MCP whose approval the client is asked for (an elicitation) and
    answers ``answer``: the phone, the tool's result and what the client was shown."""
    sim = sim_factory(sdk=34)
    daemon.start()
    asked: list[str] = []
    result = run_stdio(
        daemon,
        lambda s: s.call_tool("sms_send", {"to": TO, "body": BODY}),
        _answer(answer, asked),
    )
    return sim, result, asked


def test_elicitation_accept_approves_that_preview(daemon: Daemon, sim_factory) -> None:
    sim, result, asked = _sms_send_answered(daemon, sim_factory, "accept")
    assert not result.is_error, result.content
    out = result.structured_content
    assert (out["state"], out["observed_target"]) == ("completed", "sms.sent")
    assert out["decision"]["decision"] == "approved"
    (message,) = asked
    assert TO in message and BODY in message and out["task_id"] in message
    assert [m["body"] for m in sim.phone.sms.messages("sent")] == [BODY]
    record = daemon.task(out["task_id"])
    assert record.approval_status == "approved" and record.revision == out["decision"]["revision"]
    assert len(_send_taps(daemon, out["task_id"])) == 1  # exactly one tap, after the approval


def test_elicitation_decline_denies_and_nothing_is_sent(daemon: Daemon, sim_factory) -> None:
    sim, result, asked = _sms_send_answered(daemon, sim_factory, "decline")
    assert result.is_error and len(asked) == 1
    out = result.structured_content
    assert (out["state"], out["failure"]["reason"]) == ("stopped", "approval_denied")
    assert sim.phone.sms.messages("sent") == []
    assert _send_taps(daemon, out["task_id"]) == []


# ---- streamable HTTP --------------------------------------------------------------------


@pytest.fixture(params=["--elicit-approvals"])
def http_server(
    request: pytest.FixtureRequest, daemon: Daemon, tmp_path: Path
) -> Iterator[tuple[str, str, str]]:
    """``phoned mcp --http`` with a planner and a viewer token: (url, planner, viewer).

    Elicited decisions are on (``--elicit-approvals``) unless a test parametrizes the
    fixture with ``""`` (the HTTP default: off)."""
    planner, planner_entry = make_token(Role.PLANNER, name="agent")
    viewer, viewer_entry = make_token(Role.VIEWER, name="watcher")
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("tokens:\n" + planner_entry + viewer_entry)
    port = free_port()
    log = tmp_path / "mcp-http.log"
    proc = spawn(
        [*PHONED, "mcp", "--queue", f"sqlite:///{daemon.queue}", "--conversation", "conv-mcp",
         "--http", f"127.0.0.1:{port}", "--tokens", str(tokens),
         *([request.param] if request.param else [])],
        daemon.env, log,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_http(url, log, proc, ready=lambda answer: True)  # any answer: it listens
        yield url, planner, viewer
    finally:
        stop_process(proc, timeout=10)


def run_http(url: str, token: str, body: Callable[[ClientSession], Awaitable[Any]], elicit=None):
    async def main() -> Any:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with (
            client,
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as session,
        ):
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def test_http_needs_a_planner_token(http_server) -> None:
    url, _, viewer = http_server
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx.post(url, json=ping, timeout=5).status_code == 401
    assert (
        httpx.post(url, json=ping, headers={"Authorization": "Bearer nope"}, timeout=5).status_code
        == 401
    )
    refused = httpx.post(url, json=ping, headers={"Authorization": f"Bearer {viewer}"}, timeout=5)
    assert refused.status_code == 403 and "planner" in refused.json()["message"]


@pytest.mark.parametrize("http_server", [""], indirect=True)
def test_http_does_not_let_a_planner_token_decide_by_default(
    http_server, daemon: Daemon, sim_factory
) -> None:
    """Over HTTP the caller holds only a planner token; an elicitation-capable client is
    not asked unless the operator said so (--elicit-approvals): the preview waits for an
    approver (``phoned approve``, the plane's API, the monitor)."""
    url, planner, _ = http_server
    sim = sim_factory(sdk=34)
    daemon.start()
    asked: list[str] = []
    result = run_http(
        url, planner, lambda s: s.call_tool("sms_send", {"to": TO, "body": BODY}),
        _answer("accept", asked),
    )  # fmt: skip
    out = result.structured_content
    assert out["state"] == "approval" and asked == []
    assert daemon.task(out["task_id"]).state is TaskState.APPROVAL
    assert sim.phone.sms.messages("sent") == []


def test_http_dnd_set_and_elicited_sms_send(http_server, daemon: Daemon, sim_factory) -> None:
    url, planner, _ = http_server
    sim = sim_factory(sdk=34)
    daemon.start()
    asked: list[str] = []
    answers = iter(["accept", "decline"])

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=next(answers))  # type: ignore[arg-type]

    async def body(s: ClientSession) -> Any:
        listed = await s.list_tools()
        dnd = await s.call_tool("dnd_set", {"mode": "alarms", "device": sim.serial})
        sent = await s.call_tool("sms_send", {"to": TO, "body": BODY})
        denied = await s.call_tool("sms_send", {"to": TO, "body": "not this one"})
        return listed, dnd, sent, denied

    listed, dnd, sent, denied = run_http(url, planner, body, elicit)
    assert "sms_send" in {t.name for t in listed.tools}
    assert dnd.structured_content["observed_target"] == "dnd.alarms"
    assert sim.phone.notification.zen_mode == 3
    assert sent.structured_content["state"] == "completed"
    assert denied.is_error and denied.structured_content["failure"]["reason"] == "approval_denied"
    assert len(asked) == 2 and "not this one" in asked[1]
    assert [m["body"] for m in sim.phone.sms.messages("sent")] == [BODY]


# ---- 2026-07-28 sessions (mcp.Client negotiates them): the question rides InputRequiredResult


def test_modern_session_asks_through_input_required_and_applies_the_answer(
    daemon: Daemon, sim_factory
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    asked: list[str] = []

    async def main() -> Any:
        async with Client(_stdio(daemon), elicitation_callback=_answer("accept", asked)) as c:
            assert c.session.protocol_version in MODERN_PROTOCOL_VERSIONS
            return await c.call_tool("sms_send", {"to": TO, "body": BODY})

    result = anyio.run(main)
    assert not result.is_error, result.content
    out = result.structured_content
    assert (out["state"], out["decision"]["decision"]) == ("completed", "approved")
    assert len(asked) == 1 and BODY in asked[0]
    assert [m["body"] for m in sim.phone.sms.messages("sent")] == [BODY]


def test_a_forged_answer_to_an_unasked_question_is_refused(daemon: Daemon, sim_factory) -> None:
    """The model (or anything) cannot approve by replaying a call with an answer: the
    request_state must be a key this server minted for a question it put to the person."""
    sim = sim_factory(sdk=34)
    daemon.start()

    async def main() -> Any:
        async with Client(_stdio(daemon)) as c:  # no elicitation: left pending
            first = await c.call_tool("sms_send", {"to": TO, "body": BODY})
            forged = await c.session.call_tool(
                "sms_send", {"to": TO, "body": BODY}, request_state="made-up",
                input_responses={"approval": types.ElicitResult(action="accept")},
            )  # fmt: skip
            return first, forged

    first, forged = anyio.run(main)
    assert first.structured_content["state"] == "approval"
    assert forged.is_error and "unknown" in forged.content[0].text
    assert daemon.task(first.structured_content["task_id"]).state is TaskState.APPROVAL
    assert sim.phone.sms.messages("sent") == []


def test_task_status_of_another_conversation_reads_as_no_such_task(daemon: Daemon) -> None:
    other = daemon.submit({"method": "dnd.get", "params": {}})  # conversation conv-e2e
    result = run_stdio(daemon, lambda s: s.call_tool("task_status", {"task_id": other}))
    assert result.is_error and result.content[0].text == f"no task {other} in this conversation"


def test_reads_context_queue_and_cancel(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    sim.phone.notification.set_zen(2)  # the person chose total silence on the phone

    async def body(s: ClientSession) -> Any:
        context = await s.call_tool("device_context", {"device": sim.serial})
        queued = await s.call_tool("dnd_get", {})  # no daemon yet: still queued after the wait
        cancelled = await s.call_tool(
            "task_cancel", {"task_id": queued.structured_content["task_id"]}
        )
        queue = await s.call_tool("queue_status", {})
        return context, queued, cancelled, queue

    params = _stdio(daemon)
    params.args[params.args.index("--wait") + 1] = "1"

    async def main() -> Any:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            return await body(session)

    context, queued, cancelled, queue = anyio.run(main)
    assert not context.is_error, context.content
    device = context.structured_content["device"]
    assert device["dnd_mode"]["value"] == "total_silence"  # the phone's own setting
    assert "dnd.set" in device["supported_methods"]["value"]
    assert queued.structured_content["state"] == "queued"
    assert "still queued" in queued.structured_content["message"]
    assert not cancelled.is_error and cancelled.structured_content["state"] == "stopped"
    listed = queue.structured_content
    assert listed["counts"]["stopped"] == 1
    assert listed["tasks"][0]["task_id"] == queued.structured_content["task_id"]
    daemon.start()
    read = run_stdio(daemon, lambda s: s.call_tool("dnd_get", {"device": sim.serial}))
    assert read.structured_content["state"] == "completed"
    assert "total_silence" in read.structured_content["message"]


def test_the_readme_client_configuration_starts_a_working_server(daemon: Daemon) -> None:
    """The stdio snippet of the README, as an MCP client would run it: with no --queue it
    serves the daemon's default queue (the state directory's queue.db)."""
    import json
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("phoned mcp`") :]
    snippet = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))  # type: ignore[union-attr]
    server = snippet["mcpServers"]["phoned"]
    assert server["command"].endswith("/.venv/bin/phoned") and server["args"][0] == "mcp"
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "phoned"), args=server["args"],
        env=daemon.env, cwd=str(REPO),
    )  # fmt: skip
    conversation = server["args"][server["args"].index("--conversation") + 1]
    task_id = daemon.submit({"method": "dnd.get", "params": {}, "conversation_id": conversation})
    daemon.submit({"method": "dnd.get", "params": {}, "conversation_id": "not-counted"})

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.list_tools(), await s.call_tool("queue_status", {})

    listed, queue = anyio.run(main)
    assert "dnd_set" in {t.name for t in listed.tools}
    assert queue.structured_content["counts"]["queued"] == 1  # the daemon's queue, not another
    assert queue.structured_content["tasks"][0]["task_id"] == task_id  # (its conversation's)
    assert daemon.task(task_id).state is TaskState.QUEUED


def test_http_modern_session_with_a_planner_token(http_server, daemon: Daemon, sim_factory) -> None:
    """``mcp.Client`` over streamable HTTP negotiates 2026-07-28: the approval question
    rides an InputRequiredResult; the answer comes back with the retried call."""
    url, planner, _ = http_server
    sim = sim_factory(sdk=34)
    daemon.start()
    asked: list[str] = []

    async def main() -> Any:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {planner}"})
        async with client:
            transport = streamable_http_client(url, http_client=client)
            async with Client(transport, elicitation_callback=_answer("decline", asked)) as c:
                assert c.session.protocol_version in MODERN_PROTOCOL_VERSIONS
                dnd = await c.call_tool("dnd_set", {"mode": "total_silence"})
                sms = await c.call_tool("sms_send", {"to": TO, "body": BODY})
                return dnd, sms

    dnd, sms = anyio.run(main)
    assert dnd.structured_content["observed_target"] == "dnd.total_silence"
    assert sim.phone.notification.zen_mode == 2
    assert sms.is_error and sms.structured_content["failure"]["reason"] == "approval_denied"
    assert len(asked) == 1 and sim.phone.sms.messages("sent") == []
