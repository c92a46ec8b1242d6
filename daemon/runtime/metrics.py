"""Prometheus metrics of a daemon and of the control plane (issue #36).

One ``PhonedMetrics`` per daemon (``phoned run --metrics``) or plane (``phoned serve``), on
a ``CollectorRegistry`` of its own (never the client's global one: two daemons, or a test
and a daemon, in one process keep their counts apart). What it counts comes from the
stores' task writes (``written``, the stores' ``on_write``), the schedule ticks, the queue's
weather; what it shows as gauges is read at scrape time from what the caller hands it (the
phones it serves, one aggregate of the queue, the outbox) and is never a scan of the queue.

Labels carry only bounded, public values: ``method`` (a registered method, else
``other``), ``state``, ``reason``, ``source``, ``outcome``, ``kind`` and ``device`` (a
serial, or with ``metrics.hash_serials`` its digest ``sha256:<12 hex>``). Never a
conversation, a number, a body, a contact or a task id: the series count does not grow
with tasks (``tests/unit/test_metrics.py`` holds it over 10,000 tasks).

    phoned_tasks_submitted_total{method,source}       tasks queued (workflow steps included)
    phoned_task_transitions_total{method,state}       transitions, by the state entered
    phoned_task_failures_total{method,reason,state}   failures: state failed, stopped, or
                                                      queued (retried)
    phoned_task_completion_seconds{method}            submit -> completed
    phoned_action_duration_seconds{method}            an attempt's run: start -> its report
    phoned_approval_wait_seconds{method,outcome}      approval asked -> approved, denied,
                                                      expired or withdrawn
    phoned_choice_wait_seconds{method}                a choice asked -> answered (amended)
    phoned_claims_total{device}                       claims (queued -> dispatched)
    phoned_pickup_latency_seconds{method}             queued -> claimed
    phoned_queue_weather_events_total{kind}           busy / full queue met by a call
    phoned_schedule_runs_total{outcome}               due times fired, missed, refused
    phoned_tasks{state}                               tasks in each state now
    phoned_tasks_oldest_age_seconds{state}            age of the oldest in a non-terminal state
    phoned_approvals_overdue                          approvals past their deadline (TTL)
    phoned_phone_online{device}                       1 served now, 0 seen and not served
    phoned_phone_last_claim_timestamp_seconds{device} its last claim (time() - it: the age)
    phoned_outbox_reports                             a plane daemon's unacknowledged reports
    process_*, python_*                               the client's process, GC and platform
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from phoned.daemon.lifecycle.approval_policy import SOURCES
from phoned.daemon.lifecycle.errors import QueueBusy, QueueWeather
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TERMINAL, TaskState
from phoned.daemon.lifecycle.waiting import WaitKind
from phoned.daemon.store.schedule_tick import Tick
from phoned.daemon.store.sql_store import StateSummary
from phoned.device.actions import registry as methods_registry  # REGISTRY read at call time
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# seconds a machine takes (a claim, an action) and a person takes (approval, a choice)
MACHINE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
PERSON_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400)
COMPLETION_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 86400)
OFFLINE_KEPT_S = 86400.0  # a phone not served for a day leaves the gauges
MAX_PHONES = 1000  # bound on the phones remembered (a fleet's; sim ports come and go)


def _known_methods() -> frozenset[str]:

    return frozenset(methods_registry.REGISTRY)


def device_label(serial: str, hashed: bool) -> str:
    """The ``device`` label of a serial: itself, or ``sha256:<12 hex>`` when ``hashed``."""
    if not hashed:
        return serial
    return "sha256:" + hashlib.sha256(serial.encode()).hexdigest()[:12]


# What the gauges read at scrape time; each may be None (not this process's to tell).
QueueRead = Callable[[], Iterable[StateSummary]]
PhonesRead = Callable[[], "Phones"]


@dataclass(frozen=True)
class Phones:
    """The phones a process knows now: those served, those seen and not served, and the
    last claim of each it knows one of (POSIX s)."""

    served: frozenset[str]
    seen: frozenset[str] = frozenset()
    last_claims: tuple[tuple[str, float], ...] = ()


class PhonedMetrics:
    """The families of one daemon or plane, on their own registry (module docstring)."""

    def __init__(self, *, hash_serials: bool = False, process: bool = True) -> None:
        self.registry = CollectorRegistry()
        self.hash_serials = hash_serials
        self._methods = _known_methods()
        self._lock = threading.Lock()
        self._claims: dict[str, float] = {}  # serial -> last claim seen by this process
        self._phones = _PhoneBook()
        r = self.registry
        self.submitted = Counter(
            "phoned_tasks_submitted", "Tasks queued.", ["method", "source"], registry=r
        )
        self.transitions = Counter(
            "phoned_task_transitions", "Task transitions, by the state entered.",
            ["method", "state"], registry=r,
        )  # fmt: skip
        self.failures = Counter(
            "phoned_task_failures",
            "Task failures by reason; state: failed, stopped, or queued (retried).",
            ["method", "reason", "state"], registry=r,
        )  # fmt: skip
        self.completion = Histogram(
            "phoned_task_completion_seconds", "Submit to completed.", ["method"],
            buckets=COMPLETION_BUCKETS, registry=r,
        )  # fmt: skip
        self.action = Histogram(
            "phoned_action_duration_seconds", "An attempt's run: start to its report.",
            ["method"], buckets=MACHINE_BUCKETS, registry=r,
        )  # fmt: skip
        self.approval_wait = Histogram(
            "phoned_approval_wait_seconds",
            "Approval asked to approved, denied, expired or withdrawn: how long a person took.",
            ["method", "outcome"], buckets=PERSON_BUCKETS, registry=r,
        )  # fmt: skip
        self.choice_wait = Histogram(
            "phoned_choice_wait_seconds", "A choice asked to answered: how long a person took.",
            ["method"], buckets=PERSON_BUCKETS, registry=r,
        )  # fmt: skip
        self.claims = Counter("phoned_claims", "Claims (queued to dispatched).", ["device"],
                              registry=r)  # fmt: skip
        self.pickup = Histogram(
            "phoned_pickup_latency_seconds", "Queued to claimed.", ["method"],
            buckets=MACHINE_BUCKETS, registry=r,
        )  # fmt: skip
        self.weather = Counter(
            "phoned_queue_weather_events", "Calls that met a busy or full queue.", ["kind"],
            registry=r,
        )  # fmt: skip
        self.schedule_runs = Counter(
            "phoned_schedule_runs", "Schedule due times fired, missed or refused.", ["outcome"],
            registry=r,
        )  # fmt: skip
        if process:  # the client's defaults, on this registry
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)

    # --- what happened (counters) ------------------------------------------------------------
    def written(self, before: TaskRecord | None, after: TaskRecord) -> None:
        """A store committed a task write (``on_write``): count it."""
        method = after.method if after.method in self._methods else "other"
        now = after.updated_at
        if before is None and after.state is TaskState.QUEUED:
            source = after.source if after.source in SOURCES else "other"
            self.submitted.labels(method, source).inc()
            self.transitions.labels(method, after.state.value).inc()
            return
        if before is not None and before.state is after.state:
            self._answered(method, before, after, now)
            return
        self.transitions.labels(method, after.state.value).inc()
        if after.state is TaskState.DISPATCHED:
            self._claimed(method, before, after, now)
        if before is not None:
            self._left(method, before, after, now)
        if after.state is TaskState.COMPLETED:
            self.completion.labels(method).observe(max(0.0, now - after.created_at))
        self._failed(method, before, after)

    def _claimed(
        self, method: str, before: TaskRecord | None, after: TaskRecord, now: float
    ) -> None:
        serial = after.device or (after.lease_owner or "").rpartition("/")[2]
        if serial:
            self.claims.labels(device_label(serial, self.hash_serials)).inc()
            with self._lock:
                self._claims[serial] = now
        if before is not None and before.state is TaskState.QUEUED:
            self.pickup.labels(method).observe(max(0.0, now - before.updated_at))

    def _left(self, method: str, before: TaskRecord, after: TaskRecord, now: float) -> None:
        """The state ``before`` was in ended: its run, or a person's wait, is measured."""
        if before.state is TaskState.RUNNING and before.running_since is not None:
            self.action.labels(method).observe(max(0.0, now - before.running_since))
        elif before.state is TaskState.APPROVAL:
            outcome = after.approval_status or "withdrawn"
            if outcome not in ("approved", "denied", "expired"):
                outcome = "withdrawn"
            self.approval_wait.labels(method, outcome).observe(max(0.0, now - before.updated_at))
        elif _waits_for_choice(before):
            self.choice_wait.labels(method).observe(max(0.0, now - before.updated_at))

    def _answered(self, method: str, before: TaskRecord, after: TaskRecord, now: float) -> None:
        """A write that kept the state: a choice answered by an amendment stays waiting."""
        if _waits_for_choice(before) and after.revision > before.revision:
            self.choice_wait.labels(method).observe(max(0.0, now - before.updated_at))

    def _failed(self, method: str, before: TaskRecord | None, after: TaskRecord) -> None:
        failure = after.failure
        if failure is None or after.state not in (*TERMINAL, TaskState.QUEUED):
            return
        if after.state is TaskState.QUEUED and before is not None and before.failure == failure:
            return  # a requeue that carries an older failure (approved, resumed)
        state = "queued" if after.state is TaskState.QUEUED else after.state.value
        self.failures.labels(method, failure.reason.value, state).inc()

    def schedule_tick(self, tick: Tick) -> None:
        """A schedule tick fired, missed and refused these due times."""
        if tick.fired:
            self.schedule_runs.labels("fired").inc(len(tick.fired))
        if tick.missed:
            self.schedule_runs.labels("missed").inc(tick.missed)
        if tick.refused:
            self.schedule_runs.labels("refused").inc(len(tick.refused))

    def met_weather(self, exc: QueueWeather) -> None:
        """A call met a busy or full queue (``phoned.daemon.runtime.patience.weather``)."""
        self.weather.labels("busy" if isinstance(exc, QueueBusy) else "full").inc()

    # --- what is (gauges, read at scrape time) -------------------------------------------
    def watch(
        self,
        *,
        queue: QueueRead | None = None,
        phones: PhonesRead | None = None,
        outbox: Callable[[], int | None] | None = None,
    ) -> None:
        """Read these at every scrape: the queue's aggregate (one query), the phones, the
        outbox backlog (a daemon on a plane)."""
        self.registry.register(_Gauges(self, queue, phones, outbox))

    def last_claims(self) -> dict[str, float]:
        """The last claim per serial this process saw."""
        with self._lock:
            return dict(self._claims)

    def exposition(self) -> bytes:
        """The text format of every family (what ``/metrics`` serves)."""
        return generate_latest(self.registry)


