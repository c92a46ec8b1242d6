"""Seed 000 checklist: identity, state, isolation, order, recovery.

Two conversations interleaved on one device: A prepares an SMS that waits for
approval, B checks Bluetooth and sets DND and hits a missing permission.
"""

from __future__ import annotations

import pytest

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.errors import ApprovalMismatch, ConversationMismatch
from phoned.daemon.lifecycle.records import Preview
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.store.sqlite_store import SqliteStore

T0 = 5_000.0
SERIAL = "emulator-5554"


def _submit(store: SqliteStore, conv: str, method: str, params: dict, at: float) -> str:
    raw = {"method": method, "params": params, "conversation_id": conv, "device": SERIAL}
    return store.submit(validate_task(raw), at).id


def test_two_conversations_interleaved_on_one_device(store: SqliteStore) -> None:
    sms = _submit(store, "A", "sms.send", {"to": "+79161234567", "body": "Буду через 10 минут"}, T0)
    bt = _submit(store, "B", "bluetooth.get", {}, T0 + 1)
    dnd = _submit(store, "B", "dnd.set", {"mode": "priority"}, T0 + 2)

    # order: oldest first, one at a time on the device
    a = store.claim("d/w0", SERIAL, T0 + 3)
    assert a is not None and a.id == sms
    a = store.start(a.ticket, T0 + 4)
    preview_a = Preview(
        sms, "A", "sms.send", "+79161234567", {"body": "Буду через 10 минут"}, "sha256:screen-a"
    )
    store.request_approval(a.ticket, preview_a, T0 + 5)

    # state: approval does not block conversation B
    b1 = store.claim("d/w0", SERIAL, T0 + 6)
    assert b1 is not None and b1.id == bt
    store.complete(store.start(b1.ticket, T0 + 7).ticket, T0 + 8, "bluetooth.on", ("ev:1",))
    b2 = store.claim("d/w0", SERIAL, T0 + 9)
    assert b2 is not None and b2.id == dnd
    b2 = store.start(b2.ticket, T0 + 10)
    store.pause(b2.ticket, TaskState.PERMISSION, T0 + 11, waiting_for="dnd_access")

    # isolation: B cannot approve or resume A's task; A cannot resume B's
    with pytest.raises(ConversationMismatch):
        store.approve(sms, "B", 1, preview_a.digest, T0 + 12)
    with pytest.raises(ConversationMismatch):
        store.resume(dnd, "A", T0 + 12)
    # a preview from B's context never approves A's task
    preview_b = Preview(dnd, "B", "dnd.set", "zen_mode", {"mode": "priority"}, "sha256:screen-b")
    with pytest.raises(ApprovalMismatch):
        store.approve(sms, "A", 1, preview_b.digest, T0 + 12)

    # identity: every task names its conversation, method and target data
    statuses = {t.id: (t.conversation_id, t.method, t.state) for t in store.list_tasks()}
    assert statuses == {
        sms: ("A", "sms.send", TaskState.APPROVAL),
        bt: ("B", "bluetooth.get", TaskState.COMPLETED),
        dnd: ("B", "dnd.set", TaskState.PERMISSION),
    }

    # recovery: permission granted -> B's task resumes the same attempt on a fresh claim
    store.resume(dnd, "B", T0 + 13)
    again = store.claim("d/w0", SERIAL, T0 + 14)
    assert again is not None and again.id == dnd and again.attempt == 1
    # and A still waits for its own approval, untouched
    assert store.get(sms).state is TaskState.APPROVAL


def test_waiting_is_not_success_failure_or_consent(store: SqliteStore) -> None:
    sms = _submit(store, "A", "sms.send", {"to": "+79161234567", "body": "hi"}, T0)
    task = store.start(store.claim("d/w0", SERIAL, T0 + 1).ticket, T0 + 2)  # type: ignore[union-attr]
    store.pause(task.ticket, TaskState.WAITING, T0 + 3, waiting_for="input")
    waiting = store.get(sms)
    assert waiting.state is TaskState.WAITING and waiting.failure is None
    assert waiting.approval_status is None
    [event] = [e for e in store.events() if e.task_id == sms and e.state == "waiting"]
    assert event.requires_decision is True


def test_stopped_task_does_not_silently_continue(store: SqliteStore) -> None:
    dnd = _submit(store, "B", "dnd.set", {"mode": "off"}, T0)
    task = store.start(store.claim("d/w0", SERIAL, T0 + 1).ticket, T0 + 2)  # type: ignore[union-attr]
    store.pause(task.ticket, TaskState.WAITING, T0 + 3, waiting_for="unlock")
    stopped = store.cancel(dnd, "B", T0 + 4)
    assert stopped.state is TaskState.STOPPED and stopped.stop_summary is not None
    assert stopped.stop_summary.not_done == ("dnd.set",)
    assert store.claim("d/w0", SERIAL, T0 + 60) is None
