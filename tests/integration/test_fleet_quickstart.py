"""Issue #23 point 7: a fleet in three commands on one machine, as the quick start says.

``docs/control-plane.md`` "Quick start" is run here as a user would, in a fresh folder
(relative paths, no config): two ``phoned serve --make-token ... --write tokens.yaml``,
``phoned serve --queue sqlite:///plane.db --tokens tokens.yaml``, ``phoned run --sim
--queue http://127.0.0.1:PORT`` with the daemon token (its adb server private to the test,
so the phone served is the simulated one it starts) and ``phoned submit --queue ...`` with
the planner token. The daemon token is made with ``--device '127.0.0.1:*'`` before the
simulated phone, and so its serial (a random port), exists.

Also: ``--write`` appends to the tokens file (created 0600, other entries and comments
kept) and refuses a symlink, a group-writable file and a file of another user; the
pattern token acts on nothing outside its pattern, here a phone another daemon registered.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from phoned.daemon.server.auth import TokenBook, token_digest
from stacks import REPO, PlaneCalls, private_adb_server, stop_process, tail, wait_http

from scripts.stack import free_port

pytestmark = pytest.mark.integration

PATTERN = "127.0.0.1:*"  # what adb calls every simulated phone: 127.0.0.1:<its port>
OTHER = "emulator-5554"  # a phone another daemon serves, outside the pattern


def phoned(
    folder: Path, env: dict[str, str], *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``phoned ARGS`` run in ``folder`` (as a user in that folder would, umask 022)."""
    return subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", *args], cwd=folder, env=env, capture_output=True,
        text=True, timeout=timeout, check=False, umask=0o022,
    )  # fmt: skip


def user_env(folder: Path, **more: str) -> dict[str, str]:
    """A user's environment: no config file, state under ``folder``, this checkout."""
    return {
        **os.environ, "PHONED_CONFIG": "/dev/null", "PHONED_STATE_DIR": str(folder / "state"),
        "PYTHONPATH": str(REPO), **more,
    }  # fmt: skip


def make_token(folder: Path, env: dict[str, str], *args: str) -> str:
    """``phoned serve --make-token ARGS --write tokens.yaml``: the token it prints."""
    made = phoned(folder, env, "serve", "--make-token", *args, "--write", "tokens.yaml")
    assert made.returncode == 0, made.stderr
    assert made.stdout.count("\n") == 1, made.stdout  # the token alone: $(...) takes it
    return made.stdout.strip()


# --- 1. --make-token --write --------------------------------------------------------------
def test_make_token_write_creates_the_file_0600_and_appends_keeping_the_rest(
    tmp_path: Path,
) -> None:
    env = user_env(tmp_path)
    made = phoned(tmp_path, env, "serve", "--make-token", "daemon", "--device", PATTERN,
                  "--name", "lab", "--write", "tokens.yaml")  # fmt: skip
    assert made.returncode == 0, made.stderr
    daemon = made.stdout.strip()
    assert made.stdout == f"{daemon}\n" and daemon.startswith("phd_")
    assert "tokens.yaml" in made.stderr and daemon not in made.stderr
    tokens = tmp_path / "tokens.yaml"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600  # under umask 022 all the same
    [entry] = yaml.safe_load(tokens.read_text())["tokens"]
    assert entry == {"sha256": token_digest(daemon), "role": "daemon", "name": "lab",
                     "devices": [PATTERN]}  # fmt: skip

    # entries and comments written by hand stay as they are
    by_hand = "# the lab's tokens (hand-kept)\n" + tokens.read_text() + "# end of list\n"
    tokens.write_text(by_hand)
    planner = make_token(tmp_path, env, "planner", "--conversation", "demo")
    text = tokens.read_text()
    assert text.startswith(by_hand.removesuffix("# end of list\n")) and "# end of list" in text
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    book = TokenBook.load(tokens)
    found = book.lookup(daemon), book.lookup(planner)
    assert found[0] is not None and found[0].devices == frozenset({PATTERN})
    assert found[1] is not None and found[1].conversations == frozenset({"demo"})
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tokens.yaml")]  # no temp


