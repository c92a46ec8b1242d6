"""Issue 34 (pure parts of ``ui.handoff``): the input fields blanked in a kept screen, what
the task waits for and its text form, the TTL the sweeper ends (final ``timeout``), and the
card the person is shown."""

from __future__ import annotations

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.lifecycle.waiting import WaitingFor, WaitKind
from phoned.daemon.rendering.person_view import pending_person, person_lines
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.store.sweeper import sweep
from phoned.device import ui_hierarchy

T0 = 10_000.0
NOTES = "com.example.notes"
# the shape uiautomator's AccessibilityNodeInfoDumper writes (every node has ``password``)
XML = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    f'<node index="0" text="" class="android.widget.FrameLayout" package="{NOTES}" '
    'password="false" bounds="[0,0][1080,2400]">'
    f'<node index="0" text="code 739154" resource-id="{NOTES}:id/note_text" '
    f'class="android.widget.EditText" package="{NOTES}" password="false" '
    'bounds="[40,300][1040,420]" />'
    f'<node index="1" text="s3cret" resource-id="{NOTES}:id/pin" class="android.view.View" '
    f'package="{NOTES}" password="true" bounds="[40,440][1040,560]" />'
    f'<node index="2" text="Save" resource-id="{NOTES}:id/save_button" '
    f'class="android.widget.Button" package="{NOTES}" password="false" '
    'bounds="[40,600][400,700]" />'
    "</node></hierarchy>"
)


def test_input_fields_lose_their_text_and_their_bounds_are_named() -> None:
    blanked, fields = ui_hierarchy.blank_inputs(XML)
    assert "739154" not in blanked and "s3cret" not in blanked
    assert 'text="Save"' in blanked  # what is not an input field stays
    assert fields == [(40, 300, 1040, 420), (40, 440, 1040, 560)]
    nodes = ui_hierarchy.parse_nodes(blanked)
    assert [n.text for n in nodes] == ["", "", "", "Save"]


def test_the_wait_names_the_app_and_the_end_of_the_ttl() -> None:
    wait = WaitingFor(WaitKind.PERSON, package=NOTES, until=12345)
    assert wait.text == f"person:{NOTES}:12345"
    assert WaitingFor.parse(wait.text) == wait


def _handed(store: SqliteStore, until: int) -> str:
    params = {"package": NOTES, "instruction": "Tap Save <b>now</b>", "ttl_s": 60,
              "expect": {"appears": {"resource_id": f"{NOTES}:id/saved_count"}}}  # fmt: skip
    store.submit(
        validate_task({"method": "ui.handoff", "params": params, "conversation_id": "c"}), T0
    )
    task = store.claim("d/w0", "S", T0, lease_s=3600)
    assert task is not None
    task = store.start(task.ticket, T0)
    store.pause(task.ticket, TaskState.WAITING, T0 + 1, waiting_for=f"person:{NOTES}:{until}")
    return task.id


def test_the_ttl_ends_the_step_timeout_and_it_is_not_retried(store: SqliteStore) -> None:
    task_id = _handed(store, until=int(T0) + 61)
    assert sweep(store, T0 + 61) == []
    [swept] = sweep(store, T0 + 62)
    assert swept.id == task_id and swept.state is TaskState.FAILED and swept.attempt == 1
    assert swept.failure is not None and swept.failure.reason is FailureReason.TIMEOUT
    assert "TTL (60 s)" in swept.failure.message


def test_another_wait_is_never_swept(store: SqliteStore) -> None:
    store.submit(validate_task({"method": "dnd.get", "params": {}, "conversation_id": "c"}), T0)
    task = store.claim("d/w0", "S", T0, lease_s=3600)
    assert task is not None
    task = store.start(task.ticket, T0)
    store.pause(task.ticket, TaskState.WAITING, T0 + 1, waiting_for="unlock")
    assert sweep(store, T0 + 10_000) == []


def test_the_card_says_waiting_for_you_with_the_instruction_as_written(
    store: SqliteStore,
) -> None:
    task_id = _handed(store, until=int(T0) + 61)
    card = pending_person(store.get(task_id), [])
    assert card is not None
    assert (card["package"], card["instruction"]) == (NOTES, "Tap Save <b>now</b>")
    assert card["until"] == int(T0) + 61 and card["ttl_s"] == 60
    assert card["message"].startswith("waiting for you on the phone")
    lines = person_lines(card)
    assert "waiting for you" in lines and "  instruction: 'Tap Save <b>now</b>'" in lines
    resumed = store.resume(task_id, "c", T0 + 2)  # the watcher saw it done: no card any more
    assert resumed.state is TaskState.QUEUED and pending_person(resumed, []) is None
