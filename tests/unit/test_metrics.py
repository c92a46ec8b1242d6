"""Issue #36: what the metrics count, that no private data reaches a label, that the series
count stays bounded over 10,000 tasks, and who may scrape the plane's ``/metrics``.

Everything runs through the real SQLite store (its ``on_write``) and the real app; the
expositions are parsed with the client's own text parser.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from planes import Grant, write_tokens
from prometheus_client.parser import text_string_to_metric_families

from phoned.daemon.config import ConfigError, listen_address, load
from phoned.daemon.lifecycle.contract import TaskSpec
from phoned.daemon.lifecycle.errors import QueueBusy, QueueFull
from phoned.daemon.lifecycle.records import Failure, Preview
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.runtime.metrics import PhonedMetrics, Phones, device_label
from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.settings import ServerSettings
from phoned.daemon.store.schedule_tick import Tick
from phoned.daemon.store.sqlite_store import SqliteStore

NUMBER = "+4915112345678"
BODY = "meet me at the secret place"
METHODS = ("dnd.get", "dnd.set", "sms.send")


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition: (name, sorted labels) -> value."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[SqliteStore, PhonedMetrics]]:
    metrics = PhonedMetrics(process=False)
    store = SqliteStore(str(tmp_path / "queue.db"))
    store.on_write = metrics.written
    metrics.watch(queue=lambda: store.state_summary(time.time()))
    try:
        yield store, metrics
    finally:
        store.close()


def spec(method: str, conversation: str) -> TaskSpec:
    params = {"to": NUMBER, "body": BODY} if method == "sms.send" else {}
    if method == "dnd.set":
        params = {"mode": "priority"}
    return TaskSpec.model_validate(
        {"method": method, "params": params, "conversation_id": conversation, "source": "cli"}
    )


def drive(store: SqliteStore, index: int, serial: str = "emu-1", ends: int = 5) -> None:
    """One task through one of five ends, chosen by ``index`` modulo ``ends``: completed,
    failed (action_error), retried then completed (device_offline), approved then
    completed, denied."""
    method = METHODS[index % len(METHODS)]
    conversation = f"conv-{index % 1000:04d}"
    task = store.submit(spec(method, conversation), time.time())
    kind = index % ends
    claimed = store.claim(f"d/{serial}", serial, time.time(), 60, task_id=task.id)
    assert claimed is not None
    running = store.start(claimed.ticket, time.time())
    if kind == 1:
        store.fail(running.ticket, Failure(FailureReason.ACTION_ERROR, "no"), time.time())
        return
    if kind == 2:
        store.fail(running.ticket, Failure(FailureReason.DEVICE_OFFLINE, "gone"), time.time())
        again = store.claim(f"d/{serial}", serial, time.time(), 60, task_id=task.id)
        assert again is not None
        running = store.start(again.ticket, time.time())
    if kind in (3, 4):
        preview = Preview(task.id, conversation, "sms.send", NUMBER, {"body": BODY}, "sha256:s")
        asked = store.request_approval(running.ticket, preview, time.time())
        decide = store.approve if kind == 3 else store.deny
        decide(task.id, conversation, asked.revision, preview.digest, time.time())
        if kind == 4:
            return
        again = store.claim(f"d/{serial}", serial, time.time(), 60, task_id=task.id)
        assert again is not None
        running = store.start(again.ticket, time.time())
    ref = store.put_evidence(running.ticket, "outcome", {"met": True}, time.time())
    store.complete(running.ticket, time.time(), "done", (ref,))


def test_a_task_life_is_counted_by_method_state_and_reason(store) -> None:
    sql, metrics = store
    for index in range(5):
        drive(sql, index)
    text = metrics.exposition().decode()
    # tasks 0..4: dnd.get, dnd.set, sms.send, dnd.get, dnd.set
    assert value(text, "phoned_tasks_submitted_total", method="dnd.get", source="cli") == 2
    assert value(text, "phoned_tasks_submitted_total", method="sms.send", source="cli") == 1
    # completed: task 0 (dnd.get), 2 (sms.send, after a retry), 3 (dnd.get, approved)
    assert value(text, "phoned_task_transitions_total", method="dnd.get", state="completed") == 2
    assert value(text, "phoned_task_transitions_total", method="sms.send", state="completed") == 1
    assert value(text, "phoned_task_failures_total", method="dnd.set", reason="action_error",
                 state="failed") == 1  # fmt: skip
    assert value(text, "phoned_task_failures_total", method="sms.send", reason="device_offline",
                 state="queued") == 1  # fmt: skip
    assert value(text, "phoned_task_failures_total", method="dnd.set", reason="approval_denied",
                 state="stopped") == 1  # fmt: skip
    assert value(text, "phoned_task_completion_seconds_count", method="dnd.get") == 2
    assert value(text, "phoned_approval_wait_seconds_count", method="dnd.get",
                 outcome="approved") == 1  # fmt: skip
    assert value(text, "phoned_approval_wait_seconds_count", method="dnd.set",
                 outcome="denied") == 1  # fmt: skip
    assert value(text, "phoned_claims_total", device="emu-1") == 7  # 5, the retry, the approved
    assert value(text, "phoned_pickup_latency_seconds_count", method="sms.send") == 2
    assert value(text, "phoned_action_duration_seconds_count", method="dnd.get") == 3
    assert value(text, "phoned_tasks", state="completed") == 3
    assert value(text, "phoned_tasks", state="queued") == 0


def test_the_queue_gauges_tell_overdue_approvals_and_the_oldest_age(store) -> None:
    sql, metrics = store
    old = time.time() - 120
    task = sql.submit(spec("sms.send", "conv-x"), old)
    claimed = sql.claim("d/emu-1", "emu-1", old, 60, task_id=task.id)
    assert claimed is not None
    running = sql.start(claimed.ticket, old)
    preview = Preview(task.id, "conv-x", "sms.send", NUMBER, {"body": BODY}, "sha256:s")
    sql.request_approval(running.ticket, preview, old)  # TTL 900 s: not overdue yet
    queued_at = time.time() - 30
    sql.submit(spec("dnd.get", "conv-y"), queued_at)
    text = metrics.exposition().decode()
    assert value(text, "phoned_tasks", state="approval") == 1
    assert value(text, "phoned_approvals_overdue") == 0
    assert 119 < value(text, "phoned_tasks_oldest_age_seconds", state="approval") < 200
    assert 29 < value(text, "phoned_tasks_oldest_age_seconds", state="queued") < 100
    # the deadline passes (no sweeper here): the approval is overdue
    figures = {f.state.value: f for f in sql.state_summary(time.time() + 1000)}
    assert figures["approval"].overdue == 1 and figures["queued"].overdue == 0


def test_ten_thousand_tasks_over_a_thousand_conversations_do_not_grow_the_series(
    store,
) -> None:
    sql, metrics = store
    for index in range(1000):  # every method meets every end within the first thousand
        drive(sql, index)
    first = metrics.exposition().decode()
    for index in range(1000, 10_000):  # the two cheapest ends (the suite stays fast)
        drive(sql, index, ends=2)
    last = metrics.exposition().decode()
    assert set(samples(first)) == set(samples(last))
    count = len(samples(last))
    print(f"series after 10,000 tasks over 1,000 conversations: {count}")
    assert value(last, "phoned_tasks_submitted_total", method="dnd.get", source="cli") == 3334
    assert (
        value(last, "phoned_tasks", state="completed")
        + value(last, "phoned_tasks", state="failed")
        + value(last, "phoned_tasks", state="stopped")
        == 10_000
    )
    # no conversation, task id, number or body anywhere in the exposition
    assert "conv-" not in last and NUMBER not in last and "secret" not in last
    assert not re.search(r"[0-9a-f]{32}", last), "a task id reached the exposition"


def test_serials_are_hashed_when_the_config_says_so(tmp_path: Path) -> None:
    metrics = PhonedMetrics(hash_serials=True, process=False)
    store = SqliteStore(str(tmp_path / "queue.db"))
    store.on_write = metrics.written
    metrics.watch(phones=lambda: Phones(frozenset({"R58M12ABCDE"}), frozenset({"emu-9"})))
    try:
        drive(store, 0, serial="R58M12ABCDE")
    finally:
        store.close()
    text = metrics.exposition().decode()
    assert "R58M12ABCDE" not in text and "emu-9" not in text
    hashed = device_label("R58M12ABCDE", True)
    assert re.fullmatch(r"sha256:[0-9a-f]{12}", hashed)
    assert value(text, "phoned_phone_online", device=hashed) == 1
    assert value(text, "phoned_phone_online", device=device_label("emu-9", True)) == 0
    assert value(text, "phoned_claims_total", device=hashed) == 1
    assert value(text, "phoned_phone_last_claim_timestamp_seconds", device=hashed) > 0


def test_a_phone_no_longer_served_stays_as_zero() -> None:
    metrics = PhonedMetrics(process=False)
    served = {"now": frozenset({"emu-1", "emu-2"})}
    metrics.watch(phones=lambda: Phones(served["now"]))
    assert value(metrics.exposition().decode(), "phoned_phone_online", device="emu-2") == 1
    served["now"] = frozenset({"emu-1"})
    text = metrics.exposition().decode()
    assert value(text, "phoned_phone_online", device="emu-2") == 0
    assert ("phoned_phone_online", (("device", "emu-2"),)) in samples(text)


def test_schedule_runs_and_queue_weather_are_counted() -> None:
    metrics = PhonedMetrics(process=False)
    metrics.schedule_tick(Tick(fired=["t1", "t2"], missed=3, refused=["s1"]))
    metrics.met_weather(QueueBusy("queue busy"))
    metrics.met_weather(QueueFull("queue disk full"))
    metrics.met_weather(QueueBusy("queue busy"))
    text = metrics.exposition().decode()
    assert value(text, "phoned_schedule_runs_total", outcome="fired") == 2
    assert value(text, "phoned_schedule_runs_total", outcome="missed") == 3
    assert value(text, "phoned_schedule_runs_total", outcome="refused") == 1
    assert value(text, "phoned_queue_weather_events_total", kind="busy") == 2
    assert value(text, "phoned_queue_weather_events_total", kind="full") == 1


def test_two_metrics_in_one_process_keep_their_counts_apart() -> None:
    one, two = PhonedMetrics(), PhonedMetrics()  # process collectors on both: no clash
    one.schedule_tick(Tick(fired=["t"]))
    assert value(one.exposition().decode(), "phoned_schedule_runs_total", outcome="fired") == 1
    assert value(two.exposition().decode(), "phoned_schedule_runs_total", outcome="fired") == 0


@pytest.mark.parametrize(
    ("text", "address"),
    [("9464", ("127.0.0.1", 9464)), (":9464", ("127.0.0.1", 9464)),
     ("0.0.0.0:9100", ("0.0.0.0", 9100)), ("[::1]:9100", ("::1", 9100))],
)  # fmt: skip
def test_the_listen_address_is_loopback_unless_named(text: str, address: tuple[str, int]) -> None:
    assert listen_address(text) == address


def test_a_bad_listen_address_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"metrics\.listen"):
        load(None, environ={"PHONED_METRICS_LISTEN": "127.0.0.1:99999"})
    assert load(None, environ={}).metrics.address is None  # off by default


# --- the plane's /metrics ---------------------------------------------------------------
@pytest.fixture
def plane(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    tokens = write_tokens(
        tmp_path / "tokens.yaml",
        {
            "metrics": Grant("metrics"),
            "viewer": Grant("viewer"),
            "bound": Grant("viewer", conversations=("conv-a",)),
            "planner": Grant("planner"),
            "daemon": Grant("daemon", devices=("*",)),
        },
    )
    settings = ServerSettings(
        f"sqlite:///{tmp_path / 'queue.db'}", tmp_path / "serve", tmp_path / "tokens.yaml"
    )
    app = create_app(settings, TokenBook.load(tmp_path / "tokens.yaml"))
    with TestClient(app) as client:
        yield client, tokens


def test_a_scrape_without_a_known_token_is_401_with_no_body(plane) -> None:
    client, tokens = plane
    for headers in ({}, {"Authorization": "Bearer phd_wrong"}, {"Authorization": "Basic x"}):
        answer = client.get("/metrics", headers=headers)
        assert answer.status_code == 401 and answer.content == b"", headers
    for who in ("planner", "daemon", "bound"):
        answer = client.get("/metrics", headers={"Authorization": f"Bearer {tokens[who]}"})
        assert answer.status_code == 403 and answer.content == b"", who


def test_metrics_and_viewer_tokens_scrape_what_the_plane_counted(plane) -> None:
    client, tokens = plane
    submitted = client.post(
        "/v1/tasks",
        headers={"Authorization": f"Bearer {tokens['planner']}"},
        json={"method": "dnd.get", "params": {}, "conversation_id": "conv-a", "source": "cli"},
    )
    assert submitted.status_code in (200, 201), submitted.text
    for who in ("metrics", "viewer"):
        answer = client.get("/metrics", headers={"Authorization": f"Bearer {tokens[who]}"})
        assert answer.status_code == 200, who
        assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = answer.text
        assert value(text, "phoned_tasks", state="queued") == 1
        assert value(text, "phoned_tasks_submitted_total", method="dnd.get", source="cli") == 1
        assert "process_cpu_seconds_total" in text and "conv-a" not in text
    assert "/metrics" not in client.get("/openapi.json").json()["paths"]
