#!/usr/bin/env python3
"""Measure the HTTP upstream: pickup latency with long-poll and idle requests per minute.

Starts ``phoned serve`` over a fresh SQLite queue and one worker-shaped loop over
``HttpStore`` (claim; pause watch ``list_tasks``; ``wait_for_work``), exactly the rounds
``phoned.daemon.runtime.worker.Worker`` makes: the idle wait is the worker's claim,
long-polled, so a submitted task is leased within that request and the next ``claim``
returns it (issue #35). The worker is a process of its own, as a daemon is the planner's
(the SQLite pickup of ``bench/run.py`` is measured across processes too). Pickup =
planner's submit call started -> the worker's claim returned the task, on the machine's
monotonic clock, which both processes read (median of ``--n``; the submit call's own
round trip beside it). Idle = requests the worker sent in ``--idle`` seconds without
tasks, scaled to a minute.

``--floor`` measures the floor beside it, interleaved pickup by pickup (issue #35): the
same three processes, the same HTTP client (``plane_client.Transport``) and server
(uvicorn with httptools), with no queue: a bare relay whose submit hands its body to the
claim waiting on it (``Relay``). A slow spell of the machine then lands on both.

    .venv/bin/python scripts/bench_control_plane.py --n 50 --idle 60 --floor
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import uvicorn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from outage_test import free_port, start_plane, stop_plane, write_role_tokens  # noqa: E402
from phoned.daemon.lifecycle.contract import validate_task  # noqa: E402
from phoned.daemon.lifecycle.errors import LifecycleError  # noqa: E402
from phoned.daemon.lifecycle.states import TaskState  # noqa: E402
from phoned.daemon.store.http_store import HttpStore, PlaneLink  # noqa: E402
from phoned.daemon.store.plane_client import PlaneClient, Transport  # noqa: E402

from scripts.stats import ratio, summarize  # noqa: E402

SERIAL = "emu-bench"


def worker(url: str, token: str, work: Path, out: Any, stop: Any) -> None:
    """A worker's rounds until ``stop``: each claimed task's id and when (monotonic) its
    claim returned go to ``out``, then ("sent", monotonic times of every request)."""
    link = PlaneLink(url, token, work / "d.db")
    daemon = HttpStore(link)  # idle_wait 30 s (default)
    sent: list[float] = []
    original = daemon._t.send

    def counting(method: str, path: str, **kw: Any) -> Any:
        sent.append(time.monotonic())
        return original(method, path, **kw)

    daemon._t.send = counting  # type: ignore[method-assign]
    try:
        while not stop.is_set():
            task = daemon.claim(f"bench/{SERIAL}", SERIAL, time.time())
            if task is None:
                daemon.list_tasks(states=(TaskState.WAITING, TaskState.PERMISSION), device=SERIAL)
                daemon.wait_for_work(1.0, stop)
                continue
            out.put((task.id, time.monotonic()))
            running = daemon.start(task.ticket, time.time())
            daemon.complete(running.ticket, time.time(), "dnd.priority", ("ev:bench",))
    finally:
        out.put(("sent", sent))
        link.close()


class Relay:
    """The floor's server (ASGI): ``POST /claim`` waits until ``POST /submit`` hands it the
    submitted body, which both answer as ``{"task": body}``. No token, no queue, no thread."""

    def __init__(self) -> None:
        self.waiting: asyncio.Future[bytes] | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        if scope["path"] == "/claim":
            self.waiting = asyncio.get_running_loop().create_future()
            answer = await self.waiting
        else:
            answer = json.dumps({"task": json.loads(body)}).encode()
            if self.waiting is not None and not self.waiting.done():
                self.waiting.set_result(answer)
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(answer))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})


def relay_worker(url: str, out: Any, stop: Any) -> None:
    """The floor's worker: a claim long-polled again as soon as it answered; each answer's
    id and when (monotonic) it came go to ``out``."""
    transport = Transport(url, "floor")
    try:
        while not stop.is_set():
            answer = transport.send("POST", "/claim", json={}, wait=30.0)
            out.put((answer.body["task"]["id"], time.monotonic()))
    except LifecycleError:  # the relay stopped
        pass
    finally:
        transport.close()


def start_relay(port: int) -> subprocess.Popen[bytes]:
    args = [sys.executable, __file__, "--relay", str(port)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    probe = Transport(f"http://127.0.0.1:{port}", "floor")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            probe.send("POST", "/submit", json={"id": "probe"})
            probe.close()
            return proc
        except LifecycleError:
            time.sleep(0.1)
    raise RuntimeError("the relay did not start")


def summary(name: str, ms: dict[str, Any]) -> str:
    """A line of ``scripts.stats.summarize``'s figures (``bench/sections/daemon.py`` reads it)."""
    return (f"{name} over {ms['n']}: median {ms['median']:.1f} ms, p90 {ms['p90']:.1f} ms, "
            f"max {ms['max']:.1f} ms")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description="control-plane pickup and idle cost")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--floor", action="store_true", help="the bare relay, interleaved")
    parser.add_argument("--relay", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.relay:  # the floor's server process (start_relay)
        uvicorn.run(Relay(), host="127.0.0.1", port=args.relay, http="httptools",
                    log_level="warning", access_log=False)  # fmt: skip
        return 0
    work = Path(tempfile.mkdtemp(prefix="phoned-bench-"))
    tokens = write_role_tokens(work, SERIAL)
    port = free_port()
    proc = start_plane(work, port)
    url = f"http://127.0.0.1:{port}"
    planner = PlaneClient(url, tokens["planner"])
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    stop = ctx.Event()
    child = ctx.Process(target=worker, args=(url, tokens["daemon"], work, out, stop))
    floor: Floor | None = None
    try:
        floor = Floor(ctx, stop) if args.floor else None
        child.start()
        time.sleep(2.0)  # the worker has started and is in its long-poll
        t_idle = time.monotonic()
        time.sleep(args.idle)
        t_busy = time.monotonic()
        spec = validate_task(
            {
                "method": "dnd.set",
                "params": {"mode": "off"},
                "conversation_id": "b",
                "device": SERIAL,
            }
        )
        doc = spec.model_dump(mode="json")  # the floor relays the same body
        latencies, submits = [], []
        for n in range(args.n):
            if floor is not None and n % 2 == 0:  # every other pickup, the floor's first
                floor.pickup(doc)
            time.sleep(0.3)  # the worker is back in its long-poll
            t0 = time.monotonic()
            task = planner.submit(spec, time.time())
            submits.append(time.monotonic() - t0)
            task_id, claimed_at = out.get(timeout=30)
            assert task_id == task.id, f"claimed {task_id}, submitted {task.id}"
            latencies.append(claimed_at - t0)
            if floor is not None and n % 2 == 1:
                floor.pickup(doc)
        stop.set()
        kind, sent = out.get(timeout=60)
        assert kind == "sent"
        child.join(timeout=10)
        idle = [t for t in sent if t_idle <= t < t_busy]
        per_minute = len(idle) * 60.0 / args.idle
        pickup = summarize([x * 1000 for x in latencies])
        print(summary("pickup latency submit->claimed", pickup))
        print(f"the planner's submit call alone: median {statistics.median(submits) * 1e3:.1f} ms")
        print(
            f"idle: {len(idle)} requests in {args.idle:g} s = {per_minute:.2f} requests per idle minute per worker"
        )
        if floor is not None:
            floor_ms = summarize([x * 1000 for x in floor.latencies])
            print(summary("floor: bare relay pickup, interleaved", floor_ms))
            print(
                f"pickup over its floor: {ratio(pickup['median'], floor_ms['median'])}x (medians)"
            )
        return 0
    finally:
        stop.set()
        if child.is_alive():
            child.join(timeout=10)
        if child.is_alive():
            child.kill()
        planner.close()
        stop_plane(proc)
        if floor is not None:
            floor.close()


class Floor:
    """The bare relay's server, worker and planner side (``Relay``), started at once."""

    def __init__(self, ctx: Any, stop: Any) -> None:
        port = free_port()
        self.server = start_relay(port)
        url = f"http://127.0.0.1:{port}"
        self.out: Any = ctx.Queue()
        self.worker = ctx.Process(target=relay_worker, args=(url, self.out, stop), daemon=True)
        self.worker.start()
        self.planner = Transport(url, "floor")
        self.latencies: list[float] = []
        time.sleep(2.0)  # its worker is in its long-poll

    def pickup(self, doc: dict[str, Any]) -> None:
        """One submit through the relay, timed to its worker's answer."""
        time.sleep(0.3)  # the worker is back in its long-poll
        task_id = uuid.uuid4().hex
        t0 = time.monotonic()
        self.planner.send("POST", "/submit", json={**doc, "id": task_id})
        got, claimed_at = self.out.get(timeout=30)
        assert got == task_id, f"relayed {got}, submitted {task_id}"
        self.latencies.append(claimed_at - t0)

    def close(self) -> None:
        self.planner.close()
        self.server.kill()  # uvicorn would wait for the waiting claim; the worker then ends
        self.server.wait(timeout=15)
        self.worker.join(timeout=10)
        if self.worker.is_alive():
            self.worker.kill()


if __name__ == "__main__":
    sys.exit(main())
