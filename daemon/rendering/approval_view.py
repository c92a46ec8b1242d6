"""A pending approval as a person sees it: the preview itself and the command to decide it.

The task record holds only the approval's digest and revision; the preview (effect,
recipient, text, app, snapshot digest) is the one ``phoned.daemon.rendering.render.approval_preview`` rebuilds
in clear from the task's params and checks against that digest (evidence keeps it redacted),
and the screen it was taken from is the attempt's pause snapshot (its screenshot artifact).
``pending_approval`` gathers them for ``phoned show`` and ``GET /v1/tasks/{id}``, with the
exact ``phoned approve``/``phoned deny`` lines (revision, digest and conversation quoted as
those verbs need them, shell-quoted so any value pastes safely).

Two marks say whether the preview still stands (SPEC §7): ``void`` when this preview
replaced one whose approval was void (the phone changed before the send; the outcome that
asked again says why), and ``stale`` when the daemon has seen the phone change since this
preview was shown (``approval_watch``): approving it then sends nothing
(``can_approve``: the resumed attempt asks again with a fresh preview), or, when the person
edited the draft, can only fail (``can_approve`` false: deny, then ``phoned rerun``).

The card names everything seed 000 asks of it: where the request came from
(``conversation_id``, ``source`` and the planner's own ``rationale``, verbatim: the HTML,
terminal and JSON renderings escape it, never this record), what will be done
(``effect``; for a setting, ``change``: ``zen_mode 0 (off) -> 1 (priority)``), to whom or
what (``target``), which data is used (``data``), and that a denial ends the task
(``after_denial``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from phoned.daemon.lifecycle.pause_evidence import latest_check
from phoned.daemon.rendering.values import iso

# What a denial means, on every card (seed 000: "whether it can continue after a denial").
AFTER_DENIAL = "a denial ends this task (stopped, approval_denied); it cannot continue"

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord


def _artifacts(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        return {}
    inner = body.get("evidence") if isinstance(body.get("evidence"), dict) else body
    found = inner.get("artifacts") if isinstance(inner, dict) else None
    return found if isinstance(found, dict) else {}


# A UI-tier step's screenshot cropped to the element it acts on (``ui_step.element_shot``):
# the card shows it rather than the whole screen.
ELEMENT_SHOT = "ui_element_screenshot"


def _screenshot_of(evidence: Sequence[dict[str, Any]], attempt: int) -> str | None:
    """The latest screenshot artifact of ``attempt`` (the pause snapshot's, when kept); the
    element's crop of a UI-tier step when there is one."""
    shot: str | None = None
    element: str | None = None
    for doc in evidence:
        if doc.get("attempt") != attempt:
            continue
        for name, value in _artifacts(doc.get("body")).items():
            if str(name) == ELEMENT_SHOT:
                element = str(value)
            elif "screenshot" in str(name):
                shot = str(value)
    return element or shot


def _asking_outcome(evidence: Sequence[dict[str, Any]], task: TaskRecord) -> dict[str, Any]:
    """The ``detail`` of the outcome that asked for the approval now pending (the latest one
    of the attempt whose preview digest is the task's approval digest); {} when none."""
    found: dict[str, Any] = {}
    for doc in evidence:
        body = doc.get("body")
        detail = body.get("detail") if isinstance(body, dict) else None
        if (
            doc.get("attempt") == task.attempt
            and isinstance(detail, dict)
            and detail.get("preview_digest") == task.approval_digest
        ):
            found = detail
    return found


def void_mark(evidence: Sequence[dict[str, Any]], task: TaskRecord) -> dict[str, Any] | None:
    """Why the approval before this preview was void, when this preview replaced it."""
    detail = _asking_outcome(evidence, task)
    if detail.get("approval_void") is not True:
        return None
    given = detail.get("voided")
    voided: dict[str, Any] = given if isinstance(given, dict) else {}
    why = str(voided.get("why") or "the approval given did not match the phone any more")
    return {
        "why": why,
        "changed": [str(c) for c in voided.get("changed") or []],
        "resume_check": voided.get("resume_check"),
        "message": f"The approval given before is void: {why}. This is a fresh preview of "
        "what the phone shows now; approve it again to go on.",
    }


def stale_mark(evidence: Sequence[dict[str, Any]], task: TaskRecord) -> dict[str, Any] | None:
    """What the daemon saw change on the phone since this preview was shown; None while
    nothing did (or nobody looked)."""
    check = latest_check(evidence, task)
    body = check.get("body") if check else None
    if not isinstance(body, dict) or body.get("decision") in (None, "continue"):
        return None
    changed = sorted(str(k) for k in body.get("diff") or {})
    fields = ", ".join(changed) or "the screen"
    can_approve = body.get("decision") != "stale"
    if can_approve:
        message = (
            f"Stale: the phone changed since this preview was shown ({fields}). Approving "
            "checks the phone again first: the task prepares its effect again and goes on "
            "only when the fresh preview is identical to this one (same digest); any "
            "difference asks for the fresh preview."
        )
    else:
        message = (
            f"Stale: the draft on the phone was edited since this preview was shown "
            f"({fields}): approving can only end the task stale_state while it is. Deny it "
            f"(nothing is sent), then phoned rerun {task.id} queues a new task that drafts "
            "it again."
        )
    return {
        "decision": body.get("decision"),
        "changed": changed,
        "checked_at": check.get("created_at") if check else None,
        "after_task": body.get("after_task"),
        "can_approve": can_approve,
        "message": message,
    }


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


def approval_card(task: TaskRecord, preview: dict[str, Any] | None) -> dict[str, Any]:
    """What the approval card shows besides the decision (seed 000): where the request came
    from, what will be done, to whom or what, with which data, and what a denial means;
    the ``rationale`` as the planner gave it (escaped by each rendering, not here)."""
    preview = preview or {}
    shown = preview.get("data")
    data: dict[str, Any] = shown if isinstance(shown, dict) else {}
    rationale = (task.spec or {}).get("rationale")
    return {
        "conversation_id": task.conversation_id,
        "source": task.source,
        "rationale": rationale if isinstance(rationale, str) else None,
        "effect": preview.get("effect"),
        "target": preview.get("target"),
        "change": data.get("change"),
        "data": data,
        "after_denial": AFTER_DENIAL,
        "can_continue_after_denial": False,
    }


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
        "deadline": task.approval_deadline,
        **approval_card(task, preview),
        "recipient": preview.get("target"),
        "contact": data.get("contact"),  # a contact's name as to: whose number it is
        "number_type": data.get("number_type"),
        "text": data.get("text"),
        "app": data.get("app"),
        "snapshot_digest": preview.get("snapshot_digest"),
        "screenshot": _screenshot_of(evidence, task.attempt),
        "approve_command": decision_command("approve", task, queue),
        "deny_command": decision_command("deny", task, queue),
        "void": void_mark(evidence, task),
        "stale": stale_mark(evidence, task),
    }


