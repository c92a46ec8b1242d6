"""The claim long-poll of ``phoned serve`` (issue #35): an idle daemon's wait is its claim,
so a waiting claim must lease nothing once its worker stopped. It answers ``task: null``
at once when withdrawn (``DELETE /v1/claims``, also when the withdraw overtook it), when a
newer claim of the same owner starts, and it leases nothing after its client went away.
A real uvicorn server (a client's disconnect is real) over a SQLite queue. A submit hands
its task over to the claims waiting for its phone in its own transaction; the hand-over's
rules are checked on ``Wakeup`` itself with claims that record their looks.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx
from phoned.daemon.lifecycle import ops
from phoned.daemon.server.wakeup import ClaimPoll, Offer, Wakeup
from planes import DND, SERIAL, plane_settings
from test_server_limits import LiveServer, write_role_tokens

CLAIM = {"owner": f"d1/{SERIAL}", "device": SERIAL}


class Live:
    """A live plane and a client speaking for each role."""

    def __init__(self, client: httpx.Client, tokens: dict[str, str], wakeup: Wakeup) -> None:
        self.client = client
        self.wakeup = wakeup  # the plane's, to see when a claim waits on it
        self.headers = {role: {"Authorization": f"Bearer {t}"} for role, t in tokens.items()}

    def claim(self, wait: float, **extra: Any) -> httpx.Response:
        body = {**CLAIM, "wait": wait, **extra}
        return self.client.post("/v1/claims", json=body, headers=self.headers["daemon"])

    def withdraw(self, owner: str = CLAIM["owner"]) -> httpx.Response:
        params = {"owner": owner}
        return self.client.delete("/v1/claims", params=params, headers=self.headers["daemon"])

    def submit(self) -> dict[str, Any]:
        task = {**DND, "device": SERIAL}
        answer = self.client.post("/v1/tasks", json=task, headers=self.headers["planner"])
        return dict(answer.json()["task"])

    def state(self, task_id: str) -> str:
        answer = self.client.get(f"/v1/tasks/{task_id}", headers=self.headers["planner"])
        return str(answer.json()["task"]["state"])


@contextmanager
def live_plane(tmp: Path) -> Iterator[Live]:
    tokens = write_role_tokens(tmp / "tokens.yaml")
    with (
        LiveServer(plane_settings(tmp, max_wait=20.0)) as live,
        httpx.Client(base_url=live.url, timeout=30) as client,
    ):
        yield Live(client, tokens, live.server.config.app.state.plane.wakeup)


def _waiting(live: Live, wait: float = 20) -> tuple[threading.Thread, list[httpx.Response]]:
    """A claim long-polling on a thread of its own, and where its answer will be."""
    got: list[httpx.Response] = []
    waiting = live.wakeup._claims  # owner -> its waiting claim
    before = waiting.get(CLAIM["owner"])
    waiter = threading.Thread(target=lambda: got.append(live.claim(wait)))
    waiter.start()
    # it waits on the plane once the plane holds it (a fixed 0.5 s was too short for a
    # loaded CI machine: the submit came first and found no claim to hand its task to)
    deadline = time.monotonic() + 10
    while waiting.get(CLAIM["owner"]) in (None, before):
        assert time.monotonic() < deadline, "the claim did not start waiting"
        time.sleep(0.01)
    return waiter, got


def test_a_withdrawn_claim_answers_at_once_and_leases_nothing_after(tmp_path: Path) -> None:
    with live_plane(tmp_path) as live:
        waiter, got = _waiting(live)
        assert live.withdraw().json() == {"owner": CLAIM["owner"], "withdrawn": 1}
        waiter.join(timeout=5)
        assert not waiter.is_alive(), "the withdrawn claim went on waiting"
        assert got[0].status_code == 200 and got[0].json()["task"] is None
        task = live.submit()
        time.sleep(0.3)
        assert live.state(task["id"]) == "queued"


def test_a_withdraw_that_overtook_the_claim_ends_its_wait(tmp_path: Path) -> None:
    """The worker stopped as its claim was on its way: the claim's first look finds
    nothing, and it does not start waiting for work its worker will not run."""
    with live_plane(tmp_path) as live:
        assert live.withdraw().json()["withdrawn"] == 0  # no claim was waiting yet
        began = time.monotonic()
        answer = live.claim(wait=20)
        assert answer.json()["task"] is None and time.monotonic() - began < 5


def test_a_newer_claim_of_the_owner_ends_the_waiting_one(tmp_path: Path) -> None:
    with live_plane(tmp_path) as live:
        older, got = _waiting(live)
        newer, got_newer = _waiting(live)
        older.join(timeout=5)
        assert not older.is_alive() and got[0].json()["task"] is None
        task = live.submit()
        newer.join(timeout=10)
        assert got_newer[0].json()["task"]["id"] == task["id"]


def test_a_claim_whose_client_went_away_leases_nothing(tmp_path: Path) -> None:
    """A daemon that died mid-wait (its connection closed) is leased nothing: the task
    stays queued for a daemon that is there."""
    with live_plane(tmp_path) as live:
        gone = httpx.Client(base_url=str(live.client.base_url), timeout=0.5)
        body = {**CLAIM, "wait": 20}
        with contextlib.suppress(httpx.ReadTimeout):  # the client gives up
            gone.post("/v1/claims", json=body, headers=live.headers["daemon"])
        gone.close()  # and closes its connection
        time.sleep(0.3)
        task = live.submit()
        time.sleep(0.5)
        assert live.state(task["id"]) == "queued"


def test_a_claim_answer_names_the_cursor_and_a_withdraw_needs_the_phone(tmp_path: Path) -> None:
    with live_plane(tmp_path) as live:
        empty = live.claim(wait=0).json()
        assert empty["task"] is None and isinstance(empty["cursor"], int)
        assert live.withdraw("d1/emu-other").status_code == 403


def test_a_submit_hands_its_task_to_the_claim_waiting_for_its_phone(tmp_path: Path) -> None:
    """The waiting claim answers the submitted task, leased once: in the submit's own
    transaction (``Wakeup.offering``, ``ops.HandOver``), the route answering what it leased."""
    with live_plane(tmp_path) as live:
        waiter, got = _waiting(live)
        task = live.submit()
        assert live.state(task["id"]) == "dispatched"
        waiter.join(timeout=5)
        assert got[0].json()["task"]["id"] == task["id"]


class Claimant:
    """A waiting claim's terms for ``Wakeup.claiming``: its own looks lease the task
    ``lease`` names (None: nothing) and are recorded in ``seen``; its answer names what it
    took, whether its look or a hand-over leased it."""

    def __init__(self, owner: str, device: str | None, lease: str | None = None) -> None:
        self.owner, self.device, self.lease = owner, device, lease
        self.seen: list[str] = []

    def claim(self) -> ops.Claim:
        return ops.Claim(self.owner, self.device, time.time())

    def apply(self, claim: ops.Claim) -> Any:
        self.seen.append("look")
        return None if self.lease is None else SimpleNamespace(id=self.lease)

    @staticmethod
    def answer(task: Any) -> dict[str, Any] | None:
        return None if task is None else {"task": {"id": task.id}}


def _waiting_claims(wakeup: Wakeup, stack: ExitStack, *devices: str | None) -> list[ClaimPoll]:
    """A waiting claim per device (owner ``d<n>/<device>``), each leasing ``t<n>``."""
    polls = []
    for n, device in enumerate(devices):
        terms = Claimant(f"d{n}/{device}", device, lease=f"t{n}")
        polls.append(stack.enter_context(
            wakeup.claiming(f"key{n}", terms.claim, terms.apply, terms.answer)
        ))  # fmt: skip
    return polls


def _handed(offer: Offer, owner: str | None) -> ops.HandedOver:
    """What a store's ``HandOver`` answers when the claim of ``owner`` leased (None: none)."""
    owners = [claim.owner for claim in offer.claims()]
    task: Any = SimpleNamespace(id="new")
    if owner is None:
        return ops.HandedOver(task)
    return ops.HandedOver(task, task, owners.index(owner))


