"""A step handed to the person (``waiting_for`` = ``person:PACKAGE:UNTIL``, ``ui.handoff``)
as a person, a planner or a monitor sees it: "waiting for you", the planner's instruction,
the app, until when, and the screen the person was handed (``handoff_before_screenshot``,
input fields blanked; ``device/methods/ui_handoff.py``).

The instruction is the planner's words, stored as given: each rendering escapes it (the
terminal report's lines are escaped, the monitor sets it as text, JSON carries a string).
It is never run. What the person enters is never in it: phoned never reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from phoned.daemon.lifecycle.waiting import WaitKind

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord

SCREEN_ARTIFACT = "handoff_before_screenshot"  # the screen the person was handed


def pending_person(
    task: TaskRecord, evidence: Sequence[dict[str, Any]] = ()
) -> dict[str, Any] | None:
    """The step waiting for the person, or None when ``task`` waits for no such step."""
    waiting = task.waiting
    if task.terminal or waiting is None or waiting.kind is not WaitKind.PERSON:
        return None
    instruction = str(task.params.get("instruction", ""))
    screen = None  # the artifact as stored: a path in the daemon's folder, or a plane's ref
    for doc in evidence:
        body = doc.get("body")
        inner = body.get("evidence") if isinstance(body, dict) else None
        artifacts = inner.get("artifacts") if isinstance(inner, dict) else None
        if isinstance(artifacts, dict) and artifacts.get(SCREEN_ARTIFACT):
            screen = str(artifacts[SCREEN_ARTIFACT])
    return {
        "kind": "person",
        "package": waiting.package,
        "instruction": instruction,
        "expect": task.params.get("expect"),
        "until": waiting.until,
        "ttl_s": task.params.get("ttl_s"),
        "screen": screen,
        "message": f"waiting for you on the phone, in {waiting.package}: {instruction}",
        "after": "phoned goes on when it observes the expectation on the screen; another app "
        "in front ends the task stale_state, the TTL timeout. phoned never taps, types or "
        "reads what you enter.",
    }


def person_lines(pending: dict[str, Any]) -> list[str]:
    """The text card of ``phoned show``: the instruction, quoted as the planner wrote it."""
    return [
        "",
        "waiting for you",
        f"  app: {pending['package']}",
        f"  instruction: {pending['instruction']!r}",
        f"  until: {pending['until']} (TTL {pending['ttl_s']} s)",
        f"  screen: {pending['screen'] or '(not kept)'}",
        f"  {pending['after']}",
    ]
