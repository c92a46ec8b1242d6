"""``wire.plain``: a record as JSON values, the form every answer of the plane carries.

Its fast path hands back str, int, float, bool and None as they are (issue #35); an enum
that is also a str (``TaskState``, ``FailureReason``) must still become its value, tuples
lists, nested records dicts, and the wire form must read back to the same record.
"""

from __future__ import annotations

import json

from phoned.daemon.lifecycle.records import Failure, StopSummary, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.lifecycle.wire import plain, task_from


def _record() -> TaskRecord:
    return TaskRecord(
        id="t1", conversation_id="c1", method="dnd.set", params={"mode": "off", "n": [1, 2.5]},
        device="emu-1", source="planner", state=TaskState.FAILED, state_version=3, revision=1,
        attempt=2, max_attempts=3, created_at=1.5, updated_at=2.25,
        failure=Failure(FailureReason.TIMEOUT, "no read-back"), stop_requested=True,
        stop_summary=StopSummary(("dnd.set",), ("read-back",)), evidence_refs=("ev:1", "ev:2"),
        lease_until=None, spec={"method": "dnd.set"},
    )  # fmt: skip


def _types(value: object) -> set[type]:
    if isinstance(value, dict):
        return {dict}.union(*(_types(v) for v in value.values()))
    if isinstance(value, list):
        return {list}.union(*(_types(v) for v in value))
    return {type(value)}


def test_a_record_is_json_values_only_and_enums_are_their_values() -> None:
    doc = plain(_record())
    assert _types(doc) <= {dict, list, str, int, float, bool, type(None)}
    assert type(doc["state"]) is str and doc["state"] == "failed"
    assert doc["failure"] == {"reason": "timeout", "message": "no read-back", "retryable": True}
    assert doc["stop_summary"] == {"done": ["dnd.set"], "not_done": ["read-back"]}
    assert doc["evidence_refs"] == ["ev:1", "ev:2"]
    assert json.loads(json.dumps(doc)) == doc


def test_the_wire_form_reads_back_to_the_same_record() -> None:
    record = _record()
    assert task_from(json.loads(json.dumps(plain(record)))) == record