def approval_lines(pending: dict[str, Any]) -> list[str]:
    """The pending approval as text lines for ``phoned show``."""

    def show(value: Any) -> str:
        return "-" if value is None else str(value)

    return [
        "",
        "pending approval",
        f"  effect      {show(pending['effect'])}",
        *_what_lines(pending, show),
        f"  screenshot  {show(pending['screenshot'])}",
        f"  revision {pending['revision']}  digest {show(pending['digest'])}",
        f"  from        conversation {show(pending.get('conversation_id'))}, "
        f"source {show(pending.get('source'))}",
        *_rationale_lines(pending.get("rationale")),
        f"  if denied   {pending.get('after_denial') or AFTER_DENIAL}",
        f"  decide before {iso(pending['deadline']) or '-'}",
        *[f"  {mark['message']}" for mark in (pending.get("void"), pending.get("stale")) if mark],
        "  to approve:",
        f"    {pending['approve_command']}",
        "  to deny:",
        f"    {pending['deny_command']}",
    ]


def _rationale_lines(rationale: Any) -> list[str]:
    """The planner's rationale, verbatim (``repr``: quotes, newlines and control characters
    shown as escapes; the terminal rendering escapes what is left)."""
    if not isinstance(rationale, str):
        return []
    return [f"  rationale   {rationale!r}"]


def recipient_text(pending: dict[str, Any]) -> Any:
    """The recipient as a card shows it: ``Ivan Petrov (+79160000002, work)`` when a
    contact's name gave the number, else the recipient as it is (None when there is none)."""
    recipient = pending.get("recipient")
    if not pending.get("contact"):
        return recipient
    kind = f", {pending['number_type']}" if pending.get("number_type") else ""
    return f"{pending['contact']} ({'-' if recipient is None else recipient}{kind})"


def _what_lines(pending: dict[str, Any], show: Any) -> list[str]:
    """What will be done, to whom or what, with which data: a setting's change from what to
    what, a UI-tier step's action on an element of an app, or sms.send's recipient, text and
    app."""
    if pending.get("change") is not None:
        return [
            f"  target      {show(pending.get('target'))}",
            f"  change      {show(pending['change'])}",
        ]
    data = pending.get("data") or {}
    text = pending.get("text")
    if "action" in data and "element" in data:
        return [
            f"  app         {show(data.get('app'))}",
            f"  action      {show(data['action'])}{_step_data(data)}",
            f"  element     {_element_text(data['element'])}",
            *([f"  text        {text!r}"] if text is not None else []),
        ]
    return [
        f"  recipient   {show(recipient_text(pending))}",
        f"  text        {show(text)!r}" if text is not None else "  text        -",
        f"  app         {show(pending['app'])}",
    ]


def _element_text(element: Any) -> str:
    """A UI-tier step's element as a person recognises it: its words, its id, its
    description (each quoted as ``repr``; the terminal rendering escapes what is left)."""
    if not isinstance(element, dict):
        return "-"
    parts = [
        f"{name} {element[key]!r}"
        for name, key in (("label", "label"), ("id", "resource_id"), ("desc", "content_desc"))
        if element.get(key)
    ]
    return ", ".join(parts) or "-"


def _step_data(data: dict[str, Any]) -> str:
    """The step's data besides the element and a typed text: a swipe's direction, a key."""
    extra = {k: v for k, v in data.items() if k not in ("app", "action", "element", "text")}
    return f" ({', '.join(f'{k} {v}' for k, v in sorted(extra.items()))})" if extra else ""
