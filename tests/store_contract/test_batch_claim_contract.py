"""``claim_batch``: a daemon with several idle phones claims for all of them at once.

Over SQLite (one transaction), PostgreSQL (one statement, ``phoned_claim``) and HTTP (the
plane has no batch claim: ``HttpStore`` sends one claim per phone, and a daemon on a plane
keeps one long-poll per worker). Each pair gets at most one task, device-bound tasks go
only to their device, any-device tasks to the first phone that reaches them, and no task
is handed out twice.
"""

from __future__ import annotations

import time

from contract_specs import spec
from served_plane import Queue

from phoned.daemon.lifecycle.states import TaskState

PHONES = ("SERIAL-A", "SERIAL-B", "SERIAL-C")


def _owners(daemon: str = "daemon-1") -> list[tuple[str, str]]:
    return [(f"{daemon}/{serial}", serial) for serial in PHONES]


def test_one_batch_leases_one_task_per_phone_respecting_devices(queue: Queue) -> None:
    now = time.time()
    anyone = queue.planner.submit(spec(), now)
    for_a = queue.planner.submit(spec(device="SERIAL-A"), now + 0.001)
    for_c = queue.planner.submit(spec(device="SERIAL-C"), now + 0.002)
    for_other = queue.planner.submit(spec(device="OTHER"), now + 0.003)
    leased = queue.worker.claim_batch(_owners(), time.time(), lease_s=120)
    by_owner = {t.lease_owner: t for t in leased}
    # in order: A takes the oldest it may run (the any-device task), B finds nothing it may
    # run (SERIAL-A's and SERIAL-C's tasks are not its), C takes its own
    assert {o: t.id for o, t in by_owner.items()} == {
        "daemon-1/SERIAL-A": anyone.id,
        "daemon-1/SERIAL-C": for_c.id,
    }
    assert all(t.state is TaskState.DISPATCHED and t.attempt == 1 for t in leased)
    assert by_owner["daemon-1/SERIAL-A"].device == "SERIAL-A"
    assert queue.worker.get(for_a.id).state is TaskState.QUEUED
    assert queue.worker.get(for_other.id).state is TaskState.QUEUED
    # the next batch gives SERIAL-A its own task; nothing is left for B or C
    again = queue.worker.claim_batch(_owners(), time.time(), lease_s=120)
    assert [(t.lease_owner, t.id) for t in again] == [("daemon-1/SERIAL-A", for_a.id)]
    assert queue.worker.claim_batch(_owners(), time.time()) == []


def test_a_batch_never_hands_one_task_out_twice(queue: Queue) -> None:
    only = queue.planner.submit(spec(), time.time())
    leased = queue.worker.claim_batch(_owners(), time.time())
    assert [t.id for t in leased] == [only.id]
    assert queue.worker.claim("daemon-2/SERIAL-A", "SERIAL-A", time.time()) is None


def test_a_batch_leases_as_many_tasks_as_phones_and_announces_each(queue: Queue) -> None:
    submitted = [queue.planner.submit(spec(), time.time() + i * 0.001) for i in range(5)]
    leased = queue.worker.claim_batch(_owners(), time.time())
    assert [t.id for t in leased] == [t.id for t in submitted[:3]]
    assert [t.lease_owner for t in leased] == [owner for owner, _ in _owners()]
    assert [t.device for t in leased] == list(PHONES)
    for task in leased:  # each lease is a task event like a single claim's
        assert queue.worker.get(task.id).state_version == task.state_version
    assert queue.planner.queue_status()["queued"] == 2
