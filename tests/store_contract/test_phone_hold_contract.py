"""The phone hold contract (one driver per phone, ``phoned.daemon.store.holds``), over every store.

SQLite, PostgreSQL and HTTP (``HttpStore`` against ``phoned serve``'s app; the plane times
holds by its own clock). Also the per-phone ``recover`` a worker runs once it holds its
phone.
"""

from __future__ import annotations

import time

import pytest
from contract_specs import spec
from served_plane import Queue

from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.store.holds import Holder, live

SERIAL = "10.0.0.7:5555"  # a network phone: the case two hosts share


def _want(holder: str = "daemon-a", host: str = "host-a", pid: int = 100, hold_s: float = 60):
    at = time.time()
    return Holder(SERIAL, holder, host, pid, "phoned run", at, at + hold_s)


def test_a_free_phone_is_held_and_every_reader_names_the_holder(queue: Queue) -> None:
    got = queue.worker.hold_phone(_want())
    assert got.same_holder(_want())
    assert (got.serial, got.command) == (SERIAL, "phoned run")
    assert got.expires_at > time.time() + 30
    for reader in (queue.worker, queue.planner):
        (row,) = live(reader.phone_holds(), time.time()).values()
        assert row.same_holder(_want()) and row.host == "host-a"


def test_another_holder_is_refused_and_told_who_holds_it(queue: Queue) -> None:
    queue.worker.hold_phone(_want())
    refused = queue.worker.hold_phone(_want("daemon-b", "host-b", 200))
    assert refused.same_holder(_want())  # the first holder's row, unchanged
    assert "daemon daemon-a on host host-a, pid 100" in refused.describe()
    (row,) = queue.planner.phone_holds()
    assert row.holder == "daemon-a"


def test_a_renewal_keeps_since_and_moves_the_expiry(queue: Queue) -> None:
    first = queue.worker.hold_phone(_want())
    time.sleep(0.05)
    renewed = queue.worker.hold_phone(_want())
    assert renewed.since == first.since
    assert renewed.expires_at > first.expires_at


def test_a_restart_of_the_same_daemon_takes_its_own_hold_back_at_once(queue: Queue) -> None:
    queue.worker.hold_phone(_want(pid=100))
    again = queue.worker.hold_phone(_want(pid=101))  # same id and host, the process is new
    assert again.same_holder(_want(pid=101))
    other_host = queue.worker.hold_phone(_want(host="host-b", pid=101))  # a copied state dir
    assert other_host.host == "host-a"


def test_release_frees_the_phone_and_only_the_holder_releases(queue: Queue) -> None:
    queue.worker.hold_phone(_want())
    queue.worker.release_phone(_want("daemon-b", "host-b", 200))  # not its hold: nothing
    assert [r.holder for r in queue.planner.phone_holds()] == ["daemon-a"]
    queue.worker.release_phone(_want())
    assert queue.planner.phone_holds() == []
    taken = queue.worker.hold_phone(_want("daemon-b", "host-b", 200))
    assert taken.same_holder(_want("daemon-b", "host-b", 200))


def test_an_expired_hold_is_free_for_anyone(queue: Queue) -> None:
    if queue.kind == "http":
        pytest.skip("the plane times holds by its own clock (5 s at least)")
    at = time.time()
    queue.worker.hold_phone(Holder(SERIAL, "daemon-a", "host-a", 100, "phoned run", at - 90,
                                   at - 30))  # fmt: skip
    assert live(queue.planner.phone_holds(), at) == {}
    taken = queue.worker.hold_phone(_want("daemon-b", "host-b", 200))
    assert taken.same_holder(_want("daemon-b", "host-b", 200))
    assert taken.since >= at


def test_recover_on_one_phone_leaves_the_daemons_other_phones_alone(queue: Queue) -> None:
    queue.planner.submit(spec(device="SERIAL1"), time.time())
    queue.planner.submit(spec(device="SERIAL2"), time.time())
    one = queue.worker.claim("daemon-1/SERIAL1", "SERIAL1", time.time())
    two = queue.worker.claim("daemon-1/SERIAL2", "SERIAL2", time.time())
    assert one is not None and two is not None
    (recovered,) = queue.worker.recover("daemon-1/", time.time(), device="SERIAL1")
    assert recovered.id == one.id and recovered.state is TaskState.QUEUED
    assert recovered.failure is not None
    assert recovered.failure.reason is FailureReason.RUNTIME_RECOVERY
    assert queue.planner.get(two.id).state is TaskState.DISPATCHED
