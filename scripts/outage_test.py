#!/usr/bin/env python3
"""The control plane goes away for N seconds in the middle of a daemon's work (default 60).

Starts ``phoned serve`` over a fresh SQLite queue, queues ``--tasks`` tasks, and drives them
like a worker through ``HttpStore`` (claim, start, journal, evidence, complete). After the
first half the plane is stopped; the daemon keeps reporting (spooled to its outbox),
restarts itself once while the plane is down, and the plane comes back after N seconds.
Then it checks that every report arrived, in order: each task completed, its pending
evidence reference resolved, its journal confirmed, its events in state order.

    .venv/bin/python scripts/outage_test.py --outage 60
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from phoned.daemon.lifecycle.contract import validate_task  # noqa: E402
from phoned.daemon.lifecycle.records import JournalOutcome, TaskRecord  # noqa: E402
from phoned.daemon.lifecycle.states import TaskState  # noqa: E402
from phoned.daemon.server.auth import Role, make_token  # noqa: E402
from phoned.daemon.store.http_store import HttpStore, PlaneLink  # noqa: E402
from phoned.daemon.store.plane_client import PlaneClient  # noqa: E402

from scripts.stack import free_port  # noqa: E402

SERIAL = "emu-outage"


def start_plane(work: Path, port: int) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "phoned.daemon.verbs.serve", "--queue", f"sqlite:///{work / 'queue.db'}",
            "--port", str(port), "--tokens", str(work / "tokens.yaml"), "--state-dir", str(work / "serve")]  # fmt: skip
    log = (work / "serve.log").open("ab")
    proc = subprocess.Popen(args, stdout=log, stderr=log, cwd=ROOT, env=os.environ.copy())
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("phoned serve did not start")


def write_role_tokens(work: Path, serial: str) -> dict[str, str]:
    """Write ``work/tokens.yaml`` with a daemon token for ``serial`` and a planner token;
    the secrets by role (what a test plane's callers present)."""
    tokens, entries = {}, []
    for role, devices in (("daemon", (serial,)), ("planner", ())):
        tokens[role], entry = make_token(Role(role), devices, name=role)
        entries.extend(yaml.safe_load(entry))
    (work / "tokens.yaml").write_text(yaml.safe_dump({"tokens": entries}))
    (work / "tokens.yaml").chmod(0o600)  # serve refuses a group/world-writable tokens file
    return tokens


def stop_plane(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=15)


def run_task(daemon: HttpStore, n: int) -> tuple[str, str]:
    """One task's reports; returns (task id, evidence ref as handed out)."""
    claimed = daemon.claim(f"outage-d/{SERIAL}", SERIAL, time.time(), lease_s=600)
    assert claimed is not None, "no task to claim"
    running = daemon.start(claimed.ticket, time.time())
    daemon.journal_before(running.ticket, f"op-{n}", "dnd.set", "zen_mode", "sha256:x", time.time())
    return running.id, _finish(daemon, running, n)


def _finish(daemon: HttpStore, running: TaskRecord, n: int) -> str:
    daemon.journal_after(f"op-{n}", JournalOutcome.CONFIRMED_SUCCESS, "read back", time.time())
    ref = daemon.put_evidence(running.ticket, "outcome", {"status": "met", "n": n}, time.time())
    daemon.complete(running.ticket, time.time(), "dnd.priority", (ref,))
    return ref


def main() -> int:
    parser = argparse.ArgumentParser(description="control-plane outage test")
    parser.add_argument("--outage", type=float, default=60.0, help="seconds the plane is down")
    parser.add_argument("--tasks", type=int, default=6)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="phoned-outage-"))
    tokens = write_role_tokens(work, SERIAL)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_plane(work, port)
    links: list[PlaneLink] = []  # one per daemon process
    try:
        planner = PlaneClient(url, tokens["planner"])
        for _ in range(args.tasks):
            spec = validate_task({"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "o",
                                  "device": SERIAL, "completion_target": "dnd.priority"})  # fmt: skip
            planner.submit(spec, time.time())
        links.append(PlaneLink(url, tokens["daemon"], work / "outbox.db"))
        daemon = HttpStore(links[-1], sync_wait=1)
        half = args.tasks // 2
        done = [run_task(daemon, n) for n in range(half)]
        # claim and open every remaining task's action now, then lose the plane mid-task
        inflight = []
        for n in range(half, args.tasks):
            claimed = daemon.claim(f"outage-d/{SERIAL}", SERIAL, time.time(), lease_s=600)
            assert claimed is not None
            running = daemon.start(claimed.ticket, time.time())
            daemon.journal_before(
                running.ticket, f"op-{n}", "dnd.set", "zen_mode", "sha256:x", time.time()
            )
            inflight.append((n, running))
        stop_plane(proc)
        t_down = time.monotonic()
        print(f"plane stopped; {len(inflight)} tasks mid-action", flush=True)
        for n, running in inflight:
            done.append((running.id, _finish(daemon, running, n)))
        queued = daemon.pending_reports()
        print(f"reports spooled while down: {queued}", flush=True)
        links.pop().close()  # the daemon restarts while the plane is still down
        time.sleep(max(0.0, args.outage - (time.monotonic() - t_down)))
        proc = start_plane(work, port)
        print(f"plane back after {time.monotonic() - t_down:.1f}s", flush=True)
        links.append(PlaneLink(url, tokens["daemon"], work / "outbox.db"))
        daemon = HttpStore(links[-1])
        t_back = time.monotonic()
        while daemon.pending_reports() and time.monotonic() - t_back < 30:
            time.sleep(0.05)
        print(
            f"outbox drained {time.monotonic() - t_back:.2f}s after the plane came back", flush=True
        )
        planner.close()
        planner = PlaneClient(url, tokens["planner"])
        failures = 0
        for task_id, ref in done:
            task = planner.get(task_id)
            states = [e.state for e in planner.events(0, 1000) if e.task_id == task_id]
            refs = [e["ref"] for e in planner.evidence(task_id)]
            journal = [j.outcome for j in planner.journal(task_id)]
            ok = (task.state is TaskState.COMPLETED and states == ["queued", "dispatched", "running", "completed"]
                  and list(task.evidence_refs) == refs and len(refs) == 1 and journal == [JournalOutcome.CONFIRMED_SUCCESS])  # fmt: skip
            failures += not ok
            print(
                f"{task_id}: {task.state.value} events={states} evidence={refs} (handed out {ref}) {'OK' if ok else 'LOST'}"
            )
        print(f"RESULT: {len(done) - failures}/{len(done)} tasks with every report delivered in order; "
              f"{queued} reports spooled during a {args.outage:g}s outage")  # fmt: skip
        return 1 if failures else 0
    finally:
        for link in links:
            link.close()
        if proc.poll() is None:
            stop_plane(proc)


if __name__ == "__main__":
    sys.exit(main())
