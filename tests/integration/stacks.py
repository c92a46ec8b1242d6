"""Real ``phoned`` processes for the integration tests, started, awaited and stopped one way.

* ``spawn(args, env, log)``, ``stop_process(proc)`` (from ``scripts/stack.py``),
  ``wait_http(url, log)``: the process plumbing every test shares (a log file per process,
  its tail in every failure).
* from ``tests/planes.py``: ``free_port()``, and ``Grant`` / ``write_tokens`` (a tokens file).
* ``private_adb_server()``: an adb server of one test alone, no phone attached.
* ``PlaneCalls``: calls to a plane as any of its tokens (``Stack`` and a test's own stacks).
* ``Serve``: one ``phoned serve`` process over a queue; ``stop()`` and ``start()`` again for
  an outage.
* ``Stack``: ``phoned serve`` over a fresh SQLite queue, a ``phoned run --queue URL`` with a
  daemon token (for the simulated phone it is given, or every phone the adb server lists)
  and ways to call the plane as any token of the stack (``open_stack`` starts one).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from planes import Grant, write_tokens

from scripts.stack import adb_server, free_port, stop_process

REPO = Path(__file__).resolve().parents[2]
PHONED = (sys.executable, "-m", "phoned.daemon.cli")  # the ``phoned`` command, from this checkout


def spawn(args: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``args`` in the repository, its stdout and stderr appended to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(args, env=dict(env), cwd=REPO, stdout=out, stderr=subprocess.STDOUT)


def tail(log: Path, size: int = 3000) -> str:
    """The end of a process's log, for a failure message."""
    return f"--- {log.name}\n{log.read_text(errors='replace')[-size:]}" if log.exists() else ""


