"""Small pieces many tests need, kept once.

* ``REPO``: the repository's root.
* ``run_python(*args, env=...)``: ``python ARGS`` in a child process from ``REPO``, its
  output captured as text, never raising on the exit code (``-m phoned.daemon.cli ...`` runs
  ``phoned``).
* ``phoned(queue, *args, stdin=None, env=None)``: ``phoned ARGS --queue QUEUE`` in this
  process (click's test runner); its result, whatever the exit code.
* ``phoned_env(port, config)``: this process's environment without ``PHONED_*`` and
  ``ADBUTILS_*``, talking to the adb server on ``port`` with the config file ``config``.
* ``adb_server_answers(port)``, ``stop_adb_server(port)``: is an adb server listening on
  a loopback port; stop it the way ``adb kill-server`` does.
* ``ANDROID_FIXTURES``, ``android_fixture(name)``: the captured outputs, and one without
  its ``## `` source lines.
* ``call_tool(phone, fn, argv)``: a simulated phone's tool or service run directly; its
  exit code, stdout and stderr.
* ``sms_intent(number, body)``: the ``am start`` arguments of Android's "send a text"
  intent (``-a android.intent.action.SENDTO -d smsto:NUMBER --es sms_body BODY``).
* ``load_script(name)``: ``scripts/NAME.py`` imported as the module ``NAME`` (the scripts
  are not a package a test can import by name).
* ``assert_claimed_once_each(workers, tasks, competed)``: processes that each printed the
  JSON list of the task ids it claimed, checked to have claimed every task exactly once.
* ``task_record(**changes)``: a task record as a store returns it: ``sms.send`` task ``t1``
  of conversation ``c1`` on phone ``S``, running its first of two attempts; ``changes``
  replace fields.
* ``heavy_modules_after(code, heavy)``: which of the packages ``heavy`` a fresh interpreter
  has loaded once it ran ``code`` (what a light command must leave unloaded).
* ``transcript_steps(page, fences)``: a committed transcript page's numbered steps: each
  one's title, and the kind and text of its last fenced block (what the step answered).
* ``assert_met_sending_nothing(out, writes)``, ``assert_refused_running_nothing(dut,
  methods, params, field)``: what a scenario test of a method asserts again and again (a
  phone already as asked; params refused before anything runs on the phone).
* ``sent_as(dut, status, to, body, **params)``: an approved ``sms.send``, its outcome
  asserted to end as ``status``.
* ``mode(path)``: the permission bits of ``path`` itself (a link's own, not its target's).
* ``link_target(tmp)``: ``tmp/outside``, where the tests of planted links point them: 0755
  holding one 0644 file ``keep`` ("untouched"); each test checks it is so still.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from phoned.daemon.cli import main
from phoned.daemon.lifecycle.records import TaskRecord
from phoned.daemon.lifecycle.states import TaskState
from phoned.device.actions import Status
from phoned.sim.shell.registry import BufferSink, ToolIO

REPO = Path(__file__).resolve().parents[1]
ANDROID_FIXTURES = REPO / "tests" / "fixtures" / "android"


def run_python(
    *args: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` from ``REPO`` with exactly ``env``; stdout and stderr as text."""
    return subprocess.run([sys.executable, *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip


def phoned(queue: str, *args: str, stdin: str | None = None, env: Any = None) -> Result:
    """``phoned ARGS --queue QUEUE`` through click's runner (``stdin`` typed in, ``env`` set
    meanwhile): quick, and a failure shows the verb's own traceback."""
    return CliRunner().invoke(main, [*args, "--queue", queue], input=stdin, env=env)


def phoned_env(port: int, config: Path) -> dict[str, str]:
    """The environment of a ``phoned`` child: no inherited ``PHONED_*``/``ADBUTILS_*``, the
    adb server on ``port`` (``ANDROID_ADB_SERVER_PORT``), the config file ``config``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHONED_", "ADBUTILS_"))}
    env.update(ANDROID_ADB_SERVER_PORT=str(port), PHONED_CONFIG=str(config))
    return env


def adb_server_answers(port: int) -> bool:
    """Something accepts connections on ``127.0.0.1:port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def stop_adb_server(port: int) -> None:
    """Stop the adb server on ``port`` the way ``adb kill-server`` does (``host:kill``)."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2) as sock:
        sock.sendall(b"0009host:kill")
        sock.recv(4)
    deadline = time.monotonic() + 5
    while adb_server_answers(port) and time.monotonic() < deadline:
        time.sleep(0.05)


def load_script(name: str) -> Any:
    """``REPO/scripts/NAME.py`` imported as the module ``NAME``, registered in ``sys.modules``
    first (a script's dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def assert_claimed_once_each(
    workers: list[subprocess.Popen[str]], tasks: int, competed: int
) -> None:
    """Every worker process exits 0 having printed the JSON list of the ids it claimed; the
    ``tasks`` tasks were claimed once each, by at least ``competed`` of the workers (the
    processes really competed: a race one process wins alone proves nothing)."""
    results = []
    for proc in workers:
        out, _ = proc.communicate(timeout=90)
        assert proc.returncode == 0
        results.append(json.loads(out))
    claimed = [task_id for ids in results for task_id in ids]
    assert len(claimed) == len(set(claimed)) == tasks
    assert sum(1 for ids in results if ids) >= competed


def task_record(**changes: Any) -> TaskRecord:
    """A running ``sms.send`` record (``t1``, conversation ``c1``, phone ``S``, from the CLI,
    attempt 1 of 2, revision 1) with ``changes`` applied: the fields a test means, named."""
    fields: dict[str, Any] = {
        "id": "t1", "conversation_id": "c1", "method": "sms.send",
        "params": {"to": "+15551234567", "body": "see you at 8"}, "device": "S",
        "source": "cli", "state": TaskState.RUNNING, "state_version": 3, "revision": 1,
        "attempt": 1, "max_attempts": 2, "created_at": 0.0, "updated_at": 0.0,
    }  # fmt: skip
    return TaskRecord(**{**fields, **changes})


def heavy_modules_after(code: str, heavy: set[str]) -> list[str]:
    """The top-level packages of ``heavy`` loaded in a fresh ``python -c`` after ``code`` ran
    (a child process: this one has imported everything already), sorted."""
    probe = (
        f"import json, sys; {code}; "
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(heavy)!r}))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    found: list[str] = json.loads(loaded.stdout)
    return found


