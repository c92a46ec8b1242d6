"""``on_write``: every SQL store tells its observer (the metrics) of each committed task
write, the record before and after, claims included.

PostgreSQL's claim is one function call that reads and leases the row on the server; until
``0011_lease_pre_image.sql`` it returned only the leased row and the store told nothing
of its claims, so a PostgreSQL fleet counted no claims and no pickup latency. Both stores
now hand the observer the very records their verbs return (built once, issue #35).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from contract_specs import spec
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.daemon.runtime.metrics import PhonedMetrics
from phoned.daemon.store.sql_store import SqlStore

Heard = list[tuple[TaskRecord | None, TaskRecord]]


@pytest.fixture
def heard(store: SqlStore) -> Iterator[Heard]:
    """What ``store``'s observer is told, in order."""
    told: Heard = []
    store.on_write = lambda before, after: told.append((before, after))
    yield told
    store.on_write = None


def test_a_submit_and_its_claim_are_told_with_the_records_the_verbs_return(
    store: SqlStore, heard: Heard
) -> None:
    task = store.submit(spec(device="SERIAL-A"), time.time())
    queued = store.get(task.id)
    claimed = store.claim("daemon-1/SERIAL-A", "SERIAL-A", time.time(), lease_s=60)
    assert claimed is not None and claimed.state is TaskState.DISPATCHED
    assert heard == [(None, task), (queued, claimed)]
    assert heard[0][1] is task and heard[1][1] is claimed  # built once, not again for it


def test_each_lease_of_a_batch_is_told_with_its_queued_row(store: SqlStore, heard: Heard) -> None:
    first = store.submit(spec(), time.time())
    second = store.submit(spec(), time.time() + 0.001)
    before = {t.id: store.get(t.id) for t in (first, second)}
    del heard[:]
    owners = [("daemon-1/SERIAL-A", "SERIAL-A"), ("daemon-1/SERIAL-B", "SERIAL-B")]
    leased = store.claim_batch(owners, time.time(), lease_s=60)
    assert sorted(t.id for t in leased) == sorted(before)
    assert heard == [(before[t.id], t) for t in leased]
    assert all(after is lease for (_, after), lease in zip(heard, leased, strict=True))


def test_nothing_claimable_and_a_refused_write_tell_nothing(store: SqlStore, heard: Heard) -> None:
    assert store.claim("daemon-1/SERIAL-A", "SERIAL-A", time.time()) is None
    assert store.claim_batch([("daemon-1/SERIAL-A", "SERIAL-A")], time.time()) == []
    task = store.submit(spec(device="SERIAL-B"), time.time())
    del heard[:]
    assert store.claim("daemon-1/SERIAL-A", "SERIAL-A", time.time(), task_id=task.id) is None
    assert heard == []


def test_the_metrics_count_every_stores_claims_and_their_pickup(store: SqlStore) -> None:
    metrics = PhonedMetrics(process=False)
    store.on_write = metrics.written
    submitted = time.time()
    store.submit(spec(device="SERIAL-A"), submitted)
    store.submit(spec(device="SERIAL-B"), submitted)
    store.claim("daemon-1/SERIAL-A", "SERIAL-A", submitted + 2.0)
    store.claim_batch([("daemon-1/SERIAL-B", "SERIAL-B")], submitted + 3.0)
    sample = metrics.registry.get_sample_value
    assert sample("phoned_claims_total", {"device": "SERIAL-A"}) == 1
    assert sample("phoned_claims_total", {"device": "SERIAL-B"}) == 1
    assert (
        sample("phoned_task_transitions_total", {"method": "dnd.set", "state": "dispatched"}) == 2
    )
    assert sample("phoned_pickup_latency_seconds_count", {"method": "dnd.set"}) == 2
    # queued at ``submitted``, claimed 2 s and 3 s later
    assert sample("phoned_pickup_latency_seconds_sum", {"method": "dnd.set"}) == pytest.approx(5.0)
    assert set(metrics.last_claims()) == {"SERIAL-A", "SERIAL-B"}
