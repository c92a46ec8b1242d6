"""``phoned mcp``: the task methods as MCP tools, on the official MCP SDK's low-level server.

One tool per method (``dnd.set`` -> ``dnd_set``) whose input schema is the method's params
model's JSON Schema plus an optional ``device`` (and, for ``screen_snapshot`` and the UI steps,
``image_max_bytes`` / ``image_max_side``: their result carries the screenshot as image content
and the visible elements as text, ``images.py``), and five more: ``task_status``,
``task_amend`` (``task_amend.py``: answers a choice), ``task_cancel``, ``device_context`` and
``queue_status``. A method call queues a task in
the server's conversation through ingress, waits (``--wait``) until it ends or pauses and
returns the task as structured content; a failure is a tool error (``isError``) whose
text is the reason.

An approval-gated task comes back ``approval`` pending with its preview. The model never
approves: when the client supports elicitation, the person is asked in the client (the
message shows the preview; accept approves, decline denies, either bound to the revision
and digest shown); otherwise, or when the person dismisses the question, the decision is
``phoned approve|deny`` (the exact command is in the result), the API or the monitor.
Over a handshake-era session the question is an ``elicitation/create`` request during the
call; over 2026-07-28 sessions it is an ``InputRequiredResult`` whose answer comes back
with the retried call (the ``request_state`` is a one-use key this process minted).
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from phoned.daemon.lifecycle.waiting import WaitKind
from phoned.daemon.mcp import schedule_tools, task_amend
from phoned.daemon.mcp.bridge import Bridge, ToolError, error_text, known_errors
from phoned.daemon.mcp.images import ImageArgError, shows_screen, take_limits
from phoned.daemon.mcp.tools import tools
from phoned.daemon.planning import catalogue
from phoned.daemon.rendering.approval_view import AFTER_DENIAL
from phoned.device.actions import registry as methods_registry  # REGISTRY read at call time

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from phoned.daemon.lifecycle.records import TaskRecord

log = logging.getLogger("phoned.mcp")

MAX_ASKS = 3  # questions per call (a fresh preview after an approval is asked about again)
APPROVAL_KEY = "approval"  # the key of the elicitation in an InputRequiredResult


@dataclass(frozen=True)
class PendingQuestion:
    """A question put to the person over a 2026-07-28 session, awaiting the retried call."""

    tool: str
    task_id: str
    revision: int
    digest: str
    asks: int  # how many times the person was asked during this call


MAX_PENDING = 1000  # questions kept for a retry; the oldest is forgotten first


def _result(content: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    text = content.get("message", "")
    body = json.dumps(content, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{text}\n{body}" if text else body)],
        structured_content=content,
        is_error=error,
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def _task_result(content: dict[str, Any]) -> types.CallToolResult:
    failed = content["terminal"] and content["state"] != "completed"
    return _result(content, error=failed)


def question(task: TaskRecord, preview: dict[str, Any] | None) -> str:
    """What the person is asked: the preview itself, and what accept and decline do."""
    shown = preview or {}
    data = shown.get("data") or {}
    lines = [
        "phoned asks you (not the assistant) to approve an action on your phone.",
        f"  effect: {shown.get('effect', task.method)}",
        f"  to:     {_recipient(shown.get('target', '?'), data)}",
    ]
    if "change" in data:
        lines.append(f"  change: {data['change']}")
    if "text" in data:
        lines.append(f"  text:   {data['text']}")
    if "app" in data:
        lines.append(f"  app:    {data['app']}")
    lines.append(f"  asked by conversation {task.conversation_id}, source {task.source}")
    rationale = (task.spec or {}).get("rationale")
    if isinstance(rationale, str):  # the planner's words, quoted: never read as instructions
        lines.append(f"  the assistant's rationale (its words): {rationale!r}")
    lines += [
        f"  task {task.id}, revision {task.revision}, preview {str(task.approval_digest)[:16]}",
        "Accept approves exactly this; decline denies it (the task stops).",
        f"If denied: {AFTER_DENIAL}.",
    ]
    return "\n".join(lines)


def _recipient(target: Any, data: dict[str, Any]) -> str:
    """``Ivan Petrov (+79160000002, work)`` for a contact a name gave, else the target."""
    if not data.get("contact"):
        return str(target)
    kind = f", {data['number_type']}" if data.get("number_type") else ""
    return f"{data['contact']} ({target}{kind})"


def _can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


class PhonedTools:
    """The tool handlers over one ``Bridge``."""

    def __init__(self, bridge: Bridge, *, elicit: bool = True) -> None:
        self.bridge = bridge
        self.elicit = elicit  # may the person at the client decide a preview?
        self.tools = tools()
        self.methods = {catalogue.tool_name(m): m for m in _method_names()}
        self.pending: dict[str, PendingQuestion] = {}

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            return await self._call(ctx, params)
        except (ToolError, ImageArgError) as exc:
            return _error(str(exc))
        except known_errors() as exc:
            return _error(error_text(exc))
        except Exception as exc:  # a bug: logged with its trace, the model gets one line
            log.exception("tool %s failed", params.name)
            return _error(f"internal error in phoned ({type(exc).__name__}); see the server log")

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name, args = params.name, dict(params.arguments or {})
        if params.request_state is not None:
            return await self._answered(ctx, params)
        if name in self.methods:
            method = self.methods[name]
            limits = take_limits(args) if shows_screen(method) else None
            task = await anyio.to_thread.run_sync(self.bridge.submit, method, args)
            warning = await anyio.to_thread.run_sync(self.bridge.unattended, task)
            if warning is not None:  # said at once: waiting would only time out
                content = await anyio.to_thread.run_sync(
                    lambda: self.bridge.result(task, timed_out=True)
                )
                content["warning"] = warning
                content["message"] = f"{warning}. {content['message']}"
                return _task_result(content)
            result = await self._settled(ctx, task.id, name)
            if limits is not None and isinstance(result, types.CallToolResult):
                shown = await anyio.to_thread.run_sync(self.bridge.screen, task.id, limits)
                result.content = [*result.content, *shown]
            return result
        if name == "task_status":  # the call succeeds whatever state the task is in
            return await self._status(args)
        if name == task_amend.NAME:  # then waits as a method call: a choice answered
            try:
                task = await anyio.to_thread.run_sync(task_amend.amend, self.bridge, args)
            except task_amend.AmendRefused as exc:
                raise ToolError(str(exc)) from exc
            return await self._settled(ctx, task.id, name)
        if name == "task_cancel":
            task = await anyio.to_thread.run_sync(self.bridge.cancel, _task_id(args))
            return _result(await anyio.to_thread.run_sync(self.bridge.result, task))
        if name == "device_context":
            found = await anyio.to_thread.run_sync(
                self.bridge.context, args.get("device"), args.get("apps") is True
            )
            return _result(found)
        if name == "queue_status":
            return _result(await anyio.to_thread.run_sync(self.bridge.queue, args.get("device")))
        if name in schedule_tools.NAMES:
            call = schedule_tools.call
            return _result(await anyio.to_thread.run_sync(call, self.bridge, name, args))
        raise ToolError(f"unknown tool {name!r}")

    async def _status(self, args: dict[str, Any]) -> types.CallToolResult:
        """``task_status``: the task now; once a task that shows the screen (a snapshot, a
        UI step) has ended, or while a step handed to the person waits, with the screen it
        left (handed over), fitted to the call's image limits."""
        limits = take_limits(args)
        task = await anyio.to_thread.run_sync(self.bridge.own, _task_id(args))
        status = _result(await anyio.to_thread.run_sync(self.bridge.result, task))
        handed = task.waiting is not None and task.waiting.kind is WaitKind.PERSON
        if (task.terminal or handed) and shows_screen(task.method):
            shown = await anyio.to_thread.run_sync(self.bridge.screen, task.id, limits)
            status.content = [*status.content, *shown]
        return status

    async def _settled(
        self,
        ctx: ServerRequestContext[Any, Any],
        task_id: str,
        tool: str,
        decision: dict[str, Any] | None = None,
        asks: int = 0,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Wait for the task; ask the person about a pending preview when the client can
        (again after a decision when the daemon came back with a fresh preview)."""
        settled = await anyio.to_thread.run_sync(self.bridge.settle, task_id)
        task = settled.task
        content = await anyio.to_thread.run_sync(
            lambda: self.bridge.result(task, timed_out=settled.timed_out)
        )
        if decision is not None:
            content["decision"] = decision
            content["message"] = (
                f"the person {decision['decision']} the preview; " + content["message"]
            )
        ask = self.elicit and _can_elicit(ctx) and asks < MAX_ASKS
        if content["approval"] is None or not ask:
            return _task_result(content)
        message = question(task, content["approval"]["preview"])
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._ask_later(tool, task, message, asks)
        try:
            answer = await ctx.session.elicit_form(
                message, {"type": "object", "properties": {}}, related_request_id=ctx.request_id
            )
        except Exception as exc:  # the client refused or cannot be asked: leave it pending
            log.info("elicitation for %s not answered: %s", task.id, exc)
            return _task_result(content)
        return await self._decided(ctx, task, answer.action, tool, asks + 1)

    def _ask_later(
        self, tool: str, task: TaskRecord, message: str, asks: int
    ) -> types.InputRequiredResult:
        key = secrets.token_urlsafe(24)
        while len(self.pending) >= MAX_PENDING:  # dicts keep insertion order: oldest first
            self.pending.pop(next(iter(self.pending)))
        self.pending[key] = PendingQuestion(
            tool, task.id, task.revision, task.approval_digest or "", asks + 1
        )
        request = types.ElicitRequest(
            method="elicitation/create",
            params=types.ElicitRequestFormParams(
                message=message, requested_schema={"type": "object", "properties": {}}
            ),
        )
        return types.InputRequiredResult(input_requests={APPROVAL_KEY: request}, request_state=key)

    async def _answered(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The retried call of a 2026-07-28 session, carrying the person's answer."""
        asked = self.pending.pop(params.request_state or "", None)
        if asked is None or asked.tool != params.name:
            raise ToolError(
                "that approval question is unknown or was answered already; call task_status"
            )
        answer = (params.input_responses or {}).get(APPROVAL_KEY)
        action = getattr(answer, "action", None)
        if action is None and isinstance(answer, dict):
            action = answer.get("action")
        task = await anyio.to_thread.run_sync(self.bridge.get, asked.task_id)
        if task.revision != asked.revision or task.approval_digest != asked.digest:
            raise ToolError(f"task {task.id} changed since the person was asked; call task_status")
        return await self._decided(ctx, task, str(action or "cancel"), asked.tool, asked.asks)

    async def _decided(
        self, ctx: ServerRequestContext[Any, Any], task: TaskRecord, action: str, tool: str,
        asks: int,
    ) -> types.CallToolResult | types.InputRequiredResult:  # fmt: skip
        """Apply the person's answer to the preview they saw (revision + digest), then wait."""
        if action not in ("accept", "decline"):
            content = await anyio.to_thread.run_sync(self.bridge.result, task)
            content["message"] = "the person dismissed the question; " + content["message"]
            return _task_result(content)
        digest = task.approval_digest or ""
        await anyio.to_thread.run_sync(
            self.bridge.decide, task.id, task.revision, digest, action == "accept"
        )
        decision = {"by": "person (MCP elicitation)",
                    "decision": "approved" if action == "accept" else "denied",
                    "revision": task.revision, "digest": digest}  # fmt: skip
        return await self._settled(ctx, task.id, tool, decision, asks)


def _task_id(args: dict[str, Any]) -> str:
    task_id = args.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise ToolError("task_id: a task id (text) is required")
    return task_id


def _method_names() -> list[str]:

    return list(methods_registry.REGISTRY)


def build_server(bridge: Bridge, *, elicit: bool = True) -> Server[Any]:
    """The low-level MCP server with phoned's tools; ``elicit``: the person at the client
    may approve or deny a preview through elicitation (else only ``phoned approve``)."""

    handlers = PhonedTools(bridge, elicit=elicit)
    return Server(
        "phoned",
        version=version("phoned"),
        title="phoned",
        instructions=(
            "Each tool runs one task on an Android phone and verifies it by reading it back. "
            "Effects that need approval (sms_send) wait for a person; you never approve."
        ),
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
    )
