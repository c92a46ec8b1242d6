"""``HttpStore`` (the daemon's side) and ``PlaneClient`` (the planner's) against a real
``phoned serve`` process (uvicorn on a free loopback port).

The daemon's whole attempt through the API; long-poll pickup; an outage of the control
plane mid-task with the reports spooled and delivered in order after it comes back (and
after a daemon restart); two replicas over one SQLite file with several daemons claiming.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.errors import GuardError, StoreUnavailable
from phoned.daemon.lifecycle.records import Failure, JournalOutcome
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.runtime.executor import ExecutorSettings
from phoned.daemon.runtime.worker import Worker, WorkerSettings
from phoned.daemon.store.http_store import HttpStore, PlaneLink
from phoned.daemon.store.plane_client import PlaneClient
from phoned.daemon.store.wake import Alarm
from phoned.device.adb import AdbServer as DeviceAdbServer
from phoned.device.connection import Device
from planes import Grant, write_tokens
from postgres_server import fresh_schema_url, postgres_url  # noqa: F401 (session fixture)
from stacks import Serve

SERIAL = "emu-1"
OUTAGE_S = float(os.environ.get("PHONED_TEST_OUTAGE_S", "3"))


class Plane:
    def __init__(self, tmp: Path, queue: str | None = None) -> None:
        self.tmp = tmp
        self.queue = queue or f"sqlite:///{tmp / 'queue.db'}"
        self.tokens_path = tmp / "tokens.yaml"
        self.tokens = write_tokens(self.tokens_path, {
            "daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner"),
            "approver": Grant("approver")})  # fmt: skip
        self.servers: list[Serve] = []
        self.links: dict[tuple[str, str], PlaneLink] = {}  # one per daemon process and outbox
        self.clients: list[PlaneClient] = []

    def serve(self) -> Serve:
        server = Serve(self.tmp, self.tokens_path, self.queue, name=f"serve{len(self.servers)}")
        self.servers.append(server)
        server.start()
        return server

    def store(self, server: Serve, outbox: str = "outbox.db", **kw: float) -> HttpStore:
        """A daemon's worker store: a view of the link of (server, outbox)."""
        key = (server.url, outbox)
        if key not in self.links:
            self.links[key] = PlaneLink(server.url, self.tokens["daemon"], self.tmp / outbox)
        return HttpStore(self.links[key], **kw)

    def client(self, server: Serve) -> PlaneClient:
        self.clients.append(PlaneClient(server.url, self.tokens["planner"]))
        return self.clients[-1]

    def close(self) -> None:
        self.restart_daemons()
        for client in self.clients:
            client.close()

    def restart_daemons(self) -> None:
        """Close every link, as a daemon process ends: queued reports stay on disk."""
        links, self.links = list(self.links.values()), {}
        for link in links:
            link.close()


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[Plane]:
    made = Plane(tmp_path)
    try:
        yield made
    finally:
        made.close()
        for server in made.servers:
            server.stop()


def dnd_task(**extra: object) -> object:
    return validate_task(
        {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c1",
         "device": SERIAL, **extra}
    )  # fmt: skip


def test_a_whole_attempt_through_the_control_plane(plane: Plane) -> None:
    server = plane.serve()
    planner, daemon = plane.client(server), plane.store(server)
    task = planner.submit(dnd_task(completion_target="dnd.priority"), time.time())  # type: ignore[arg-type]
    claimed = daemon.claim(f"d1/{SERIAL}", SERIAL, time.time())
    assert claimed is not None and claimed.id == task.id and claimed.state is TaskState.DISPATCHED
    running = daemon.start(claimed.ticket, time.time())
    assert running.state is TaskState.RUNNING
    entry = daemon.journal_before(
        running.ticket, "op-1", "dnd.set", "zen_mode", "sha256:1", time.time()
    )
    assert entry.open
    daemon.journal_after("op-1", JournalOutcome.CONFIRMED_SUCCESS, "read back 1", time.time())
    ref = daemon.put_evidence(running.ticket, "outcome", {"status": "met"}, time.time())
    done = daemon.complete(running.ticket, time.time(), "dnd.priority", (ref,))
    assert done.state is TaskState.COMPLETED and ref in done.evidence_refs
    assert [e for e in daemon.journal(task.id) if e.open] == []
    assert [e["ref"] for e in planner.evidence(task.id)] == [ref]
    states = [e.state for e in planner.events(after=0, limit=100) if e.task_id == task.id]
    assert states == ["queued", "dispatched", "running", "completed"]
    assert daemon.pending_reports() == 0


