"""Property test: random sequences of queue operations keep the lifecycle invariants.

Operations: submit, claim, heartbeat, start, clock jump + sweep (lease expiry),
amend, cancel, approve, deny (with right or foreign previews), complete, fail, crash
(worker forgets its tickets, daemon recovers). Invariants: one live owner per task,
``state_version`` strictly increasing, no change to a terminal task, no approval
crossing tasks, never more than ``max_attempts`` attempts, unique event keys.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.lifecycle.errors import ApprovalMismatch, LifecycleError
from phoned.daemon.lifecycle.records import Failure, Preview, TaskRecord, Ticket
from phoned.daemon.lifecycle.states import LEASED, TERMINAL, FailureReason
from phoned.daemon.store.sqlite_store import SqliteStore
from phoned.daemon.store.sweeper import sweep

WORKERS = ("daemon-a/w0", "daemon-a/w1", "daemon-b/w0")
REASONS = list(FailureReason)


def _visible(task: TaskRecord) -> tuple[object, ...]:
    """Everything but lease renewal (a heartbeat is not a transition)."""
    return (task.state, task.revision, task.attempt, task.params, task.stop_requested,
            task.failure, task.approval_status, task.lease_owner)  # fmt: skip


class QueueMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp()
        self.store = SqliteStore(str(Path(self.dir) / "q.db"))
        self.now = 1_000.0
        self.ids: list[str] = []
        self.tickets: dict[str, Ticket] = {}  # worker -> ticket it believes it holds
        self.previews: dict[str, Preview] = {}  # task id -> last preview shown
        self.seen: dict[str, TaskRecord] = {}
        self.terminal: dict[str, TaskRecord] = {}

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _tick(self, seconds: float = 1.0) -> float:
        self.now += seconds
        return self.now

    def _task(self, index: int) -> str | None:
        return self.ids[index % len(self.ids)] if self.ids else None

    @rule(method=st.sampled_from(["dnd.set", "sms.send"]), conv=st.sampled_from(["c1", "c2"]),
          source=st.sampled_from(["cloud", "schedule"]), max_attempts=st.integers(1, 3))  # fmt: skip
    def submit(self, method: str, conv: str, source: str, max_attempts: int) -> None:
        params = {"mode": "off"} if method == "dnd.set" else {"to": "+4915112345678", "body": "b"}
        raw = {"method": method, "params": params, "conversation_id": conv, "source": source,
               "max_attempts": max_attempts}  # fmt: skip
        self.ids.append(self.store.submit(validate_task(raw), self._tick()).id)

    @rule(worker=st.sampled_from(WORKERS))
    def claim(self, worker: str) -> None:
        task = self.store.claim(worker, "S1", self._tick(), lease_s=30)
        if task is not None:
            self.tickets[worker] = task.ticket

    def _report(self, worker: str, call: str, *args: object) -> None:
        ticket = self.tickets.get(worker)
        if ticket is None:
            return
        with contextlib.suppress(LifecycleError):
            getattr(self.store, call)(ticket, *args)

    @rule(worker=st.sampled_from(WORKERS))
    def heartbeat(self, worker: str) -> None:
        self._report(worker, "heartbeat", self._tick(), 30)

    @rule(worker=st.sampled_from(WORKERS))
    def start(self, worker: str) -> None:
        self._report(worker, "start", self._tick())

    @rule(worker=st.sampled_from(WORKERS))
    def complete(self, worker: str) -> None:
        self._report(worker, "complete", self._tick(), "dnd.priority", ("ev:1",))

    @rule(worker=st.sampled_from(WORKERS), reason=st.sampled_from(REASONS))
    def fail(self, worker: str, reason: FailureReason) -> None:
        self._report(worker, "fail", Failure(reason), self._tick())

    @rule(worker=st.sampled_from(WORKERS))
    def request_approval(self, worker: str) -> None:
        ticket = self.tickets.get(worker)
        if ticket is None:
            return
        try:
            task = self.store.get(ticket.task_id)
            preview = Preview(task.id, task.conversation_id, "e", "t", {"n": self.now}, "s")
            self.store.request_approval(ticket, preview, self._tick())
            self.previews[task.id] = preview
        except LifecycleError:
            pass

    @rule(index=st.integers(0, 50), foreign=st.integers(0, 50), approve=st.booleans())
    def decide(self, index: int, foreign: int, approve: bool) -> None:
        task_id, other_id = self._task(index), self._task(foreign)
        if task_id is None or other_id is None or other_id not in self.previews:
            return
        preview = self.previews[other_id]
        task = self.store.get(task_id)
        verb = self.store.approve if approve else self.store.deny
        try:
            verb(task_id, task.conversation_id, task.revision, preview.digest, self._tick())
        except ApprovalMismatch:
            return
        except LifecycleError:
            return
        # accepted: the preview must be this task's own (no crossing)
        assert preview.task_id == task_id

    @rule(index=st.integers(0, 50), mode=st.sampled_from(["off", "priority"]))
    def amend(self, index: int, mode: str) -> None:
        task_id = self._task(index)
        if task_id is None:
            return
        task = self.store.get(task_id)
        params = {"mode": mode} if task.method == "dnd.set" else {"to": "123", "body": mode}
        with contextlib.suppress(LifecycleError):
            self.store.amend(task_id, task.conversation_id, params, self._tick())

    @rule(index=st.integers(0, 50))
    def cancel(self, index: int) -> None:
        task_id = self._task(index)
        if task_id is None:
            return
        with contextlib.suppress(LifecycleError):
            self.store.cancel(task_id, self.store.get(task_id).conversation_id, self._tick())

    @rule(seconds=st.sampled_from([5.0, 31.0, 400.0, 1000.0]))
    def time_passes(self, seconds: float) -> None:
        sweep(self.store, self._tick(seconds))

    @rule(daemon=st.sampled_from(["daemon-a/", "daemon-b/"]))
    def crash(self, daemon: str) -> None:
        for worker in [w for w in self.tickets if w.startswith(daemon)]:
            del self.tickets[worker]
        self.store.recover(daemon, self._tick())

    @invariant()
    def lifecycle_invariants(self) -> None:
        for task in self.store.list_tasks(limit=1000):
            before = self.seen.get(task.id)
            if before is not None and _visible(task) != _visible(before):
                assert task.state_version > before.state_version
            if task.id in self.terminal:
                assert task == self.terminal[task.id], "terminal task changed"
            elif task.state in TERMINAL:
                self.terminal[task.id] = task
            assert task.attempt <= task.max_attempts
            assert (task.lease_owner is not None) == (task.state in LEASED)
            if task.approval_status == "approved":
                assert task.approval_digest == self.previews[task.id].digest
            self.seen[task.id] = task

    @invariant()
    def one_live_owner_per_task(self) -> None:
        holders: dict[str, list[str]] = {}
        for worker, ticket in self.tickets.items():
            task = self.store.get(ticket.task_id)
            live = (
                task.state in LEASED
                and task.lease_until is not None
                and task.lease_until >= self.now
            )
            if live and task.lease_owner == worker and task.attempt == ticket.attempt:
                holders.setdefault(task.id, []).append(worker)
        assert all(len(h) == 1 for h in holders.values())

    @invariant()
    def events_are_unique_and_ordered(self) -> None:
        events = self.store.events(limit=100_000)
        keys = [e.key for e in events]
        assert len(keys) == len(set(keys))
        last: dict[str, int] = {}
        for e in events:
            if e.task_id is not None:
                assert e.state_version > last.get(e.task_id, 0)
                last[e.task_id] = e.state_version


QueueMachine.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_queue_invariants = QueueMachine.TestCase
