"""Issue #36, done when: a real Prometheus (Debian's ``/usr/bin/prometheus``, started here on
a free loopback port with a throwaway config and data folder, never the packaged service)
scrapes a ``phoned run --sim --metrics`` and a ``phoned serve``, a few tasks run through
them, and Prometheus' own HTTP API answers the task counters, the completion histogram and
the phone's online gauge; ``promtool check metrics`` accepts both expositions; the scrape
config and the three alerts of ``docs/deploy.md`` pass ``promtool check config`` / ``check
rules``, each alert fires (and does not) on its series under ``promtool test rules``, they
load in that Prometheus, and the unserved-queue alert fires once the daemon stops.

Without the binaries the tests skip (``scripts/ensure-prometheus.sh`` installs them), and
fail under ``CI=true``.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from planes import Grant, write_tokens
from stacks import PHONED, REPO, private_adb_server, spawn, stop_process, tail, wait_http

from scripts.stack import free_port

pytestmark = pytest.mark.integration

PROMETHEUS = Path("/usr/bin/prometheus")
PROMTOOL = Path("/usr/bin/promtool")
DEPLOY = REPO / "docs" / "deploy.md"


def need_prometheus() -> None:
    missing = [str(p) for p in (PROMETHEUS, PROMTOOL) if not os.access(p, os.X_OK)]
    if missing:
        reason = f"{', '.join(missing)} missing (scripts/ensure-prometheus.sh installs them)"
        if os.environ.get("CI"):
            pytest.fail(f"CI needs Prometheus: {reason}")
        pytest.skip(reason)


def deploy_block(first_line: str) -> str:
    """The ```yaml block of docs/deploy.md whose first line is ``first_line``."""
    for block in re.findall(r"```yaml\n(.*?)```", DEPLOY.read_text(), flags=re.DOTALL):
        if block.startswith(first_line + "\n"):
            return str(block)
    raise AssertionError(f"docs/deploy.md has no yaml block starting {first_line!r}")


def promtool(*args: str, stdin: str | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(PROMTOOL), *args], input=stdin, capture_output=True, text=True, timeout=60,
        check=False, cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


# --- the documents' scrape config and alerts, by promtool ---------------------------------
def test_the_documented_scrape_config_and_alerts_pass_promtool(tmp_path: Path) -> None:
    need_prometheus()
    config = deploy_block("# prometheus.yml")
    (tmp_path / "prometheus.yml").write_text(config)
    (tmp_path / "phoned-alerts.yml").write_text(deploy_block("# phoned-alerts.yml"))
    token = yaml.safe_load(config)["scrape_configs"][0]["authorization"]["credentials_file"]
    local = tmp_path / "metrics.token"
    local.write_text("phd_example\n")
    (tmp_path / "prometheus.yml").write_text(config.replace(token, str(local)))
    promtool("check", "config", str(tmp_path / "prometheus.yml"))
    out = promtool("check", "rules", str(tmp_path / "phoned-alerts.yml"))
    assert "3 rules found" in out, out


UNIT_TESTS = """
rule_files: [phoned-alerts.yml]
evaluation_interval: 1m
tests:
  # queued work, the only phone not served for 6 minutes: unserved (and that phone offline)
  - interval: 1m
    input_series:
      - series: 'phoned_tasks{job="phoned-serve",state="queued"}'
        values: '3x10'
      - series: 'phoned_phone_online{job="phoned-serve",device="emu-1"}'
        values: '1 1 1 0 0 0 0 0 0 0'
      - series: 'phoned_approvals_overdue{job="phoned-serve"}'
        values: '0x10'
    alert_rule_test:
      - {eval_time: 5m, alertname: PhonedQueueUnserved, exp_alerts: []}
      - eval_time: 9m
        alertname: PhonedQueueUnserved
        exp_alerts: [{exp_labels: {severity: critical}, exp_annotations: {summary: "3 task(s) queued and no phone is served"}}]
      - {eval_time: 5m, alertname: PhonedPhoneOffline, exp_alerts: []}
      - eval_time: 9m
        alertname: PhonedPhoneOffline
        exp_alerts: [{exp_labels: {severity: warning, device: emu-1}, exp_annotations: {summary: "phone emu-1 not served for 5 minutes"}}]
      - {eval_time: 9m, alertname: PhonedApprovalsOverdue, exp_alerts: []}
  # another phone still served: the queue is served, only the dropped phone alerts;
  # nothing queued at all: never unserved
  - interval: 1m
    input_series:
      - series: 'phoned_tasks{job="phoned-serve",state="queued"}'
        values: '2x10'
      - series: 'phoned_phone_online{job="phoned-serve",device="emu-1"}'
        values: '0x10'
      - series: 'phoned_phone_online{job="phoned-serve",device="emu-2"}'
        values: '1x10'
    alert_rule_test:
      - {eval_time: 9m, alertname: PhonedQueueUnserved, exp_alerts: []}
      - eval_time: 9m
        alertname: PhonedPhoneOffline
        exp_alerts: [{exp_labels: {severity: warning, device: emu-1}, exp_annotations: {summary: "phone emu-1 not served for 5 minutes"}}]
  - interval: 1m
    input_series:
      - series: 'phoned_tasks{job="phoned-serve",state="queued"}'
        values: '0x10'
    alert_rule_test:
      - {eval_time: 9m, alertname: PhonedQueueUnserved, exp_alerts: []}
  # approvals past their TTL for 3 minutes fire; a blip of one minute does not
  - interval: 1m
    input_series:
      - series: 'phoned_approvals_overdue{job="phoned-serve"}'
        values: '0 0 1 0 0 2 2 2 2 2'
    alert_rule_test:
      - {eval_time: 4m, alertname: PhonedApprovalsOverdue, exp_alerts: []}
      - eval_time: 8m
        alertname: PhonedApprovalsOverdue
        exp_alerts: [{exp_labels: {severity: warning}, exp_annotations: {summary: "2 approval(s) older than their TTL"}}]
"""


def test_each_documented_alert_fires_on_its_series_and_not_otherwise(tmp_path: Path) -> None:
    need_prometheus()
    (tmp_path / "phoned-alerts.yml").write_text(deploy_block("# phoned-alerts.yml"))
    (tmp_path / "alerts-test.yml").write_text(UNIT_TESTS)
    out = promtool("test", "rules", "alerts-test.yml", cwd=tmp_path)
    assert "SUCCESS" in out, out


# --- a real Prometheus, a plane, a daemon on a simulated phone ------------------------------
@dataclass
class Scraped:
    """The running stack and a way to ask Prometheus."""

    prometheus: str
    plane: str
    daemon_metrics: str
    tokens: dict[str, str]
    serial: str
    daemon: subprocess.Popen[bytes]
    logs: list[Path]

    def query(self, expr: str) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.prometheus}/api/v1/query", params={"query": expr}, timeout=5)
        assert answer.status_code == 200, answer.text
        return list(answer.json()["data"]["result"])

    def eventually(self, what: str, check: Callable[[], Any], timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.3)
        raise AssertionError(f"{what} not seen within {timeout} s\n{self.tails()}")

    def value(self, expr: str) -> float | None:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None

    def call(self, who: str, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        return httpx.request(method, f"{self.plane}{path}", headers=headers, timeout=30, **kw)

    def tails(self) -> str:
        return "\n".join(tail(log) for log in self.logs)


def prometheus_config(tmp: Path, plane_port: int, daemon_port: int) -> Path:
    """The test's copy of the documented config: 1 s scrapes and evaluations, the alerts
    with 2 s ``for:``."""
    rules = yaml.safe_load(deploy_block("# phoned-alerts.yml"))
    for rule in rules["groups"][0]["rules"]:
        rule["for"] = "2s"
    (tmp / "alerts.yml").write_text(yaml.safe_dump(rules))
    config = yaml.safe_load(deploy_block("# prometheus.yml"))
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(tmp / "alerts.yml")]
    serve_job, daemon_job = config["scrape_configs"]
    serve_job["authorization"]["credentials_file"] = str(tmp / "metrics.token")
    serve_job["static_configs"] = [{"targets": [f"127.0.0.1:{plane_port}"]}]
    daemon_job["static_configs"] = [{"targets": [f"127.0.0.1:{daemon_port}"]}]
    path = tmp / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def scraped(tmp_path: Path) -> Iterator[Scraped]:
    need_prometheus()
    tokens = write_tokens(tmp_path / "tokens.yaml", {
        "daemon": Grant("daemon", devices=("127.0.0.1:*",)), "planner": Grant("planner"),
        "metrics": Grant("metrics"), "viewer": Grant("viewer"),
    })  # fmt: skip
    (tmp_path / "metrics.token").write_text(tokens["metrics"] + "\n")
    plane_port, daemon_port, prom_port = free_port(), free_port(), free_port()
    plane = f"http://127.0.0.1:{plane_port}"
    logs = [tmp_path / n for n in ("serve.log", "daemon.log", "prometheus.log")]
    procs: list[subprocess.Popen[bytes]] = []
    with private_adb_server() as adb_env, contextlib.ExitStack() as running:
        running.callback(lambda: [stop_process(p) for p in reversed(procs)])
        env = {**os.environ, **adb_env, "PHONED_CONFIG": "/dev/null",
               "PHONED_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
        procs.append(spawn([*PHONED, "serve", "--queue", f"sqlite:///{tmp_path / 'plane.db'}",
                            "--port", str(plane_port), "--tokens", str(tmp_path / "tokens.yaml"),
                            "--state-dir", str(tmp_path / "serve")], env, logs[0]))  # fmt: skip
        wait_http(f"{plane}/openapi.json", logs[0], procs[0])
        daemon_env = {**env, "PHONED_TOKEN": tokens["daemon"], "PHONED_DAEMON_ID": "prom-d1"}
        procs.append(spawn([*PHONED, "run", "--sim", "--queue", plane,
                            "--metrics", f"127.0.0.1:{daemon_port}"], daemon_env, logs[1]))  # fmt: skip
        wait_http(f"http://127.0.0.1:{daemon_port}/metrics", logs[1], procs[1], timeout=60)
        config = prometheus_config(tmp_path, plane_port, daemon_port)
        procs.append(spawn([str(PROMETHEUS), f"--config.file={config}",
                            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                            f"--web.listen-address=127.0.0.1:{prom_port}"], env, logs[2]))  # fmt: skip
        prometheus = f"http://127.0.0.1:{prom_port}"
        wait_http(f"{prometheus}/-/ready", logs[2], procs[2], timeout=30)
        made = Scraped(prometheus, plane, f"http://127.0.0.1:{daemon_port}/metrics", tokens,
                       "", procs[1], logs)  # fmt: skip

        def registered() -> str | None:
            daemons = made.call("viewer", "GET", "/v1/devices").json()["daemons"]
            serials = [s for d in daemons for s in d["devices"]]
            return serials[0] if serials else None

        made.serial = made.eventually("the daemon's phone registered", registered, 60)
        yield made


def test_prometheus_scrapes_the_daemon_and_the_plane_and_alerts_when_the_daemon_stops(
    scraped: Scraped,
) -> None:
    s = scraped
    ids = []
    for _ in range(3):
        answer = s.call("planner", "POST", "/v1/tasks", json={
            "method": "dnd.get", "params": {}, "conversation_id": "prom-conv", "source": "cli"})  # fmt: skip
        assert answer.status_code in (200, 201), answer.text
        ids.append(answer.json()["task"]["id"])

    def all_completed() -> bool:
        states = [s.call("viewer", "GET", f"/v1/tasks/{i}").json()["task"]["state"] for i in ids]
        assert not set(states) & {"failed", "stopped"}, f"{states}\n{s.tails()}"
        return states == ["completed"] * 3

    s.eventually("the three tasks completed", all_completed, 60)

    # Prometheus' own API: the counters, the histogram, the phone's gauge, from both jobs
    completed = (
        'phoned_task_transitions_total{job="phoned-serve",method="dnd.get",state="completed"}'
    )
    assert s.eventually("the plane's completed counter", lambda: s.value(completed) == 3)
    hist = 'phoned_task_completion_seconds_count{job="phoned-serve",method="dnd.get"}'
    assert s.eventually("the completion histogram", lambda: s.value(hist) == 3)
    median = 'histogram_quantile(0.5, sum by (le) (phoned_task_completion_seconds_bucket{job="phoned-serve"}))'
    assert 0 < (s.value(median) or 0) < 60
    claims = f'phoned_claims_total{{job="phoned-daemon",device="{s.serial}"}}'
    assert s.eventually("the daemon's claims", lambda: s.value(claims) == 3)
    for job in ("phoned-daemon", "phoned-serve"):
        online = f'phoned_phone_online{{job="{job}",device="{s.serial}"}}'
        assert s.eventually(f"the phone online on {job}", lambda q=online: s.value(q) == 1)
    assert s.value('phoned_tasks{job="phoned-serve",state="completed"}') == 3
    assert s.value('phoned_outbox_reports{job="phoned-daemon"}') == 0
    assert s.value('process_resident_memory_bytes{job="phoned-daemon"}')

    # both expositions pass promtool's lint
    daemon_text = httpx.get(s.daemon_metrics, timeout=5).text
    plane_text = s.call("metrics", "GET", "/metrics").text
    for text in (daemon_text, plane_text):
        promtool("check", "metrics", stdin=text)
        assert "prom-conv" not in text

    # the three alerts are loaded; none fires while the phone is served
    groups = httpx.get(f"{s.prometheus}/api/v1/rules", timeout=5).json()["data"]["groups"]
    names = {rule["name"] for group in groups for rule in group["rules"]}
    assert names == {"PhonedQueueUnserved", "PhonedPhoneOffline", "PhonedApprovalsOverdue"}

    def firing(name: str) -> list[dict[str, Any]]:
        alerts = httpx.get(f"{s.prometheus}/api/v1/alerts", timeout=5).json()["data"]["alerts"]
        return [a for a in alerts if a["labels"]["alertname"] == name and a["state"] == "firing"]

    assert not firing("PhonedQueueUnserved")

    # the daemon stops (SIGTERM: it releases its phone) and a task waits: unserved
    stop_process(s.daemon)
    answer = s.call("planner", "POST", "/v1/tasks", json={
        "method": "dnd.get", "params": {}, "conversation_id": "prom-conv", "source": "cli"})  # fmt: skip
    assert answer.status_code in (200, 201), answer.text
    fired = s.eventually("PhonedQueueUnserved firing", lambda: firing("PhonedQueueUnserved"))
    assert fired[0]["labels"]["severity"] == "critical"
    offline = f'phoned_phone_online{{job="phoned-serve",device="{s.serial}"}}'
    assert s.value(offline) == 0