def test_long_poll_pickup_is_well_under_a_second(plane: Plane) -> None:
    server = plane.serve()
    planner = plane.client(server)
    daemon = plane.store(server, idle_wait=20)
    stop, picked = threading.Event(), threading.Event()

    def worker() -> None:
        while not stop.is_set():
            if daemon.claim(f"d1/{SERIAL}", SERIAL, time.time()) is not None:
                picked.set()
                return
            daemon.wait_for_work(1.0, stop)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        time.sleep(1.5)  # the worker is idle in a long-poll now
        t0 = time.monotonic()
        planner.submit(dnd_task(), time.time())  # type: ignore[arg-type]
        assert picked.wait(5)
        assert time.monotonic() - t0 < 0.5
    finally:
        stop.set()
        thread.join(timeout=5)


def test_an_idle_wait_leases_the_task_and_the_next_claim_takes_it_unasked(plane: Plane) -> None:
    """Issue #35: the idle wait is the claim itself, so a pickup costs one round trip."""
    server = plane.serve()
    planner, daemon = plane.client(server), plane.store(server, idle_wait=20)
    owner = f"d1/{SERIAL}"
    assert daemon.claim(owner, SERIAL, time.time()) is None  # the claim the wait long-polls
    sent: list[str] = []
    original = daemon._t.send

    def counting(method: str, path: str, **kw: object) -> object:
        sent.append(f"{method} {path}")
        return original(method, path, **kw)  # type: ignore[arg-type]

    daemon._t.send = counting  # type: ignore[method-assign]
    waiter = threading.Thread(target=daemon.wait_for_work, args=(1.0, threading.Event()))
    waiter.start()
    time.sleep(0.5)
    task = planner.submit(dnd_task(), time.time())  # type: ignore[arg-type]
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    claimed = daemon.claim(owner, SERIAL, time.time())
    assert claimed is not None and claimed.id == task.id
    assert claimed.state is TaskState.DISPATCHED and claimed.lease_owner == owner
    assert sent == ["POST /v1/claims"]  # the long-poll alone: no second round trip


def test_a_stopped_wait_withdraws_its_claim_and_leases_nothing(plane: Plane) -> None:
    server = plane.serve()
    planner, daemon = plane.client(server), plane.store(server, idle_wait=20)
    assert daemon.claim(f"d1/{SERIAL}", SERIAL, time.time()) is None
    alarm = Alarm()
    threading.Timer(0.5, alarm.set).start()
    began = time.monotonic()
    daemon.wait_for_work(1.0, alarm)  # the worker stops while its claim waits on the plane
    assert time.monotonic() - began < 5, "the stop did not end the waiting claim"
    task = planner.submit(dnd_task(), time.time())  # type: ignore[arg-type]
    time.sleep(0.5)
    assert planner.get(task.id).state is TaskState.QUEUED  # no stopped worker took it


def test_a_worker_stopped_as_its_wait_leased_a_task_runs_it(
    tmp_path: Path, adb_server: Any, sim_factory: Any
) -> None:
    """The plane answers a worker's waiting claim with a task just as the worker stops: the
    task is the worker's, and it still runs it to its end (not left leased, to be failed
    ``runtime_recovery`` by the next start)."""
    sim = sim_factory(sdk=34)
    tokens = write_tokens(tmp_path / "tokens.yaml", {
        "daemon": Grant("daemon", (sim.serial,)), "planner": Grant("planner")})  # fmt: skip
    server = Serve(tmp_path, tmp_path / "tokens.yaml").start()
    link = PlaneLink(server.url, tokens["daemon"], tmp_path / "outbox.db")
    planner = PlaneClient(server.url, tokens["planner"])
    waiting = threading.Event()
    workers: list[Worker] = []

    class StopsAsItLeases(HttpStore):
        def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
            waiting.set()
            super().wait_for_work(timeout, stop)  # the plane leases the task submitted now
            workers[0].stop()  # ... as the worker decides to stop

    device = Device(sim.serial, DeviceAdbServer(port=adb_server.port))
    settings = WorkerSettings(pause_check_interval=None)
    executor = ExecutorSettings(artifacts_dir=tmp_path / "artifacts")
    workers.append(Worker(lambda: StopsAsItLeases(link, idle_wait=20), device,
                          f"d1/{sim.serial}", settings, executor))  # fmt: skip
    thread = threading.Thread(target=workers[0].run)
    try:
        thread.start()
        assert waiting.wait(30), "the worker never became idle"
        time.sleep(0.3)  # its claim waits on the plane
        spec = {"method": "dnd.get", "conversation_id": "c1", "device": sim.serial}
        task = planner.submit(validate_task(spec), time.time())
        thread.join(timeout=30)
        assert not thread.is_alive(), "the stopped worker did not return"
        assert planner.get(task.id).state is TaskState.COMPLETED
    finally:
        workers[0].stop()
        thread.join(timeout=10)
        link.close()
        planner.close()
        server.stop()


