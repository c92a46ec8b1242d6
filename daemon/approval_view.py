"""A pending approval as a person sees it: the preview itself and the command to decide it.

The task record holds only the approval's digest and revision; the preview (effect,
recipient, text, app, snapshot digest) is the one ``daemon.render.approval_preview`` rebuilds
in clear from the task's params and checks against that digest (evidence keeps it redacted),
and the screen it was taken from is the attempt's pause snapshot (its screenshot artifact).
``pending_approval`` gathers them for ``phoned show`` and ``GET /v1/tasks/{id}``, with the
exact ``phoned approve``/``phoned deny`` lines (revision, digest and conversation quoted as
those verbs need them, shell-quoted so any value pastes safely).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from daemon.lifecycle.records import TaskRecord


def _artifacts(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        return {}
    inner = body.get("evidence") if isinstance(body.get("evidence"), dict) else body
    found = inner.get("artifacts") if isinstance(inner, dict) else None
    return found if isinstance(found, dict) else {}


def _screenshot_of(evidence: Sequence[dict[str, Any]], attempt: int) -> str | None:
    """The latest screenshot artifact of ``attempt`` (the pause snapshot's, when kept)."""
    shot: str | None = None
    for doc in evidence:
        if doc.get("attempt") != attempt:
            continue
        for name, value in _artifacts(doc.get("body")).items():
            if "screenshot" in str(name):
                shot = str(value)
    return shot


def decision_command(verb: str, task: TaskRecord, queue: str | None = None) -> str:
    """``phoned approve|deny TASK --revision N --digest D --conversation C [--queue URL]``."""
    argv = [
        "phoned", verb, task.id,
        "--revision", str(task.approval_revision or task.revision),
        "--digest", task.approval_digest or "",
        "--conversation", task.conversation_id,
    ]  # fmt: skip
    if queue:
        argv += ["--queue", queue]
    return shlex.join(argv)


def pending_approval(
    task: TaskRecord,
    preview: dict[str, Any] | None,
    evidence: Sequence[dict[str, Any]],
    queue: str | None = None,
) -> dict[str, Any] | None:
    """The pending approval of ``task`` with its preview (what ``approval_preview`` rebuilt
    for it, computed once by the caller) and decision commands; None when no approval is
    pending."""
    if task.state.value != "approval" or task.approval_status != "pending":
        return None
    preview = preview or {}
    shown = preview.get("data")
    data: dict[str, Any] = shown if isinstance(shown, dict) else {}
    return {
        "revision": task.approval_revision or task.revision,
        "digest": task.approval_digest,
        "conversation_id": task.conversation_id,
        "deadline": task.approval_deadline,
        "effect": preview.get("effect"),
        "recipient": preview.get("target"),
        "text": data.get("text"),
        "app": data.get("app"),
        "snapshot_digest": preview.get("snapshot_digest"),
        "screenshot": _screenshot_of(evidence, task.attempt),
        "approve_command": decision_command("approve", task, queue),
        "deny_command": decision_command("deny", task, queue),
    }


def approval_lines(pending: dict[str, Any]) -> list[str]:
    """The pending approval as text lines for ``phoned show``."""
    from daemon.render import iso

    def show(value: Any) -> str:
        return "-" if value is None else str(value)

    return [
        "",
        "pending approval",
        f"  effect      {show(pending['effect'])}",
        f"  recipient   {show(pending['recipient'])}",
        f"  text        {show(pending['text'])!r}"
        if pending["text"] is not None
        else "  text        -",
        f"  app         {show(pending['app'])}",
        f"  screenshot  {show(pending['screenshot'])}",
        f"  revision {pending['revision']}  digest {show(pending['digest'])}",
        f"  decide before {iso(pending['deadline']) or '-'}",
        "  to approve:",
        f"    {pending['approve_command']}",
        "  to deny:",
        f"    {pending['deny_command']}",
    ]
