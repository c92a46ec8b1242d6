#!/usr/bin/env python3
"""Measure what ``/metrics`` costs with a full queue, and how many series it serves.

Fills a fresh SQLite queue with ``--tasks`` tasks over ``--conversations`` conversations
through the store (each with a life: completed, failed, or left queued / in approval),
counted by a ``PhonedMetrics`` as a daemon's would be. Then:

* the plane: ``phoned serve`` over that queue, ``--n`` scrapes of ``GET /metrics`` with a
  metrics token over real HTTP (client-side wall time per scrape);
* the daemon: ``--n`` expositions of the daemon-shaped registry whose queue gauge opens a
  store per scrape as ``phoned run --metrics`` does on an embedded queue.

Prints the medians and p90s, the series counts and the ``phoned_*`` families with labels.

    .venv/bin/python scripts/bench_metrics.py --tasks 10000 --conversations 1000 --n 50
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from outage_test import free_port, start_plane, stop_plane  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from phoned.daemon.lifecycle.contract import TaskSpec  # noqa: E402
from phoned.daemon.lifecycle.records import Failure, Preview  # noqa: E402
from phoned.daemon.lifecycle.states import FailureReason  # noqa: E402
from phoned.daemon.runtime.metrics import PhonedMetrics, Phones  # noqa: E402
from phoned.daemon.server.auth import Role, make_token  # noqa: E402
from phoned.daemon.store.open import open_store  # noqa: E402
from phoned.daemon.store.sql_store import SqlStore  # noqa: E402
from phoned.daemon.store.sqlite_store import SqliteStore  # noqa: E402

SERIAL = "emu-bench"
METHODS = ("dnd.get", "dnd.set", "volume.get")


def fill(store: SqliteStore, tasks: int, conversations: int) -> None:
    """``tasks`` tasks: 80 % completed, 10 % failed, 5 % in approval, 5 % left queued."""
    for i in range(tasks):
        method = METHODS[i % len(METHODS)]
        params = {"mode": "priority"} if method == "dnd.set" else {}
        if method == "volume.get":
            params = {"stream": "music"}
        conversation = f"c{i % conversations}"
        spec = TaskSpec.model_validate({"method": method, "params": params,
                                        "conversation_id": conversation, "source": "cli"})  # fmt: skip
        task = store.submit(spec, time.time())
        if i % 20 == 19:
            continue  # queued
        claimed = store.claim(f"bench/{SERIAL}", SERIAL, time.time(), 600, task_id=task.id)
        assert claimed is not None
        running = store.start(claimed.ticket, time.time())
        if i % 20 == 18:
            preview = Preview(task.id, conversation, "dnd.set", "zen_mode", {}, "sha256:s")
            store.request_approval(running.ticket, preview, time.time())
        elif i % 10 == 1:
            store.fail(running.ticket, Failure(FailureReason.ACTION_ERROR, "x"), time.time())
        else:
            ref = store.put_evidence(running.ticket, "outcome", {"met": True}, time.time())
            store.complete(running.ticket, time.time(), "done", (ref,))


def timed(call, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    p90 = ms[int(len(ms) * 0.9) - 1]
    return f"{name}: median {statistics.median(ms):.2f} ms, p90 {p90:.2f} ms ({len(ms)} scrapes)"


def families(text: str) -> list[str]:
    rows = []
    for family in text_string_to_metric_families(text):
        if family.name.startswith("phoned_"):
            labels = sorted({k for s in family.samples for k in s.labels if k != "le"})
            rows.append(f"{family.name} ({family.type}) {{{', '.join(labels)}}}")
    return rows


def series(text: str, prefix: str = "") -> int:
    return sum(
        1
        for f in text_string_to_metric_families(text)
        for _ in f.samples
        if f.name.startswith(prefix)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="/metrics scrape cost with a full queue")
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--n", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="phoned-bench-metrics-") as tmp:
        work = Path(tmp)
        url = f"sqlite:///{work / 'queue.db'}"
        metrics = PhonedMetrics()
        store = SqliteStore(str(work / "queue.db"))
        store.on_write = metrics.written
        started = time.perf_counter()
        fill(store, args.tasks, args.conversations)
        store.close()
        print(f"queue filled: {args.tasks} tasks over {args.conversations} conversations "
              f"in {time.perf_counter() - started:.1f} s")  # fmt: skip

        def queue():  # type: ignore[no-untyped-def]
            opened = open_store(url)  # as the daemon: a store per scrape thread
            try:
                return opened.state_summary(time.time()) if isinstance(opened, SqlStore) else []
            finally:
                opened.close()

        metrics.watch(queue=queue, phones=lambda: Phones(frozenset({SERIAL})))
        daemon_text = metrics.exposition().decode()
        daemon_ms = timed(metrics.exposition, args.n)

        token, entry = make_token(Role.METRICS)
        (work / "tokens.yaml").write_text("tokens:\n" + entry)
        (work / "tokens.yaml").chmod(0o600)
        port = free_port()
        plane = start_plane(work, port)
        try:
            with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
                scrape = f"http://127.0.0.1:{port}/metrics"
                plane_text = c.get(scrape).text
                plane_ms = timed(lambda: c.get(scrape).raise_for_status(), args.n)
        finally:
            stop_plane(plane)
    print(summary("plane GET /metrics over HTTP", plane_ms))
    print(summary("daemon exposition (store opened per scrape)", daemon_ms))
    print(f"daemon series: {series(daemon_text)} ({series(daemon_text, 'phoned_')} phoned_*), "
          f"{len(daemon_text)} bytes")  # fmt: skip
    print(f"plane series: {series(plane_text)} ({series(plane_text, 'phoned_')} phoned_*), "
          f"{len(plane_text)} bytes")  # fmt: skip
    print("families of the daemon's exposition:")
    for row in families(daemon_text):
        print("  " + row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