def test_reports_survive_an_outage_and_a_daemon_restart_in_order(plane: Plane) -> None:
    server = plane.serve()
    planner = plane.client(server)
    daemon = plane.store(server, sync_wait=1)
    task = planner.submit(dnd_task(completion_target="dnd.priority"), time.time())  # type: ignore[arg-type]
    claimed = daemon.claim(f"d1/{SERIAL}", SERIAL, time.time())
    assert claimed is not None
    running = daemon.start(claimed.ticket, time.time())
    daemon.journal_before(running.ticket, "op-1", "dnd.set", "zen_mode", "sha256:1", time.time())

    server.stop()  # the control plane goes away mid-task
    t = running.ticket
    after = daemon.journal_after(
        "op-1", JournalOutcome.CONFIRMED_SUCCESS, "read back 1", time.time()
    )
    assert after.outcome is JournalOutcome.CONFIRMED_SUCCESS
    ref = daemon.put_evidence(t, "outcome", {"status": "met"}, time.time())
    assert ref.startswith("pending:")
    predicted = daemon.complete(t, time.time(), "dnd.priority", (ref,))
    assert predicted.state is TaskState.COMPLETED  # predicted, not yet acknowledged
    assert daemon.get(task.id).state is TaskState.COMPLETED  # last known record
    with pytest.raises(StoreUnavailable):
        daemon.claim(f"d1/{SERIAL}", SERIAL, time.time())  # claims nothing while reports wait
    assert daemon.pending_reports() == 3
    plane.restart_daemons()  # ... and the daemon restarts while the plane is still down

    time.sleep(OUTAGE_S)
    server.start()
    restarted = plane.store(server)
    deadline = time.monotonic() + 15
    while restarted.pending_reports() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert restarted.pending_reports() == 0
    final = plane.client(server).get(task.id)
    assert final.state is TaskState.COMPLETED and final.observed_target == "dnd.priority"
    evidence = plane.client(server).evidence(task.id)
    assert [e["ref"] for e in evidence] == list(final.evidence_refs)  # pending ref resolved
    journal = plane.client(server).journal(task.id)
    assert [j.outcome for j in journal] == [JournalOutcome.CONFIRMED_SUCCESS]
    events = [e for e in plane.client(server).events(0, 100) if e.task_id == task.id]
    assert [e.state for e in events] == ["queued", "dispatched", "running", "completed"]


def test_a_stale_report_queued_offline_is_refused_on_delivery_not_lost_silently(
    plane: Plane,
) -> None:
    server = plane.serve()
    planner, daemon = plane.client(server), plane.store(server)
    planner.submit(dnd_task(max_attempts=1), time.time())  # type: ignore[arg-type]
    claimed = daemon.claim(f"d1/{SERIAL}", SERIAL, time.time())
    assert claimed is not None
    daemon.start(claimed.ticket, time.time())
    daemon.fail(claimed.ticket, Failure(FailureReason.ACTION_ERROR, "boom"), time.time())
    with pytest.raises(GuardError):
        daemon.complete(claimed.ticket, time.time())  # a refusal reaches the caller


def test_two_replicas_and_four_daemons_never_double_claim(plane: Plane) -> None:
    _race_through_two_replicas(plane)


@pytest.mark.postgres
@pytest.mark.usefixtures("postgres_url")  # starts the session's throwaway server
def test_two_replicas_over_postgresql_never_double_claim(tmp_path: Path) -> None:
    made = Plane(tmp_path, queue=fresh_schema_url(f"replicas-{tmp_path.name}"))
    try:
        _race_through_two_replicas(made)
    finally:
        made.close()
        for server in made.servers:
            server.stop()


