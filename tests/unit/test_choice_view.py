"""How a choice and a contact's name are shown (``daemon/rendering/choice_view.py``,
``approval_view``, the MCP question): candidates rebuilt in clear from the task's params, each
answer a shell-safe ``phoned amend`` line whatever the name holds, the card naming the
contact with the number."""

from __future__ import annotations

import shlex
from types import SimpleNamespace
from typing import Any

from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.mcp.server import question
from phoned.daemon.rendering.approval_view import approval_lines, recipient_text
from phoned.daemon.rendering.choice_view import choice_lines, pending_choice
from phoned.device import private

NAME = "O'Brien $(reboot); `id`"


def _task(**kw: Any) -> Any:
    fields = {"id": "t" * 32, "conversation_id": "conv-1", "method": "sms.send",
              "params": {"to": NAME, "body": "hi there"}, "state": TaskState.WAITING,
              "waiting_for": "choice:to", "attempt": 1, "source": "cli", "spec": {},
              "revision": 1, "approval_digest": "sha256:abc"}  # fmt: skip
    return SimpleNamespace(**{**fields, **kw})


def _evidence(*numbers: str) -> list[dict[str, Any]]:
    candidates = [
        {"display_name": NAME, "contact_id": n, "number": number, "type": 2,
         "type_name": "mobile", "label": None}
        for n, number in enumerate(numbers, 1)
    ]  # fmt: skip
    stored = private.scrub({"choice": "to", "candidates": candidates}, [NAME, "hi there"])
    return [{"kind": "outcome", "attempt": 1, "body": {"status": "waiting", "detail": stored}}]


def test_the_candidates_are_rebuilt_in_clear_and_each_answer_pastes_safely() -> None:
    evidence = _evidence("+79160000001", "+79160000002")
    assert NAME not in str(evidence)  # evidence keeps the name redacted
    shown = pending_choice(_task(), evidence, "sqlite:///q.db")
    assert shown is not None and shown["field"] == "to"
    [first, second] = shown["candidates"]
    assert first["display_name"] == NAME and second["number"] == "+79160000002"
    assert second["amend"] == {"to": "+79160000002", "contact": NAME}
    argv = shlex.split(second["amend_command"])
    assert argv == ["phoned", "amend", "t" * 32, "--param", "to=+79160000002",
                    "--param", f"contact={NAME}", "--conversation", "conv-1",
                    "--queue", "sqlite:///q.db"]  # fmt: skip
    lines = choice_lines(shown)
    assert lines[1].startswith("waiting for a choice of to") and len(lines) == 6


def test_no_choice_unless_the_task_waits_for_one() -> None:
    evidence = _evidence("+79160000001", "+79160000002")
    assert pending_choice(_task(waiting_for="unlock"), evidence) is None
    assert pending_choice(_task(state=TaskState.QUEUED, waiting_for=None), evidence) is None
    assert pending_choice(_task(attempt=2), evidence)["candidates"] == []  # another attempt's


def test_the_card_and_the_question_name_the_contact_with_the_number() -> None:
    preview = {"effect": "sms.send", "target": "+79160000002",
               "data": {"text": "hi", "app": "com.example.sms", "contact": "Ivan Petrov",
                        "number_type": "work"}}  # fmt: skip
    pending = {
        "effect": "sms.send", "recipient": "+79160000002", "contact": "Ivan Petrov",
        "number_type": "work", "text": "hi", "app": "com.example.sms", "screenshot": None,
        "revision": 2, "digest": "sha256:abc", "deadline": None, "conversation_id": "conv-1",
        "source": "cli", "approve_command": "phoned approve t", "deny_command": "phoned deny t",
    }  # fmt: skip
    assert "  recipient   Ivan Petrov (+79160000002, work)" in approval_lines(pending)
    assert "to:     Ivan Petrov (+79160000002, work)" in question(_task(), preview)
    plain = {**pending, "contact": None, "number_type": None}
    assert "  recipient   +79160000002" in approval_lines(plain)
    assert recipient_text(pending) == "Ivan Petrov (+79160000002, work)"  # the HTML card's too
    assert recipient_text(plain) == "+79160000002"


def test_a_ui_selector_choice_is_answered_with_the_candidates_index() -> None:
    selector = {"text": "Tag"}
    task = _task(method="ui.tap", params={"package": "com.example.notes", "selector": selector},
                 waiting_for="choice:selector")  # fmt: skip
    candidates = [{"index": i, "text": "Tag", "resource_id": "com.example.notes:id/tag_button"}
                  for i in range(2)]  # fmt: skip
    evidence = [{"kind": "outcome", "attempt": 1,
                 "body": {"detail": {"choice": "selector", "candidates": candidates}}}]  # fmt: skip
    shown = pending_choice(task, evidence)
    assert shown is not None
    second = shown["candidates"][1]
    assert second["amend"] == {"selector": {"text": "Tag", "index": 1}}
    argv = shlex.split(second["amend_command"])
    assert argv[3:5] == ["--param", 'selector={"text": "Tag", "index": 1}']
    lines = choice_lines(shown)
    assert any('"resource_id": "com.example.notes:id/tag_button"' in line for line in lines)
