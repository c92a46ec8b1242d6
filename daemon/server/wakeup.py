"""Long-poll notification: wake waiting requests when the queue's event cursor moves.

Every transition of the queue appends an event, so the highest event cursor is a cheap
"something changed" counter. ``Wakeup`` keeps it: a write through this process calls
``poke()`` and waiters wake at once; a background thread re-reads the store every
``fallback_poll`` seconds so writes by other replicas over the same database wake
waiters too.

Long-polls wait with ``wait_past_async``: an asyncio future per waiter, resolved from the
follower thread through the waiter's event loop, so a waiting request holds no worker
thread. ``polling(key)`` counts the long-polls one token holds open; past
``polls_per_token`` it refuses with 429, so one token cannot pile up waiters without end.

A waiting claim (``claiming``) does not wait for the cursor: a submit through this
replica hands its task over (``offering``: the submit's thread holds the claims waiting
for that task's phone and the store runs them in the submit's own transaction,
``ops.HandOver``, so the lease needs no hop to the event loop and back and no commit of
its own, issue #35), and ``poke()`` wakes the others at once; the follower's cursor moves
wake them too (other replicas' writes). A claim ends early, leasing nothing more, when
its owner withdraws it (``withdraw``), when a newer claim of the same owner starts, or
when the route ends it (``end``: its client went away). Its looks, the route's and a
hand-over's, take turns under the claim's own lock, and ``close`` ends them: whatever a
look leased is answered.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from fastapi import HTTPException
from phoned.daemon.lifecycle import ops
from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.store.protocol import Store

log = logging.getLogger("phoned.server.wakeup")

# a withdraw that found no waiting claim ends the owner's claim that starts waiting this
# soon after (the withdraw overtook a claim still in its first look)
WITHDRAWN_S = 2.0


Answer = Callable[[TaskRecord | None], "dict[str, Any] | None"]


class ClaimPoll:
    """One waiting claim of ``owner`` for ``device`` (None: any) (``Wakeup.claiming``);
    ``ended`` once it must lease nothing more (withdrawn, superseded by a newer claim of
    the owner, client gone). ``claim()`` is the claim as of now, ``apply`` runs it on the
    calling thread's store, and ``answer`` is the route's answer to what a claim leased
    (None: nothing), recording the lease."""

    def __init__(
        self,
        owner: str,
        device: str | None,
        claim: Callable[[], ops.Claim],
        apply: Callable[[ops.Claim], TaskRecord | None],
        answer: Answer,
    ) -> None:
        self.owner = owner
        self.device = device
        self.ended = False
        self.waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self.claim = claim
        self._apply = apply
        self._answer = answer
        self._lock = threading.Lock()  # one look at a time; held by worker threads only
        self._found: dict[str, Any] | None = None
        self._closed = False

    def looked(self) -> dict[str, Any] | None:
        """What a look leased, now or before (a hand-over's); None when nothing (or ended)."""
        with self._lock:
            if self._open():
                self._found = self._answer(self._apply(self.claim()))
            return self._found

    @property
    def found(self) -> dict[str, Any] | None:
        """What a look leased so far (set before the look wakes the claim; no look runs
        after one leased)."""
        return self._found

    def close(self) -> dict[str, Any] | None:
        """No look runs any more; what one leased, which the route must answer."""
        with self._lock:
            self._closed = True
            return self._found

    def takes(self, device: str | None) -> bool:
        """Whether this claim may lease a task for ``device`` (None: any phone's)."""
        return self.device is None or device is None or device == self.device

    def _open(self) -> bool:
        """Whether a look may still lease for this claim (its lock is held)."""
        return self._found is None and not self.ended and not self._closed

    def _hold(self) -> bool:
        """Take the claim's turn for a hand-over, if no look runs now and it may still
        lease; True when taken (``_release`` ends the turn)."""
        if not self._lock.acquire(blocking=False):
            return False  # its own look runs: it sees the task once the submit commits
        if self._open():
            return True
        self._lock.release()
        return False

    def _grant(self, task: TaskRecord) -> None:
        """A hand-over leased ``task`` to this claim (its turn is held)."""
        try:
            self._found = self._answer(task)
        except LifecycleError as exc:  # the lease stands; it expires unanswered
            log.warning("the lease of %s to %s was not recorded: %s", task.id, self.owner, exc)

    def _release(self) -> None:
        """End the hand-over's turn (``_hold``)."""
        self._lock.release()


class Offer:
    """The waiting claims a submit is handed to (``Wakeup.offering``), each held: the
    store runs their ``claims()`` with the submit (``ops.HandOver``), and the one that
    leased is ``granted`` what it took."""

    def __init__(self, held: list[ClaimPoll]) -> None:
        self._held = held

    def claims(self) -> tuple[ops.Claim, ...]:
        """Each held claim as of now, in the order they are tried."""
        return tuple(poll.claim() for poll in self._held)

    def granted(self, handed: ops.HandedOver) -> None:
        """The claim that ``handed`` says leased a task gets it as its answer."""
        if handed.by is not None and handed.taken is not None:
            self._held[handed.by]._grant(handed.taken)


class Wakeup:
    """The queue's latest event cursor, and a condition to wait for it to move."""

    def __init__(
        self,
        store_factory: Callable[[], Store],
        fallback_poll: float,
        polls_per_token: int = 32,
    ) -> None:
        self._factory = store_factory
        self._fallback = fallback_poll
        self.polls_per_token = polls_per_token
        self._cond = threading.Condition()
        self._cursor = 0
        self._futures: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = set()
        self._changes = 0  # pokes and cursor moves: what a waiting claim waits past
        self._claims: dict[str, ClaimPoll] = {}  # owner -> its waiting claim
        self._withdrawn: dict[str, float] = {}  # owner -> when a withdraw found no claim
        self._polls: dict[Hashable, int] = {}
        self._poked = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def cursor(self) -> int:
        """The highest event cursor seen so far."""
        with self._cond:
            return self._cursor

    def start(self) -> None:
        """Read the current cursor, then follow the store on a background thread."""
        self._thread = threading.Thread(target=self._follow, name="wakeup", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop following and wake every waiter."""
        self.release()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def release(self) -> None:
        """Shutting down: every waiter returns now, later waits return at once."""
        self._stop.set()
        self._poked.set()
        with self._cond:
            self._cond.notify_all()
            self._wake_futures()

    @property
    def released(self) -> bool:
        """True once ``release`` (or ``stop``) was called: long-polls answer at once."""
        return self._stop.is_set()

    @property
    def changes(self) -> int:
        """How many writes through this process and cursor moves were seen so far."""
        with self._cond:
            return self._changes

    @contextmanager
    def offering(self, device: str | None) -> Iterator[Offer]:
        """A task for ``device`` (None: any phone) is being committed through this replica:
        the waiting claims that may take it, each held (no look of its own runs meanwhile;
        one whose look runs now is left out, as it sees the task once it is committed).
        Then ``poke``, which wakes every waiting claim: the one that leased answers it,
        the others look again."""
        with self._cond:
            polls = [p for p in self._claims.values() if not p.ended and p.takes(device)]
        held = [poll for poll in polls if poll._hold()]
        try:
            yield Offer(held)
        finally:
            for poll in held:
                poll._release()
            self.poke()

    def poke(self) -> None:
        """Something was written in this process: waiting claims look again now, and the
        cursor is re-read."""
        with self._cond:
            self._changes += 1
            self._wake_claims()
        self._poked.set()

    def wait_past(self, cursor: int, timeout: float) -> int:
        """Block until the cursor exceeds ``cursor`` or ``timeout`` passed; the cursor then."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._cursor <= cursor and not self._stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._cursor

    async def wait_past_async(self, cursor: int, timeout: float) -> int:
        """``wait_past`` for a coroutine: waits on the event loop, holding no thread."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            with self._cond:
                if self._cursor > cursor or self._stop.is_set():
                    return self._cursor
                future: asyncio.Future[None] = loop.create_future()
                waiter = (loop, future)
                self._futures.add(waiter)
            left = deadline - loop.time()
            try:
                if left <= 0:
                    return self.cursor
                await _resolved(loop, future, left)
                if loop.time() >= deadline:
                    return self.cursor
            finally:
                with self._cond:
                    self._futures.discard(waiter)

    async def wait_change_async(self, seen: int, timeout: float, poll: ClaimPoll) -> None:
        """Until ``changes`` exceeds ``seen``, ``poll`` ended, ``release`` or ``timeout``;
        waits on the event loop, holding no thread."""
        loop = asyncio.get_running_loop()
        with self._cond:
            if self._changes > seen or poll.ended or self._stop.is_set():
                return
            future: asyncio.Future[None] = loop.create_future()
            poll.waiter = (loop, future)
        try:
            await _resolved(loop, future, max(0.0, timeout))
        finally:
            with self._cond:
                poll.waiter = None

    @contextmanager
    def claiming(
        self,
        key: Hashable,
        claim: Callable[[], ops.Claim],
        apply: Callable[[ops.Claim], TaskRecord | None],
        answer: Answer,
    ) -> Iterator[ClaimPoll]:
        """One waiting claim (``claim()``: its owner, device and terms as of now), counted
        as a long-poll of ``key`` (429 past ``polls_per_token``); an older waiting claim of
        the same owner ends now. ``apply`` and ``answer`` make its looks (``ClaimPoll``)."""
        with self.polling(key):
            first = claim()
            owner = first.owner
            poll = ClaimPoll(owner, first.device, claim, apply, answer)
            with self._cond:
                older = self._claims.get(owner)
                self._claims[owner] = poll
                if older is not None:
                    self._end(older)
                if time.monotonic() - self._withdrawn.pop(owner, -WITHDRAWN_S) < WITHDRAWN_S:
                    poll.ended = True  # withdrawn while its first look ran
            try:
                yield poll
            finally:
                with self._cond:
                    poll.ended = True  # a hand-over that has not started its look leaves it
                    if self._claims.get(owner) is poll:
                        del self._claims[owner]

    def withdraw(self, owner: str) -> int:
        """End ``owner``'s waiting claim; how many ended (0 or 1). With none waiting here,
        a claim of ``owner`` that starts waiting within ``WITHDRAWN_S`` ends at once: the
        withdraw overtook it (it was still in its first look)."""
        now = time.monotonic()
        with self._cond:
            poll = self._claims.pop(owner, None)
            if poll is not None:
                self._end(poll)
                return 1
            for gone in [o for o, at in self._withdrawn.items() if now - at >= WITHDRAWN_S]:
                del self._withdrawn[gone]
            self._withdrawn[owner] = now
            return 0

    def end(self, poll: ClaimPoll) -> None:
        """``poll`` leases nothing more (its client went away); its wait returns now."""
        with self._cond:
            self._end(poll)

    def _end(self, poll: ClaimPoll) -> None:
        """Mark ``poll`` ended and wake its wait (the lock is held)."""
        poll.ended = True
        if poll.waiter is not None:
            _resolve_on(*poll.waiter)

    @contextmanager
    def polling(self, key: Hashable) -> Iterator[None]:
        """Count one open long-poll of ``key`` (a token); 429 past ``polls_per_token``."""
        with self._cond:
            held = self._polls.get(key, 0)
            if held >= self.polls_per_token:
                raise HTTPException(
                    429,
                    f"this token already holds {held} open long-polls (at most "
                    f"{self.polls_per_token}); retry when one returns",
                    {"Retry-After": "1"},
                )
            self._polls[key] = held + 1
        try:
            yield
        finally:
            with self._cond:
                self._polls[key] -= 1
                if not self._polls[key]:
                    del self._polls[key]

    def _wake_futures(self) -> None:
        """Resolve every async waiter's future on its own loop (the lock is held)."""
        for loop, future in self._futures:
            _resolve_on(loop, future)
        self._futures.clear()
        self._wake_claims()

    def _wake_claims(self) -> None:
        """Resolve the future of every waiting claim (the lock is held)."""
        for poll in self._claims.values():
            if poll.waiter is not None:
                _resolve_on(*poll.waiter)

    def _follow(self) -> None:
        run_on_own_store(self._factory, self._follow_on, "cannot open the queue to follow it")

    def _follow_on(self, store: Store) -> None:
        while not self._stop.is_set():
            self._advance(store)
            self._poked.wait(self._fallback)
            self._poked.clear()

    def _advance(self, store: Store) -> None:
        try:
            latest = self._cursor
            while batch := store.events(after=latest, limit=1000):
                latest = batch[-1].cursor
        except LifecycleError as exc:
            log.warning("cannot read the queue's events: %s", exc)
            return
        with self._cond:
            if latest > self._cursor:
                self._cursor = latest
                self._changes += 1
                self._cond.notify_all()
                self._wake_futures()


def run_on_own_store(
    open_store: Callable[[], Store],
    loop: Callable[[Store], None],
    cannot_open: str,
    logger: logging.Logger = log,
) -> None:
    """Run a server thread's ``loop`` on a store of its own, closed when the loop ends.

    Each background thread (follower, sweeper, schedules) opens its own store, as a store
    serves one thread; one that cannot be opened ends only that thread, logged as
    ``cannot_open`` on ``logger``, and the server goes on answering requests.
    """
    try:
        store = open_store()
    except LifecycleError as exc:
        logger.error("%s: %s", cannot_open, exc)
        return
    try:
        loop(store)
    finally:
        store.close()


def _resolve_on(loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
    """Resolve ``future`` on its own ``loop`` (from any thread)."""
    with suppress(RuntimeError):  # that loop is closed: its waiter is gone
        loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _resolved(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[None], timeout: float
) -> None:
    """Until ``future`` is resolved, or resolved by its timer after ``timeout`` s.

    Awaited directly, not through ``asyncio.wait_for``: that waits on a second future
    which the first one's callback resolves, one more turn of the loop before the waiter
    runs. With one turn, a claim a submit's hand-over woke (``_resolve_on``, before the
    submit's thread returns) runs in the same turn as the submit's route, and first: its
    answer leaves before the submit's (issue #35)."""
    timer = loop.call_later(timeout, _resolve, future)
    try:
        await future
    finally:
        timer.cancel()