def test_an_offer_holds_only_the_claims_that_may_take_the_tasks_phone() -> None:
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]
    with ExitStack() as stack:
        polls = _waiting_claims(wakeup, stack, "emu-a", "emu-b", None, "emu-b")
        with wakeup.offering("emu-b") as offer:
            assert [c.owner for c in offer.claims()] == ["d1/emu-b", "d2/None", "d3/emu-b"]
            offer.granted(_handed(offer, "d3/emu-b"))
        assert [p.found for p in polls] == [None, None, None, {"task": {"id": "new"}}]
        with wakeup.offering(None) as offer:  # any phone: every claim that has not leased
            assert [c.owner for c in offer.claims()] == ["d0/emu-a", "d1/emu-b", "d2/None"]
            offer.granted(_handed(offer, None))
        assert [p.found for p in polls] == [None, None, None, {"task": {"id": "new"}}]


def test_an_offer_leaves_out_a_claim_whose_own_look_runs_and_waits_for_none() -> None:
    """A claim looking on another thread sees the task once the submit commits; the
    submit does not wait for that look."""
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]
    looking, release = threading.Event(), threading.Event()
    terms = Claimant(f"d1/{SERIAL}", SERIAL)

    def slow_look(claim: ops.Claim) -> Any:
        looking.set()
        release.wait(5)
        return terms.apply(claim)

    with wakeup.claiming("key", terms.claim, slow_look, terms.answer) as poll:
        look = threading.Thread(target=poll.looked)
        look.start()
        assert looking.wait(5)
        began = time.monotonic()
        with wakeup.offering(SERIAL) as offer:
            assert offer.claims() == ()
        assert time.monotonic() - began < 1
        release.set()
        look.join(5)
        assert terms.seen == ["look"] and poll.found is None


