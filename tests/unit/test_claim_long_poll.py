"""The claim long-poll of ``phoned serve`` (issue #35): an idle daemon's wait is its claim,
so a waiting claim must lease nothing once its worker stopped. It answers ``task: null``
at once when withdrawn (``DELETE /v1/claims``, also when the withdraw overtook it), when a
newer claim of the same owner starts, and it leases nothing after its client went away.
A real uvicorn server (a client's disconnect is real) over a SQLite queue. A submit hands
its task over to the claim waiting for its phone from the thread that committed it; the
hand-over's rules are checked on ``Wakeup`` itself with looks that record their calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from phoned.daemon.server.wakeup import Wakeup
from planes import DND, SERIAL, plane_settings
from test_server_limits import LiveServer, write_role_tokens

CLAIM = {"owner": f"d1/{SERIAL}", "device": SERIAL}


class Live:
    """A live plane and a client speaking for each role."""

    def __init__(self, client: httpx.Client, tokens: dict[str, str]) -> None:
        self.client = client
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
        yield Live(client, tokens)


def _waiting(live: Live, wait: float = 20) -> tuple[threading.Thread, list[httpx.Response]]:
    """A claim long-polling on a thread of its own, and where its answer will be."""
    got: list[httpx.Response] = []
    waiter = threading.Thread(target=lambda: got.append(live.claim(wait)))
    waiter.start()
    time.sleep(0.5)  # it waits on the plane now
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
    """The waiting claim answers the submitted task, leased once: by the submit's own
    thread (``Wakeup.hand_over``), the route answering what it leased."""
    with live_plane(tmp_path) as live:
        waiter, got = _waiting(live)
        task = live.submit()
        assert live.state(task["id"]) == "dispatched"
        waiter.join(timeout=5)
        assert got[0].json()["task"]["id"] == task["id"]


def _looks(wakeup: Wakeup, stack: ExitStack, *devices: str | None) -> list[list[str]]:
    """A waiting claim per device; each records its looks and leases on the first."""
    seen: list[list[str]] = []
    for n, device in enumerate(devices):
        looked: list[str] = []
        seen.append(looked)

        def look(looked: list[str] = looked, n: int = n) -> dict[str, Any]:
            looked.append("look")
            return {"task": {"id": f"t{n}"}}

        stack.enter_context(wakeup.claiming(f"key{n}", f"d{n}/{device}", device, look))
    return seen


def test_a_hand_over_looks_only_for_the_tasks_phone_and_stops_at_the_first_lease() -> None:
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]
    with ExitStack() as stack:
        seen = _looks(wakeup, stack, "emu-a", "emu-b", None, "emu-b")
        wakeup.hand_over("emu-b")
        assert seen == [[], ["look"], [], []]  # emu-b's first claim leased it
        wakeup.hand_over(None)  # a task for any phone: the first claim that has not leased
        assert seen == [["look"], ["look"], [], []]


def test_a_closed_claim_answers_what_a_look_leased_and_looks_no_more() -> None:
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]
    with ExitStack() as stack:
        seen = _looks(wakeup, stack, "emu-a", "emu-b")
        claims = list(wakeup._claims.values())
        wakeup.hand_over("emu-a")
        assert claims[0].close() == {"task": {"id": "t0"}}  # the route answers it
        assert claims[1].close() is None
        wakeup.hand_over("emu-b")
        assert claims[1].looked() is None and seen == [["look"], []]
    wakeup.hand_over(None)  # the claims' routes ended: none looks
    assert seen == [["look"], []]


def test_a_claim_a_hand_over_woke_runs_before_the_submit_that_woke_it() -> None:
    """The submit's thread wakes the claim (``hand_over``), then hands its own result back
    to the loop: two callbacks queued in that order. The claim's coroutine then runs first,
    so its answer leaves before the submit's (through ``asyncio.wait_for`` it ran a turn
    later, after the submit's)."""
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]
    order: list[str] = []

    async def claim_then_submit() -> None:
        loop = asyncio.get_running_loop()
        submitted: asyncio.Future[None] = loop.create_future()

        def submit_thread_ends() -> None:  # as the submit's worker thread does, in one go
            wakeup.hand_over(SERIAL)
            loop.call_soon_threadsafe(submitted.set_result, None)  # the thread's result

        async def submit() -> None:
            await submitted
            order.append("submit")

        with wakeup.claiming("key", f"d1/{SERIAL}", SERIAL, lambda: {"task": {"id": "t"}}) as poll:

            async def claim() -> None:
                await wakeup.wait_change_async(wakeup.changes, 5.0, poll)
                order.append(f"claim {poll.found}")

            waiting = [asyncio.ensure_future(claim()), asyncio.ensure_future(submit())]
            await asyncio.sleep(0.05)  # both wait
            submit_thread_ends()
            await asyncio.gather(*waiting)

    asyncio.run(claim_then_submit())
    assert order == ["claim {'task': {'id': 't'}}", "submit"]


def test_a_claims_wait_ends_at_its_timeout_when_nothing_changes() -> None:
    wakeup = Wakeup(lambda: None, fallback_poll=60)  # type: ignore[arg-type, return-value]

    async def wait() -> float:
        with wakeup.claiming("key", f"d1/{SERIAL}", SERIAL, lambda: None) as poll:
            started = time.monotonic()
            await wakeup.wait_change_async(wakeup.changes, 0.2, poll)
            assert poll.found is None and not poll.ended
            return time.monotonic() - started

    assert 0.2 <= anyio.run(wait) < 3.0