def _waits_for_choice(task: TaskRecord) -> bool:
    if task.state is not TaskState.WAITING:
        return False
    waiting = task.waiting
    return waiting is not None and waiting.kind is WaitKind.CHOICE


class _PhoneBook:
    """Phones seen by this process and when each was last served, bounded."""

    def __init__(self) -> None:
        self._served_at: dict[str, float] = {}
        self._lock = threading.Lock()

    def update(self, phones: Phones, now: float) -> dict[str, bool]:
        """serial -> served now, for every phone served or seen within ``OFFLINE_KEPT_S``."""
        with self._lock:
            for serial in phones.served:
                self._served_at[serial] = now
            for serial in phones.seen:
                self._served_at.setdefault(serial, now)
            for serial, at in list(self._served_at.items()):
                if now - at > OFFLINE_KEPT_S:
                    del self._served_at[serial]
            while len(self._served_at) > MAX_PHONES:  # the longest unserved go first
                del self._served_at[min(self._served_at, key=self._served_at.__getitem__)]
            return {serial: serial in phones.served for serial in self._served_at}


class _Gauges(Collector):
    """The gauges, read when scraped."""

    def __init__(
        self,
        metrics: PhonedMetrics,
        queue: QueueRead | None,
        phones: PhonesRead | None,
        outbox: Callable[[], int | None] | None,
    ) -> None:
        self._m, self._queue, self._phones, self._outbox = metrics, queue, phones, outbox

    def describe(self) -> Iterable[Metric]:
        return []  # nothing read at registration: the names come at the first scrape

    def collect(self) -> Iterator[Metric]:
        now = time.time()
        if self._queue is not None:
            yield from _queue_families(self._queue(), now)
        if self._phones is not None:
            yield from self._phone_families(self._phones(), now)
        pending = self._outbox() if self._outbox is not None else None
        if pending is not None:
            yield GaugeMetricFamily(
                "phoned_outbox_reports", "Reports spooled to the plane, not acknowledged yet.",
                value=pending,
            )  # fmt: skip

    def _phone_families(self, phones: Phones, now: float) -> Iterator[Metric]:
        online = GaugeMetricFamily(
            "phoned_phone_online", "1: a worker serves the phone now; 0: seen, not served.",
            labels=["device"],
        )  # fmt: skip
        claimed = GaugeMetricFamily(
            "phoned_phone_last_claim_timestamp_seconds",
            "When a task was last claimed for the phone (time() minus it: its age).",
            labels=["device"],
        )
        hashed = self._m.hash_serials
        claims = {**dict(phones.last_claims)}
        for serial, at in self._m.last_claims().items():
            claims[serial] = max(at, claims.get(serial, 0.0))
        for serial, served in sorted(self._m._phones.update(phones, now).items()):
            label = device_label(serial, hashed)
            online.add_metric([label], 1.0 if served else 0.0)
            if serial in claims:
                claimed.add_metric([label], claims[serial])
        yield online
        yield claimed


def _queue_families(figures: Iterable[StateSummary], now: float) -> Iterator[Metric]:
    tasks = GaugeMetricFamily("phoned_tasks", "Tasks in each state now.", labels=["state"])
    oldest = GaugeMetricFamily(
        "phoned_tasks_oldest_age_seconds",
        "Seconds since the least recently changed task of a non-terminal state changed.",
        labels=["state"],
    )
    by_state = {f.state: f for f in figures}
    overdue = 0
    for state in TaskState:  # every state, zero included: an alert needs the series
        figure = by_state.get(state)
        tasks.add_metric([state.value], figure.count if figure else 0)
        if state not in TERMINAL:
            oldest.add_metric([state.value], max(0.0, now - figure.oldest) if figure else 0.0)
        if figure is not None and state is TaskState.APPROVAL:
            overdue = figure.overdue
    yield tasks
    yield oldest
    yield GaugeMetricFamily(
        "phoned_approvals_overdue", "Approvals waiting past their deadline (TTL).", value=overdue
    )
