"""The monitor shows a task waiting for a choice of ``to`` (issue #26 item 2), in a real
headless Chromium: a simulated phone whose book holds two "Ivan Petrov", ``phoned serve`` and
``phoned run --queue http://…`` (``stacks.monitor_stack``). The task's detail lists the
candidates with their ``phoned amend`` lines for a planner (the same document a bound viewer
gets redacted: ``unit/test_choice_plane.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cdp_client import Chromium
from stacks import Stack, monitor_stack, sign_in

pytestmark = pytest.mark.integration

NUMBERS = ("+79160000001", "+79160000002")


@pytest.fixture
def stack(tmp_path: Path, adb_server: Any, sim_factory: Any) -> Iterator[Stack]:
    sim = sim_factory(sdk=34)
    sim.phone.contacts.add("Ivan Petrov", NUMBERS[0], 2)
    sim.phone.contacts.add("Ivan Petrov", NUMBERS[1], 3, separate=True)
    with monitor_stack(tmp_path, adb_server.env, sim, "choice-d1") as made:
        yield made


def test_the_task_detail_lists_the_candidates_and_their_amend_lines(
    stack: Stack, chromium: Chromium
) -> None:
    task = {"conversation_id": "conv-ivan", "device": stack.serial, "method": "sms.send",
            "params": {"to": "Ivan Petrov", "body": "See you at 8"}}  # fmt: skip
    answer = stack.call("planner", "POST", "/v1/tasks", json=task)
    assert answer.status_code == 201, answer.text
    task_id = str(answer.json()["task"]["id"])
    assert stack.wait_state(task_id, ("waiting",))["waiting_for"] == "choice:to"

    page = chromium.page()
    sign_in(page, f"{stack.url}/monitor#task={task_id}", stack.tokens["planner"])
    card = "document.querySelector('#evidence .card.choice')"
    page.wait_for(f"!!{card} && {card}.querySelectorAll('li').length === 2", timeout=60)
    text = page.evaluate(f"{card}.textContent")
    assert "waiting for a choice of to" in text
    for number in NUMBERS:
        assert number in text and f"--param to={number}" in text
    lines = page.evaluate(f"[...{card}.querySelectorAll('code')].map(c => c.textContent)")
    assert all(line.startswith(f"phoned amend {task_id} ") for line in lines), lines
    assert json.dumps(lines).count("contact=Ivan Petrov") == 2