def test_a_closed_claim_answers_what_a_hand_over_leased_and_looks_no_more() -> None:
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]
    with ExitStack() as stack:
        polls = _waiting_claims(wakeup, stack, "emu-a", "emu-b")
        with wakeup.offering("emu-a") as offer:
            offer.granted(_handed(offer, "d0/emu-a"))
        assert polls[0].close() == {"task": {"id": "new"}}  # the route answers it
        assert polls[1].close() is None
        with wakeup.offering("emu-b") as offer:
            assert offer.claims() == ()  # closed: it leases nothing more
        assert polls[1].looked() is None
    with wakeup.offering(None) as offer:  # the claims' routes ended: none is offered
        assert offer.claims() == ()


def test_a_claim_a_hand_over_woke_runs_before_the_submit_that_woke_it() -> None:
    """The submit's thread wakes the claim (``offering``'s poke), then hands its own result
    back to the loop: two callbacks queued in that order. The claim's coroutine then runs
    first, so its answer leaves before the submit's (through ``asyncio.wait_for`` it ran a
    turn later, after the submit's)."""
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]
    order: list[str] = []
    terms = Claimant(f"d1/{SERIAL}", SERIAL)

    async def claim_then_submit() -> None:
        loop = asyncio.get_running_loop()
        submitted: asyncio.Future[None] = loop.create_future()

        def submit_thread_ends() -> None:  # as the submit's worker thread does, in one go
            with wakeup.offering(SERIAL) as offer:
                offer.granted(_handed(offer, terms.owner))
            loop.call_soon_threadsafe(submitted.set_result, None)  # the thread's result

        async def submit() -> None:
            await submitted
            order.append("submit")

        with wakeup.claiming("key", terms.claim, terms.apply, terms.answer) as poll:

            async def claim() -> None:
                await wakeup.wait_change_async(wakeup.changes, 5.0, poll)
                order.append(f"claim {poll.found}")

            waiting = [asyncio.ensure_future(claim()), asyncio.ensure_future(submit())]
            await asyncio.sleep(0.05)  # both wait
            submit_thread_ends()
            await asyncio.gather(*waiting)

    asyncio.run(claim_then_submit())
    assert order == ["claim {'task': {'id': 'new'}}", "submit"]


def test_a_claims_wait_ends_at_its_timeout_when_nothing_changes() -> None:
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]

    async def wait() -> float:
        terms = Claimant(f"d1/{SERIAL}", SERIAL)
        with wakeup.claiming("key", terms.claim, terms.apply, terms.answer) as poll:
            started = time.monotonic()
            await wakeup.wait_change_async(wakeup.changes, 0.2, poll)
            assert poll.found is None and not poll.ended
            return time.monotonic() - started

    assert 0.2 <= anyio.run(wait) < 3.0