def wait_http(
    url: str,
    log: Path,
    proc: subprocess.Popen[bytes] | None = None,
    timeout: float = 30,
    verify: Any = True,
    ready: Callable[[httpx.Response], bool] = lambda answer: answer.status_code == 200,
) -> None:
    """Wait until ``url`` answers (``ready``: with 200); fails with the log's tail when
    ``proc`` ends first or the time is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            break
        with contextlib.suppress(httpx.HTTPError):
            if ready(httpx.get(url, timeout=1, verify=verify)):
                return
        time.sleep(0.1)
    raise AssertionError(f"{url} did not answer\n{tail(log)}")


@contextlib.contextmanager
def private_adb_server() -> Iterator[dict[str, str]]:
    """An adb server of this test alone, no phone attached (so ``phoned run --sim`` starts
    its own phone and serves only that one): the environment naming its port."""
    with adb_server() as adb:
        yield {"ANDROID_ADB_SERVER_PORT": str(adb.port)}


class PlaneCalls:
    """Calls to a plane at ``url`` as any token of ``tokens`` (by who holds it)."""

    url: str
    tokens: dict[str, str]

    def client(self, who: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def call(self, who: str, method: str, path: str, **kw: Any) -> httpx.Response:
        with self.client(who) as client:
            return client.request(method, path, **kw)


class Serve:
    """One ``phoned serve`` process on a free loopback port (``https`` with ``--tls-cert``
    among ``extra``); ``stop()`` and ``start()`` again for an outage."""

    def __init__(
        self,
        tmp: Path,
        tokens: Path,
        queue: str | None = None,
        *extra: str,
        name: str = "serve",
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.scheme = "https" if "--tls-cert" in extra else "http"
        self.url = f"{self.scheme}://127.0.0.1:{self.port}"
        self.args = [
            *PHONED, "serve", "--queue", queue or f"sqlite:///{tmp / 'queue.db'}",
            "--host", "127.0.0.1", "--port", str(self.port), "--tokens", str(tokens),
            "--state-dir", str(tmp / name), *extra,
        ]  # fmt: skip
        self.env = {**(os.environ if env is None else env), "PHONED_SWEEP_INTERVAL": "30"}
        self.log = tmp / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, verify: Any = True) -> Serve:
        self.proc = spawn(self.args, self.env, self.log)
        wait_http(f"{self.url}/openapi.json", self.log, self.proc, verify=verify)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, timeout=10)
        self.proc = None


@dataclass
class Stack(PlaneCalls):
    """A running ``phoned serve`` and ``phoned run --queue URL``, and how to call the plane.

    ``reader`` names the token the stack reads tasks with (``task``, ``wait_state``)."""

    url: str
    tokens: dict[str, str]
    logs: list[Path]
    sim: Any = None
    reader: str = "viewer"
    hooks: list[Any] = field(default_factory=list)  # see ``hooked_shell``

    @property
    def serial(self) -> str:
        return str(self.sim.serial)

    @property
    def phone(self) -> Any:
        return self.sim.phone

    def task(self, task_id: str) -> dict[str, Any]:
        return dict(self.call(self.reader, "GET", f"/v1/tasks/{task_id}").json()["task"])

    def wait_state(
        self, task_id: str, states: tuple[str, ...], timeout: float = 60
    ) -> dict[str, Any]:
        """The task once it is in one of ``states`` (else fails with the processes' logs)."""
        deadline = time.monotonic() + timeout
        task = self.task(task_id)
        while task["state"] not in states and time.monotonic() < deadline:
            time.sleep(0.2)
            task = self.task(task_id)
        if task["state"] not in states:
            raise AssertionError(f"task {task_id} is {task['state']}, not {states}\n{self.tails()}")
        return task

    def wait_registered(self, serial: str, timeout: float = 30) -> None:
        """Wait until the daemon has registered ``serial`` with the plane."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            daemons = self.call(self.reader, "GET", "/v1/devices").json()["daemons"]
            if any(serial in d["devices"] for d in daemons):
                return
            time.sleep(0.2)
        raise AssertionError(f"no daemon registered {serial}\n{self.tails()}")

    def tails(self) -> str:
        return "\n".join(tail(log) for log in self.logs)


@contextlib.contextmanager
def open_stack(
    tmp: Path,
    adb_env: Mapping[str, str],
    grants: Mapping[str, Grant],
    *,
    sim: Any = None,
    daemon_id: str = "stack-d1",
    daemon_token: str = "daemon",
    reader: str = "viewer",
    daemon_env: Mapping[str, str] | None = None,
) -> Iterator[Stack]:
    """``phoned serve`` over ``tmp/queue.db`` with the tokens of ``grants``, then ``phoned
    run --queue URL`` with the token ``daemon_token`` (serving ``sim`` when given, else every
    phone it finds; ``daemon_env`` adds to its environment). With ``sim`` it yields once the
    daemon registered the phone; every process stops on exit."""
    tokens = write_tokens(tmp / "tokens.yaml", grants)
    env = {**adb_env, "PHONED_CONFIG": "/dev/null"}
    serve = Serve(tmp, tmp / "tokens.yaml", env=env)
    daemon_log = tmp / "daemon.log"
    daemon: subprocess.Popen[bytes] | None = None
    try:
        serve.start()
        run_env = {**serve.env, "PHONED_TOKEN": tokens[daemon_token],
                   "PHONED_STATE_DIR": str(tmp / "daemon"), "PHONED_DAEMON_ID": daemon_id,
                   "PHONED_OUTBOX": str(tmp / "daemon" / "outbox.db"), **(daemon_env or {})}  # fmt: skip
        serials = ["--serial", sim.serial] if sim is not None else []
        daemon = spawn([*PHONED, "run", "--queue", serve.url, *serials], run_env, daemon_log)
        stack = Stack(serve.url, tokens, [serve.log, daemon_log], sim, reader)
        if sim is not None:
            stack.wait_registered(sim.serial)
        yield stack
    finally:
        if daemon is not None:
            stop_process(daemon)
        serve.stop()


@contextlib.contextmanager
def monitor_stack(
    tmp: Path, adb_env: Mapping[str, str], sim: Any, daemon_id: str
) -> Iterator[Stack]:
    """The monitor's browser tests' stack: planner, viewer and approver tokens, and a daemon
    token (``daemon_id``) for ``sim`` alone."""
    grants = {role: Grant(role) for role in ("planner", "viewer", "approver")}
    grants["daemon"] = Grant("daemon", (sim.serial,))
    with open_stack(tmp, adb_env, grants, sim=sim, daemon_id=daemon_id) as made:
        yield made


def sign_in(page: Any, url: str, token: str) -> None:
    """Open the monitor at ``url`` in ``page`` (a ``cdp_client.Page``) and sign in through
    its form, as a person would."""
    page.call("Page.enable")
    page.call("Page.navigate", url=url)
    page.wait_for("document.readyState === 'complete' && !!document.getElementById('signin')")
    page.evaluate(
        f"(() => {{ document.getElementById('token').value = {json.dumps(token)};"
        " document.getElementById('signin').requestSubmit(); return true; })()"
    )
