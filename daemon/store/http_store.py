"""``HttpStore``: the ``WorkerStore`` protocol over a remote control plane (``phoned serve``).

``phoned run --queue https://plane:8400`` serves phones from a plane: each worker verb is a
call of the ``/v1`` daemon API with a daemon token (``phoned.daemon.store.plane_client.Transport``).
Only the worker's side is here; planners' verbs are the plane's (``PlaneClient``) and the
plane applies every lifecycle rule and sweeps its own queue.

Reports go through the durable outbox (``phoned.daemon.store.outbox``): written first, then
delivered in order until acknowledged; the plane dedupes by ``report_id``. While the
plane is down:

==========================  ====================================================
verb                        behaviour
==========================  ====================================================
start, put_evidence,        queued; answers predicted from the last known record
journal_after, complete,    (``put_evidence`` hands out ``pending:<report id>``,
fail, pause,                resolved by the plane on delivery)
request_approval,
confirm_stopped
get                         the last known record of the task
journal_before, journal,    the admission gate and reconciling need the plane:
recover                     retried for up to ``sync_wait`` seconds, then
                            ``StoreUnavailable``
claim                       refused (``StoreUnavailable``) while reports wait, so the
                            worker claims nothing new until the plane has them all
register_device             kept and sent again before the next claim
hold_phone, release_phone   ``StoreUnavailable``: the worker drives no phone on a
                            hold the plane did not grant (``phoned.daemon.runtime.phone_hold``)
heartbeat, evidence,        ``StoreUnavailable`` (the lease may run out)
list_tasks, resume
==========================  ====================================================

An idle worker's wait is its claim, long-polled (``POST /v1/claims`` with ``wait``) for
``idle_wait`` seconds (default 30): one request per 30 s per worker while idle, and the
plane leases a submitted task within that same request, so the worker's next ``claim``
returns it without another round trip (issue #35). A worker that stops withdraws its
waiting claim (``DELETE /v1/claims``), and the plane answers it at once: a task leased
just before is the worker's to run (``phoned.daemon.runtime.worker``). Before its first
claim a worker waits on ``GET /v1/work`` (the queue's event cursor).
"""

from __future__ import annotations

import dataclasses
import logging
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from phoned.daemon.lifecycle import ops, wire
from phoned.daemon.lifecycle.errors import LifecycleError, StoreUnavailable
from phoned.daemon.lifecycle.records import (
    JournalEntry,
    TaskQuery,
    TaskRecord,
)
from phoned.daemon.store import phone_ops
from phoned.daemon.store.holds import Holder
from phoned.daemon.store.outbox import Answer, Courier, Outbox, Pending
from phoned.daemon.store.plane_client import Transport, checked
from phoned.daemon.store.presence import Presence
from phoned.daemon.store.protocol import WorkerStore
from phoned.daemon.store.rows import record_row, task_record
from phoned.daemon.store.wake import Alarm
from phoned.foundation.threads import spawn

log = logging.getLogger("phoned.http_store")
R = TypeVar("R")

_DEFINITIVE = {404, 409, 413, 422}  # refusals that redelivery cannot change
# the newest task records and journal entries a link keeps for its predictions (one task
# runs per phone at a time; kept for ever they grew the daemon with every task, issue #24)
KEPT_RECORDS = 256


def _keep(table: dict[str, Any], key: str, value: Any) -> None:
    """``table[key] = value`` as the newest entry; the oldest beyond ``KEPT_RECORDS`` go.
    Called with the link's lock held."""
    table.pop(key, None)
    table[key] = value
    while len(table) > KEPT_RECORDS:
        del table[next(iter(table))]


