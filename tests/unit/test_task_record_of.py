"""``TaskRecord.of``: a record built from a dict of its fields without the dataclass's
``__init__`` (issue #35) is the record ``__init__`` builds, and stays frozen; a dict that
misses or adds a name goes through ``__init__`` and gets its defaults or its error."""

from __future__ import annotations

import dataclasses

import pytest
from phoned.daemon.lifecycle.records import Failure, StopSummary, TaskRecord
from phoned.daemon.lifecycle.states import FailureReason, TaskState


def _values() -> dict[str, object]:
    record = TaskRecord(
        id="t1", conversation_id="c1", method="dnd.set", params={"mode": "off"},
        device="emu-1", source="planner", state=TaskState.FAILED, state_version=3, revision=1,
        attempt=2, max_attempts=3, created_at=1.5, updated_at=2.25,
        failure=Failure(FailureReason.TIMEOUT, "no read-back"),
        stop_summary=StopSummary(("dnd.set",), ()), evidence_refs=("ev:1",),
        spec={"method": "dnd.set"},
    )  # fmt: skip
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(TaskRecord)}


def test_every_field_named_builds_the_record_init_builds() -> None:
    values = _values()
    built = TaskRecord.of(dict(values))
    assert built == TaskRecord(**values)
    assert built.ticket == TaskRecord(**values).ticket
    assert dataclasses.asdict(built) == dataclasses.asdict(TaskRecord(**values))
    assert dataclasses.replace(built, attempt=3).attempt == 3


def test_a_built_record_is_still_frozen() -> None:
    built = TaskRecord.of(_values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.state = TaskState.QUEUED  # type: ignore[misc]


def test_a_missing_name_gets_its_default_from_init() -> None:
    values = _values()
    del values["run_timeout_s"], values["spec"]
    built = TaskRecord.of(values)
    assert built.run_timeout_s == 600.0 and built.spec == {}


def test_an_unknown_or_missing_required_name_is_refused_by_init() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        TaskRecord.of({**_values(), "colour": "red"})
    values = _values()
    del values["method"]
    with pytest.raises(TypeError, match="method"):
        TaskRecord.of(values)