def test_make_token_write_refuses_a_symlink_and_a_writable_file(tmp_path: Path) -> None:
    env = user_env(tmp_path)
    target = tmp_path / "elsewhere.yaml"
    target.write_text("tokens: []\n")
    (tmp_path / "tokens.yaml").symlink_to(target)
    refused = phoned(tmp_path, env, "serve", "--make-token", "planner", "--write", "tokens.yaml")
    assert refused.returncode == 2 and "symlink" in refused.stderr, refused.stderr
    assert refused.stdout == ""  # no token was admitted, none is shown
    assert target.read_text() == "tokens: []\n" and (tmp_path / "tokens.yaml").is_symlink()

    writable = tmp_path / "shared.yaml"
    writable.write_text("tokens:\n")
    writable.chmod(0o620)
    refused = phoned(tmp_path, env, "serve", "--make-token", "viewer", "--write", "shared.yaml")
    assert refused.returncode == 2 and "group/world-writable" in refused.stderr, refused.stderr
    assert refused.stdout == "" and writable.read_text() == "tokens:\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_make_token_write_refuses_a_file_of_another_user(tmp_path: Path) -> None:
    theirs = tmp_path / "tokens.yaml"
    theirs.write_text("tokens:\n")
    theirs.chmod(0o600)
    os.chown(theirs, 65534, 65534)  # nobody's
    refused = phoned(tmp_path, user_env(tmp_path), "serve", "--make-token", "planner",
                     "--write", "tokens.yaml")  # fmt: skip
    assert refused.returncode == 2 and "belongs to uid 65534" in refused.stderr, refused.stderr
    assert refused.stdout == "" and theirs.read_text() == "tokens:\n"
    assert theirs.stat().st_uid == 65534


# --- 2 and 3. the quick start, and what the pattern token may not do ---------------------------
@dataclass
class Fleet(PlaneCalls):
    """The quick start's plane and daemon, running in ``folder``."""

    folder: Path
    url: str
    tokens: dict[str, str]
    logs: list[Path]

    def served_serials(self) -> list[str]:
        daemons = self.call("planner", "GET", "/v1/devices").json()["daemons"]
        return [serial for d in daemons for serial in d["devices"]]

    def wait_state(self, task_id: str, states: tuple[str, ...], timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            task = self.call("planner", "GET", f"/v1/tasks/{task_id}").json()["task"]
            if task["state"] in states:
                return task
            time.sleep(0.2)
        logs = "\n".join(tail(log) for log in self.logs)
        raise AssertionError(f"task {task_id} is {task['state']}, not {states}\n{logs}")


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    """The quick start's commands, in ``tmp_path``, each as the document writes it (only
    the port is a free one); plus a token for another daemon's phone (``OTHER``)."""
    env = user_env(tmp_path, PHONED_SWEEP_INTERVAL="30")
    tokens = {
        "daemon": make_token(tmp_path, env, "daemon", "--device", PATTERN),
        "planner": make_token(tmp_path, env, "planner"),
        "other": make_token(tmp_path, env, "daemon", "--device", OTHER),
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    logs = [tmp_path / "serve.log", tmp_path / "run.log"]
    procs: list[subprocess.Popen[bytes]] = []
    with private_adb_server() as adb_env, contextlib.ExitStack() as running:
        running.callback(lambda: [stop_process(p) for p in reversed(procs)])

        def start(log: Path, *args: str, **more: str) -> None:
            with log.open("ab") as out:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "phoned.daemon.cli", *args], cwd=tmp_path,
                    env={**env, **adb_env, **more}, stdout=out, stderr=subprocess.STDOUT,
                ))  # fmt: skip

        start(logs[0], "serve", "--queue", "sqlite:///plane.db", "--tokens", "tokens.yaml",
              "--port", str(port))  # fmt: skip
        wait_http(f"{url}/openapi.json", logs[0], procs[0])
        start(logs[1], "run", "--sim", "--queue", url, PHONED_TOKEN=tokens["daemon"])
        made = Fleet(tmp_path, url, tokens, logs)
        deadline = time.monotonic() + 60
        while not made.served_serials() and time.monotonic() < deadline:
            assert procs[1].poll() is None, tail(logs[1])
            time.sleep(0.2)
        assert made.served_serials(), tail(logs[1])
        yield made