class PlaneLink:
    """What one daemon process's ``HttpStore`` views share: the transport, the outbox and
    its courier, the records and journal entries the plane last answered, and device
    registrations not acknowledged yet. Its owner (``phoned.daemon.store.open.WorkerStores``)
    closes it; queued reports stay on disk for the next start."""

    def __init__(self, url: str, token: str, outbox_path: Path, *, timeout: float = 10.0) -> None:
        self.transport = Transport(url, token, timeout)
        self.courier = Courier(Outbox(outbox_path), self._deliver)
        self.known: dict[str, TaskRecord] = {}
        self.entries: dict[str, JournalEntry] = {}
        self.unregistered: dict[str, dict[str, Any]] = {}  # serial -> register document
        self.lock = threading.Lock()

    def close(self) -> None:
        """Stop the courier and close the outbox and the connection."""
        self.courier.close()
        self.courier.outbox.close()
        self.transport.close()

    def _deliver(self, pending: Pending) -> Answer:
        if pending.file is not None:
            content = Path(pending.file).read_bytes() if Path(pending.file).exists() else b""
            answer = self.transport.send(pending.method, pending.path, content=content)
        else:
            answer = self.transport.send(pending.method, pending.path, json=pending.body)
        if answer.status in _DEFINITIVE or 200 <= answer.status < 300:
            self.remember(answer.body)
            return answer
        checked(answer)  # raises StoreUnavailable for 401/403/5xx: keep it for later
        raise StoreUnavailable(f"control plane answered HTTP {answer.status}")

    def remember(self, body: Any) -> None:
        """Keep the task records and journal entries an answer carries."""
        if not isinstance(body, dict):
            return
        with self.lock:
            if isinstance(body.get("task"), dict):
                record = wire.task_from(body["task"])
                _keep(self.known, record.id, record)
            if isinstance(body.get("entry"), dict):
                entry = wire.journal_from(body["entry"])
                _keep(self.entries, entry.op_id, entry)