def transcript_steps(page: str, fences: str) -> list[tuple[str, str, str]]:
    """Per ``## N. title`` section of a transcript page: the title, and the kind and text of
    its last block fenced as one of ``fences`` (an alternation, e.g. ``json|console``)."""
    steps = []
    for section in re.split(r"^## \d+\. ", page, flags=re.M)[1:]:
        blocks = re.findall(rf"```({fences})\n(.*?)\n```", section, flags=re.S)
        kind, text = blocks[-1]
        steps.append((section.splitlines()[0], kind, text))
    return steps


def assert_met_sending_nothing(out: Any, writes: list[Any]) -> None:
    """``out`` is met, none of the write commands ``writes`` (the ones a test looks for
    among those the phone ran) ran, and the evidence says no command was sent."""
    assert out.status is Status.MET
    assert writes == []
    assert "no command sent" in " ".join(out.evidence.notes)


def assert_refused_running_nothing(
    dut: Any, methods: tuple[str, ...], params: dict[str, Any], field: str
) -> None:
    """Each of ``methods`` refuses ``params`` as invalid, naming ``field``, and nothing ran
    on the phone ``dut`` (a scenario's device under test) for any of them."""
    for method in methods:
        out = dut.run(method, params)
        assert out.status is Status.INVALID_PARAMS and out.detail["field"] == field, out.message
    assert dut.execs() == []


def sent_as(dut: Any, status: Status, to: str, body: str, **params: Any) -> Any:
    """An approved ``sms.send`` of ``body`` to ``to`` (``params``: more of its params) on the
    scenario's phone ``dut``, given 3 s to settle on a simulated phone and 30 s on a real
    one: its outcome, asserted to end as ``status``."""
    settle = 3.0 if dut.sim is not None else 30.0
    out = dut.approved_send({"to": to, "body": body, **params}, settle_timeout=settle)
    assert out.status is status, out.message
    return out


def mode(path: Path) -> int:
    """The permission bits of ``path`` itself (``lstat``: a symlink's own)."""
    return stat.S_IMODE(path.lstat().st_mode)


def link_target(tmp: Path) -> Path:
    """``tmp/outside``: 0755, holding one 0644 file ``keep`` that reads "untouched"."""
    target = tmp / "outside"
    target.mkdir()
    (target / "keep").write_text("untouched")
    target.chmod(0o755)
    (target / "keep").chmod(0o644)
    return target


def android_fixture(name: str) -> str:
    """``ANDROID_FIXTURES/name`` without its ``## `` lines (where the capture came from)."""
    lines = (ANDROID_FIXTURES / name).read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("## "))


def call_tool(
    phone: Any, fn: Callable[[ToolIO, list[str]], int], argv: list[str]
) -> tuple[int, str, str]:
    """``fn(io, argv)`` on ``phone`` (a tool or a ``cmd``/``dumpsys`` service): its exit
    code, stdout and stderr as text."""
    out, err = BufferSink(), BufferSink()
    rc = fn(ToolIO(phone, out, err), argv)
    return rc, out.data.decode(), err.data.decode()


def sms_intent(number: str, body: str) -> list[str]:
    """``am start`` arguments of the SENDTO intent that opens a composer to ``number``
    with ``body`` typed (``Intent.ACTION_SENDTO``, extra ``sms_body``)."""
    return ["-a", "android.intent.action.SENDTO", "-d", f"smsto:{number}", "--es", "sms_body", body]