def _race_through_two_replicas(plane: Plane) -> None:
    """24 tasks, two ``serve`` replicas over one queue, four daemons: each claimed once."""
    replicas = [plane.serve(), plane.serve()]
    planner = plane.client(replicas[0])
    count = 24
    for _ in range(count):
        planner.submit(dnd_task(), time.time())  # type: ignore[arg-type]
    claimed: list[str] = []
    lock = threading.Lock()

    def daemon(index: int) -> None:
        store = plane.store(replicas[index % 2], outbox=f"outbox{index}.db")
        idle = 0
        while idle < 3:
            task = store.claim(f"d{index}/{SERIAL}", SERIAL, time.time())
            if task is None:
                idle += 1
                time.sleep(0.05)
                continue
            running = store.start(task.ticket, time.time())
            store.complete(running.ticket, time.time(), "dnd.priority", ("ev:1",))
            with lock:
                claimed.append(task.id)

    threads = [threading.Thread(target=daemon, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(claimed) == count and len(set(claimed)) == count
    queue = plane.client(replicas[1]).queue_status()
    assert queue["completed"] == count


def test_an_idle_worker_asks_once_per_idle_wait(plane: Plane) -> None:
    server = plane.serve()
    daemon = plane.store(server, idle_wait=1.0)
    sent: list[str] = []
    transport = daemon._t
    original = transport.send

    def counting(method: str, path: str, **kw: object) -> object:
        sent.append(f"{method} {path}")
        return original(method, path, **kw)  # type: ignore[arg-type]

    transport.send = counting  # type: ignore[method-assign]
    stop = threading.Event()

    def idle_worker() -> None:  # the Worker's idle round: claim, pause watch, wait
        while not stop.is_set():
            daemon.claim(f"d1/{SERIAL}", SERIAL, time.time())
            daemon.list_tasks(states=(TaskState.WAITING,), device=SERIAL)
            daemon.wait_for_work(0.1, stop)

    thread = threading.Thread(target=idle_worker)
    thread.start()
    time.sleep(1.5)  # warm-up: first cursor, first claim, first list
    before = len(sent)
    time.sleep(4.0)
    idle = sent[before:]
    stop.set()  # the waiting claim is withdrawn (DELETE /v1/claims)
    thread.join(timeout=5)
    transport.send = original  # type: ignore[method-assign]
    assert 3 <= len(idle) <= 5, idle  # one long-poll per idle_wait, nothing else
    assert set(idle) == {"POST /v1/claims"}  # the wait is the claim itself


def test_a_registration_the_plane_missed_is_sent_before_the_next_claim(plane: Plane) -> None:
    server = plane.serve()
    daemon = plane.store(server, sync_wait=1)
    server.stop()
    with pytest.raises(StoreUnavailable):
        daemon.register_device("d1", SERIAL, ["dnd.get", "dnd.set"], lambda: {})
    server.start()
    assert daemon.claim(f"d1/{SERIAL}", SERIAL, time.time()) is None
    headers = {"Authorization": f"Bearer {plane.tokens['planner']}"}
    daemons = httpx.get(f"{server.url}/v1/devices", headers=headers).json()["daemons"]
    assert [d["devices"] for d in daemons] == [{SERIAL: ["dnd.get", "dnd.set"]}]
    task = {"method": "dnd.set", "params": {"mode": "off"}, "conversation_id": "c1"}
    answer = httpx.post(
        f"{server.url}/v1/classify", json={"task": task, "device": SERIAL}, headers=headers
    )
    assert answer.json()["classification"]["supported"] is True


def test_an_idle_long_poll_sleeps_until_the_answer_or_its_alarm(plane: Plane) -> None:
    """Issue #24: the waiting thread of a worker's long-poll looked at its stop flag every
    50 ms (1,200 wake-ups a minute per idle phone). With the worker's ``Alarm`` it sleeps
    in one ``select`` until the plane answers or the alarm is set."""
    server = plane.serve()
    daemon = plane.store(server, idle_wait=1.5)
    alarm = Alarm()
    daemon.wait_for_work(0.1, alarm)  # the first cursor
    status = Path(f"/proc/self/task/{threading.get_native_id()}/status")

    def switches() -> int:
        lines = status.read_text().splitlines()
        return sum(int(line.split()[1]) for line in lines if "ctxt_switches" in line)

    before, began = switches(), time.monotonic()
    daemon.wait_for_work(1.5, alarm)  # the plane answers after idle_wait: nothing queued
    assert time.monotonic() - began >= 1.0
    assert switches() - before <= 8  # was ~30 in 1.5 s
    threading.Timer(0.3, alarm.set).start()
    began = time.monotonic()
    daemon.wait_for_work(30, alarm)
    assert time.monotonic() - began < 5, "the alarm did not end the long-poll's wait"