class HttpStore(WorkerStore):
    """The ``WorkerStore`` protocol over ``phoned serve``: one view of a ``PlaneLink`` per
    worker thread (its idle state is its own); see the module docstring for outages."""

    def __init__(self, link: PlaneLink, *, idle_wait: float = 30.0, sync_wait: float = 60.0):
        self._s = link
        self._t = link.transport
        self.idle_wait = idle_wait
        self.sync_wait = sync_wait
        self._cursor: int | None = None  # the plane's event cursor, as last seen
        self._empty_at: int | None = None  # the cursor at which a claim last found nothing
        self._idle_claim: ops.Claim | None = None  # that claim: what the idle wait long-polls
        self._leased: TaskRecord | None = None  # what that long-poll leased: the next claim's
        self._lists: dict[str, tuple[int, list[TaskRecord]]] = {}  # list_tasks by cursor

    def close(self) -> None:
        """Nothing to release: the link belongs to its owner."""

    # --- plumbing ------------------------------------------------------------------
    def _call(
        self, method: str, path: str, *, json: Any = None, params: Any = None, wait: float = 0.0
    ) -> Any:
        body = checked(self._t.send(method, path, json=json, params=params, wait=wait))
        self._s.remember(body)
        return body

    def _patient(self, method: str, path: str, json: Any = None) -> Any:
        """A call the running task cannot do without: outbox first, retried up to ``sync_wait``."""
        deadline, delay = time.monotonic() + self.sync_wait, 0.2
        while True:
            try:
                self._s.courier.flush()
                return self._call(method, path, json=json)
            except StoreUnavailable:
                if time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _report(self, path: str, body: dict[str, Any], predict: Any) -> Any:
        """Queue a report, deliver the outbox through it; offline: ``predict(pending)``."""
        courier = self._s.courier
        pending = courier.add("POST", path, body)
        try:
            courier.flush(through=pending.seq)
        except StoreUnavailable as exc:
            answer = courier.answer(pending.seq)
            if answer is None:
                log.warning("control plane unreachable, report queued: %s (%s)", path, exc)
                return predict(pending)
        else:
            answer = courier.answer(pending.seq)
        if answer is None:  # delivered by another thread's flush first: read back
            raise StoreUnavailable(f"report {pending.report_id} answer was not kept")
        return checked(answer)

    def _predict(self, op: ops.TaskOp) -> TaskRecord:
        """The plane's answer to ``op``, by the operation's own transition on the last
        known record (the plane runs the same rules on delivery)."""
        with self._s.lock:
            known = self._s.known.get(op.row_id())
            if known is None:
                raise StoreUnavailable(f"control plane unreachable; task {op.row_id()} is unknown")
            change = op.transition(record_row(known), op.now, ops.Offline())
            record = task_record(change.after)
            _keep(self._s.known, record.id, record)
        return record

    # --- the device ----------------------------------------------------------------------
    def _register(self, op: phone_ops.RegisterDevice) -> None:
        """Tell the plane this daemon serves ``op.serial`` with its methods, then its context.

        A registration the plane did not get is sent again before the next claim, so
        ``/v1/classify`` never answers from a device known without its methods.
        """
        with self._s.lock:
            self._s.unregistered[op.serial] = op.to_wire()
        self._send_registrations()
        self._call("PUT", f"/v1/devices/{op.serial}/context", json=op.context())

    def presence(self) -> list[Presence]:
        """The plane's presence rows (``GET /v1/presence``)."""
        return [Presence.from_json(p) for p in self._call("GET", "/v1/presence")["presence"]]

    def phone_holds(self) -> list[Holder]:
        """Who drives each phone (``GET /v1/holds``)."""
        return [Holder.from_json(h) for h in self._call("GET", "/v1/holds")["holds"]]

    def _send_registrations(self) -> None:
        with self._s.lock:
            waiting = list(self._s.unregistered.items())
        for serial, doc in waiting:
            try:
                self._call("POST", phone_ops.RegisterDevice.route, json=doc)
            except StoreUnavailable:
                raise  # kept: sent again before the next claim
            except LifecycleError:
                self._drop_registration(serial, doc)  # refused for good: say it once
                raise
            self._drop_registration(serial, doc)

    def _drop_registration(self, serial: str, doc: dict[str, Any]) -> None:
        with self._s.lock:
            if self._s.unregistered.get(serial) is doc:
                del self._s.unregistered[serial]

    # --- claiming and waiting ------------------------------------------------------------
    def _claim(self, op: ops.Claim) -> TaskRecord | None:
        """Claim at once (no wait); refused while reports wait in the outbox. A task the idle
        wait's long-poll leased to ``op.owner`` is the answer, without a request."""
        leased = self._leased
        if (
            leased is not None
            and leased.lease_owner == op.owner
            and op.task_id in (None, leased.id)
        ):
            self._leased = None
            return leased
        if self._empty_at is not None and self._empty_at == self._cursor and self._same(op):
            return None  # nothing happened since this claim found nothing: save the round trip
        return self._claimed(op, self._sent_claim(op, wait=0.0))

    def _same(self, op: ops.Claim) -> bool:
        """Whether ``op`` asks what the last claim that found nothing asked."""
        last = self._idle_claim
        return (
            last is not None
            and op.task_id is None
            and last.task_id is None
            and (last.owner, last.device) == (op.owner, op.device)
        )

    def _sent_claim(self, op: ops.Claim, wait: float) -> Any:
        """The plane's answer to ``op`` waiting up to ``wait`` s; registrations and queued
        reports go first (a claim is refused while reports wait)."""
        if self._s.unregistered:
            try:
                self._send_registrations()
            except LifecycleError as exc:
                log.warning("registering the device failed: %s", exc)
        self._s.courier.flush()
        return self._call("POST", op.path(), json={**op.to_wire(), "wait": wait}, wait=wait)

    def _claimed(self, op: ops.Claim, body: Any) -> TaskRecord | None:
        """The task a claim's answer leased; keeps the cursor it names and, when it found
        nothing, the claim as the one the idle wait long-polls."""
        claimed = op.answer_from(body)
        if isinstance(body.get("cursor"), int):  # a plane before issue #35 names none
            self._cursor = body["cursor"]
        self._empty_at = self._cursor if claimed is None else None
        self._idle_claim = op if claimed is None else None
        if claimed is not None:
            self._lists.clear()  # the listings cached at this cursor do not show the lease
        return claimed

    def _claim_batch(self, op: ops.ClaimBatch) -> list[TaskRecord]:
        """A claim for each pair, one request each: the plane has no batch claim (a daemon
        on a plane keeps one long-poll per worker instead, ``WorkerStores.batch_claims``)."""
        leased = (self._claim(claim) for claim in op.each())
        return [task for task in leased if task is not None]

    def change_token(self) -> object | None:
        """None: only an embedded file can tell cheaply that nothing changed."""
        return None

    @property
    def wakes_on_work(self) -> bool:
        return True  # the plane's long-poll answers when the queue changes

    def wait_for_work(self, timeout: float, stop: threading.Event) -> None:
        """Long-poll the plane until work comes, ``max(timeout, idle_wait)`` or ``stop``.

        The wait is at least ``idle_wait`` so an idle worker asks once per ``idle_wait``
        seconds, not once per poll interval. After a claim that found nothing it is that
        claim, long-polled on this thread: a task it leases is the answer of the next
        ``claim``; on ``stop`` a watcher withdraws it and the plane answers at once, so a
        task leased just before is known as this worker's (it runs it). Before any claim
        it waits for the queue's cursor to move (``GET /v1/work``, on a thread of its own
        that ``stop`` abandons).
        """
        if stop.is_set():
            return
        wait = max(timeout, self.idle_wait if self._cursor is not None else 0.0)
        claim = self._idle_claim if self._cursor is not None else None
        try:
            if claim is None:
                cursor = self._wait_for_cursor(wait, stop)
                self._cursor = self._cursor if cursor is None else cursor
            else:
                self._leased = self._claimed(claim, self._wait_for_claim(claim, wait, stop))
        except LifecycleError as exc:
            log.warning("waiting for work failed: %s", exc)
            stop.wait(max(timeout, 2.0))  # the plane is down: do not spin

    def _wait_for_cursor(self, wait: float, stop: threading.Event) -> int | None:
        """The plane's event cursor once it moves past ours or ``wait`` s passed; None on
        ``stop`` (the request, on a thread of its own, is abandoned)."""
        after = -1 if self._cursor is None else self._cursor
        box: dict[str, Any] = {}
        done = Alarm()

        def poll() -> None:
            try:
                params = {"after": after, "wait": wait}
                box["cursor"] = self._call("GET", "/v1/work", params=params, wait=wait)["cursor"]
            except LifecycleError as exc:
                box["error"] = exc
            finally:
                done.set()

        spawn("long-poll", poll)
        if not _sleep_until(done, stop):
            return None
        if "error" in box:
            raise box["error"]
        return int(box["cursor"])

    def _wait_for_claim(self, claim: ops.Claim, wait: float, stop: threading.Event) -> Any:
        """The answer of ``claim`` long-polled up to ``wait`` s; withdrawn on ``stop`` by a
        watcher thread (the plane then answers at once: nothing, or what it leased)."""
        answered = Alarm()

        def watch() -> None:
            if not _sleep_until(answered, stop):
                self._withdraw(claim.owner)

        spawn("claim-watch", watch)
        try:
            return self._sent_claim(claim, wait)
        finally:
            answered.set()

    def _withdraw(self, owner: str) -> None:
        """Ask the plane to end ``owner``'s waiting claim now."""
        try:
            self._call("DELETE", ops.Claim.route, params={"owner": owner})
        except LifecycleError as exc:  # the plane is unreachable: so is the claim's answer
            log.warning("withdrawing the waiting claim of %s failed: %s", owner, exc)

    # --- the attempt ---------------------------------------------------------------------
    def apply(self, op: ops.Op[R]) -> R:
        """Send ``op`` to its route (``phoned.daemon.lifecycle.ops``, ``phoned.daemon.store.phone_ops``): a
        spooled report through the outbox (offline: its answer predicted), the rest as the
        module docstring says. ``on_write`` hears of each task record that moved on (from
        the last known record; a claim's from None)."""
        if self.on_write is None:
            return self._apply(op)
        before = None
        if isinstance(op, ops.TaskOp):
            with self._s.lock:
                before = self._s.known.get(op.row_id())
        result = self._apply(op)
        records: list[Any] = result if isinstance(result, list) else [result]
        for after in records:
            if not isinstance(after, TaskRecord):
                continue
            if before is None or after.state_version > before.state_version:
                try:
                    self.on_write(before, after)
                except Exception:
                    log.exception("a task write observer failed")
        return result

    def _apply(self, op: ops.Op[R]) -> R:
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            return cast(R, handler(self, op))
        if op.offline == "spool" and isinstance(op, ops.TaskOp):
            predicted = lambda _: {"task": wire.plain(self._predict(op))}  # noqa: E731
            body = self._report(op.path(), op.body_json(), predicted)
        elif op.offline == "retry":  # needs the plane's answer: retried while it is down
            body = self._patient(op.method, op.path(), op.to_wire())
        elif op.offline == "direct":
            body = self._call(op.method, op.path(), json=op.to_wire())
        elif op.offline == "local":
            return cast(R, None)
        else:
            raise TypeError(f"{type(op).__name__} is a planner's operation (PlaneClient)")
        return cast(R, op.answer_from(body))

    def _journal_after(self, op: ops.JournalAfter) -> JournalEntry:
        entry = self._s.entries.get(op.op_id)
        if entry is None:
            raise StoreUnavailable(f"journal entry {op.op_id} is not known to this daemon")

        def predict(pending: Pending) -> dict[str, Any]:
            done = op.predict(entry)
            with self._s.lock:
                _keep(self._s.entries, op.op_id, done)
            return {"entry": wire.plain(done)}

        body = self._report(op.path_of(entry.task_id), op.to_wire(), predict)
        return wire.journal_from(body["entry"])

    def _put_evidence(self, op: ops.PutEvidence) -> str:
        """Queue the artifacts it names and the document; offline: ``pending:<report id>``."""
        op = dataclasses.replace(op, body=self._upload_artifacts(op.ticket.task_id, op.body))
        answer = self._report(
            op.path(), op.body_json(), lambda pending: {"ref": f"pending:{pending.report_id}"}
        )
        return str(answer["ref"])

    def _upload_artifacts(self, task_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Queue each local artifact file for upload; the document names its plane URL.

        Only files in the task's own artifact folder (``.../<task id>/<name>``, as the
        executor writes them) are uploaded; any other path is left as text, never read.
        """
        nested = body.get("evidence")
        inner: dict[str, Any] = nested if isinstance(nested, dict) else body
        artifacts = inner.get("artifacts")
        if not isinstance(artifacts, dict) or not artifacts:
            return body
        moved: dict[str, Any] = {}
        for name, value in artifacts.items():
            path = Path(str(value))
            own = path.parent.name == task_id and not path.is_symlink()
            if isinstance(value, str) and own and path.is_file():
                url = f"/v1/tasks/{task_id}/artifacts/{path.name}"
                self._s.courier.queue("PUT", url, {}, file=str(path))
                moved[name] = url
            else:
                moved[name] = value
        if inner is body:
            return {**body, "artifacts": moved}
        return {**body, "evidence": {**inner, "artifacts": moved}}

    # --- reads and the pause watch -----------------------------------------------------
    def _status(self, task_id: str, *, patient: bool = False) -> dict[str, Any]:
        path = f"/v1/tasks/{task_id}"
        body: dict[str, Any] = self._patient("GET", path) if patient else self._call("GET", path)
        for entry in body.get("journal") or []:
            self._s.remember({"entry": entry})
        return body

    def get(self, task_id: str) -> TaskRecord:
        """The task from the plane; while it is down, the last known record."""
        try:
            self._s.courier.flush()
            return wire.task_from(self._status(task_id)["task"])
        except StoreUnavailable:
            known = self._s.known.get(task_id)
            if known is None:
                raise
            return known

    def journal(self, task_id: str) -> list[JournalEntry]:
        """Every entry (the executor reconciles from it): needs the plane, retried."""
        return [wire.journal_from(e) for e in self._status(task_id, patient=True)["journal"]]

    def evidence(self, task_id: str) -> list[dict[str, Any]]:
        return list(self._status(task_id)["evidence"])

    def tasks(self, query: TaskQuery) -> list[TaskRecord]:
        """Tasks matching the filters; repeated while the queue did not change, from cache.

        An idle worker's pause watch asks the same question every idle round; the answer
        can only change with an event, so it costs no request until the cursor moves.
        """
        params = query.params()
        key = repr(sorted(params.items()))
        cached = self._lists.get(key)
        if cached is not None and self._cursor is not None and cached[0] == self._cursor:
            return list(cached[1])
        tasks = [wire.task_from(t) for t in self._call("GET", "/v1/tasks", params=params)["tasks"]]
        if self._cursor is not None:
            self._lists[key] = (self._cursor, tasks)
        return tasks

    def pending_reports(self) -> int:
        """Reports written to the outbox and not yet acknowledged."""
        return self._s.courier.outbox.count()


def _sleep_until(done: Alarm, stop: threading.Event) -> bool:
    """Sleep until ``done`` (True) or ``stop`` (False), whichever is set first."""
    if isinstance(stop, Alarm):  # asleep until the answer or stop (issue #24: no ticks)
        select.select([done.fileno(), stop.fileno()], [], [])
        return done.is_set()
    while not done.wait(0.05):
        if stop.is_set():
            return False
    return True


# the operations with calls of their own; the others go as their ``offline`` says
_HANDLERS: dict[type, Callable[[HttpStore, Any], Any]] = {
    ops.Claim: HttpStore._claim,
    ops.ClaimBatch: HttpStore._claim_batch,
    ops.JournalAfter: HttpStore._journal_after,
    ops.PutEvidence: HttpStore._put_evidence,
    phone_ops.RegisterDevice: HttpStore._register,
}