def test_a_pattern_daemon_token_serves_a_simulated_phone_made_after_it(fleet: Fleet) -> None:
    [serial] = fleet.served_serials()
    assert serial.startswith("127.0.0.1:") and serial != PATTERN  # its port: known only now
    env = user_env(fleet.folder, PHONED_TOKEN=fleet.tokens["planner"])
    submitted = phoned(fleet.folder, env, "submit", "--queue", fleet.url, "--method", "dnd.set",
                       "--param", "mode=priority", "--conversation", "demo")  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    task_id = submitted.stdout.strip()
    done = fleet.wait_state(task_id, ("completed", "failed", "stopped"))
    assert done["state"] == "completed", done
    assert (done["device"], done["observed_target"]) == (serial, "dnd.priority")
    shown = phoned(fleet.folder, env, "show", task_id, "--queue", fleet.url)
    assert shown.returncode == 0 and "zen_mode = 1" in shown.stdout, shown.stdout


def test_the_pattern_token_cannot_act_on_another_daemons_phone(fleet: Fleet) -> None:
    [serial] = fleet.served_serials()
    # another daemon, with a token for OTHER alone, registers its phone; a task waits for it
    other = {"daemon_id": "other-host", "devices": [{"serial": OTHER, "methods": ["dnd.set"]}]}
    assert fleet.call("other", "POST", "/v1/daemons/register", json=other).status_code == 200
    task = {"method": "dnd.set", "params": {"mode": "priority"}, "device": OTHER,
            "conversation_id": "demo"}  # fmt: skip
    answer = fleet.call("planner", "POST", "/v1/tasks", json=task)
    assert answer.status_code == 201, answer.text
    task_id = answer.json()["task"]["id"]

    # the pattern token reaches its own phone ...
    mine = fleet.call("daemon", "GET", "/v1/tasks", params={"device": serial})
    assert mine.status_code == 200, mine.text
    # ... and nothing of the other one: not its tasks, claims, registration nor context
    with fleet.client("daemon") as daemon:
        refused = {
            "list": daemon.get("/v1/tasks", params={"device": OTHER}),
            "read": daemon.get(f"/v1/tasks/{task_id}"),
            "claim": daemon.post("/v1/claims", json={"owner": f"intruder/{OTHER}",
                                                     "device": OTHER, "task_id": task_id}),
            "register": daemon.post("/v1/daemons/register", json={
                "daemon_id": "intruder", "devices": [{"serial": OTHER, "methods": ["sms.send"]}]}),
            "context": daemon.put(f"/v1/devices/{OTHER}/context", json={}),
        }  # fmt: skip
    assert {k: r.status_code for k, r in refused.items()} == dict.fromkeys(refused, 403)
    events = fleet.call("daemon", "GET", "/v1/events", params={"after": 0}).json()["events"]
    assert task_id not in {e["task_id"] for e in events}
    time.sleep(1)  # the simulated phone's daemon is idle: it does not take the task either
    waiting = fleet.call("planner", "GET", f"/v1/tasks/{task_id}").json()["task"]
    assert (waiting["state"], waiting["lease_owner"]) == ("queued", None)
    daemons = fleet.call("planner", "GET", "/v1/devices").json()["daemons"]
    assert {d["daemon_id"]: sorted(d["devices"]) for d in daemons}["other-host"] == [OTHER]
    assert "intruder" not in {d["daemon_id"] for d in daemons}
    # the other daemon's own token may claim it
    claim = {"owner": f"other-host/{OTHER}", "device": OTHER, "task_id": task_id}
    claimed = fleet.call("other", "POST", "/v1/claims", json=claim).json()["task"]
    assert claimed["id"] == task_id
