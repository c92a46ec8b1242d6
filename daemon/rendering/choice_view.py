"""A task waiting for a choice (``waiting_for`` = ``choice:FIELD``) as a person or a planner
sees it: the candidates and the exact amendment that answers.

The action that paused kept the candidates in its outcome (``detail.candidates``, each with
``display_name``, ``number``, ``type_name``...; ``device/actions/recipient.py``); evidence
keeps them as the task's secrets allow (a display name holding the name asked for shows it
redacted), so they are rebuilt here with the task's own params put back
(``private.restore``), as the approval preview is. A bound viewer's copy is redacted again
by the plane (``deps.redacted``: ``number`` is a private key there), as ``contacts.find``'s
numbers are.

Each candidate carries its answer: ``phoned amend TASK --param to=NUMBER --param
contact=NAME --conversation C`` (shell-quoted: a name pastes safely whatever it holds), and
``amend``, the params the MCP tool ``task_amend`` takes for it. A UI-tier step whose
selector matched several elements (``choice:selector``, ``device/actions/ui_step.py``) gets
its selector with the candidate's ``index``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from phoned.daemon.lifecycle.waiting import WaitingFor, WaitKind
from phoned.device import private
from phoned.device.actions.registry import task_secrets

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord

OUTCOME_KIND = "outcome"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _asking(
    task: TaskRecord, field: str, evidence: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The candidates of the latest outcome of ``task``'s attempt that asked for ``field``."""
    for doc in reversed(evidence):
        if doc.get("kind") != OUTCOME_KIND or doc.get("attempt") != task.attempt:
            continue
        detail = _mapping(_mapping(doc.get("body")).get("detail"))
        if detail.get("choice") == field and isinstance(detail.get("candidates"), list):
            return [c for c in detail["candidates"] if isinstance(c, dict)]
    return []


def answer_params(
    field: str, candidate: dict[str, Any], params: dict[str, Any]
) -> dict[str, Any] | None:
    """The params an amendment choosing ``candidate`` merges in: for a recipient, the number
    as ``field`` and the contact's name as ``contact`` (checked against the phone book);
    for a UI-tier selector matching several elements, the task's selector with the
    candidate's ``index``; None when the candidate does not say how it is chosen."""
    if candidate.get("number"):
        chosen: dict[str, Any] = {field: str(candidate["number"])}
        if candidate.get("display_name"):
            chosen["contact"] = str(candidate["display_name"])
        return chosen
    current = params.get(field)
    if isinstance(candidate.get("index"), int) and isinstance(current, dict):
        return {field: {**current, "index": candidate["index"]}}
    return None


def amend_command(task: TaskRecord, params: dict[str, Any], queue: str | None = None) -> str:
    """``phoned amend TASK --param K=V ... --conversation C [--queue URL]`` (a value that
    is not text as JSON, as ``--param`` reads it)."""
    argv = ["phoned", "amend", task.id]
    for key, value in params.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        argv += ["--param", f"{key}={text}"]
    argv += ["--conversation", task.conversation_id]
    if queue:
        argv += ["--queue", queue]
    return shlex.join(argv)


def pending_choice(
    task: TaskRecord, evidence: Sequence[dict[str, Any]], queue: str | None = None
) -> dict[str, Any] | None:
    """What ``task`` waits to be told: the field, the candidates (in clear for the owner)
    and each one's answer; None unless it waits for a choice."""
    if task.state.value != "waiting" or not task.waiting_for:
        return None
    waiting = WaitingFor.parse(task.waiting_for)
    if waiting.kind is not WaitKind.CHOICE:
        return None
    field = waiting.choice_of or "params"
    secrets = task_secrets(task.method, task.params)
    candidates = []
    for shown in _asking(task, field, evidence):
        clear = private.restore(shown, secrets)
        chosen = answer_params(field, clear, task.params)
        line = amend_command(task, chosen, queue) if chosen is not None else None
        candidates.append({**clear, "amend": chosen, "amend_command": line})
    return {
        "field": field,
        "asked": task.params.get(field),
        "candidates": candidates,
        "message": (
            f"{len(candidates)} candidates fit {field}: amend the task with the one meant "
            "(a new revision); nothing was done on the phone"
        ),
    }


def choice_lines(pending: dict[str, Any]) -> list[str]:
    """The pending choice as text lines for ``phoned show`` / ``phoned tasks``."""
    lines = ["", f"waiting for a choice of {pending['field']} (asked: {pending['asked']!r})"]
    for n, found in enumerate(pending["candidates"], 1):
        if found.get("number"):
            kind = found.get("type_name") or "-"
            shown = f"{found.get('display_name') or '-'}  {found['number']}  {kind}"
        else:  # another kind of candidate (a UI element): its own fields
            shown = json.dumps(
                {k: v for k, v in found.items() if k not in ("amend", "amend_command")},
                ensure_ascii=False, sort_keys=True,
            )  # fmt: skip
        lines.append(f"  {n}. {shown}")
        if found.get("amend_command"):
            lines.append(f"     {found['amend_command']}")
    if not pending["candidates"]:
        lines.append("  (the candidates are not in the evidence)")
    return lines
