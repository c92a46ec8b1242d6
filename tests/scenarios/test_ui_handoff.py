"""Issue 34: a step handed to the person (``ui.handoff``) in the simulated notes app.

The real ``phoned run`` serves a simulated phone (SDK 34) through the real adb server over a
SQLite queue; the test plays the person on the simulated screen
(``notes_app.person_saves_note``: typed on the phone, one finger tap on Save). The step
completes when phoned observes the expectation, fails ``timeout`` when nobody does it within
its TTL and ``stale_state`` when another app comes to the front. phoned never taps, types or
reads what the person enters: the typed text is in no evidence, artifact, daemon log or
phone-side command log, and the screens it keeps have the note field blanked.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from PIL import Image

from phoned.daemon.cli import main
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.lifecycle.waiting import WaitKind
from phoned.sim.server import Simulator
from phoned.sim.ui import notes_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from phoned_process import Daemon, daemon_env, fresh_daemon

pytestmark = pytest.mark.integration

NOTES = notes_app.PKG
SECRET = "one-time code 739154 Пароль"  # what the person types: never kept by phoned
INSTRUCTION = "Type the code from the SMS into the note and tap Save"
SAVED = {"appears": {"resource_id": f"{NOTES}:id/saved_count", "text": "1"}}
TERMINAL = (TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED)


@pytest.fixture
def daemon(adb_server: Any, tmp_path: Path) -> Iterator[Daemon]:
    env = daemon_env(adb_server.port, tmp_path / "state", PHONED_SETTLE_TIMEOUT="3")
    with fresh_daemon(env, tmp_path) as made:
        yield made


def phoned(daemon: Daemon, *args: str) -> str:
    result = CliRunner().invoke(main, [*args, "--queue", f"sqlite:///{daemon.queue}"])
    assert result.exit_code == 0, result.output
    return result.output


def _handed_over(daemon: Daemon, sim_factory: Any, ttl_s: int = 120) -> tuple[Simulator, str]:
    """The notes app in front (``app.open``), then a handoff waiting for the person."""
    sim: Simulator = sim_factory(sdk=34)
    daemon.start()
    opened = daemon.submit({"method": "app.open", "params": {"package": NOTES}})
    daemon.state(opened, TaskState.COMPLETED)
    params = {"package": NOTES, "instruction": INSTRUCTION, "expect": SAVED, "ttl_s": ttl_s}
    task_id = daemon.submit({"method": "ui.handoff", "params": params})
    paused = daemon.state(task_id, TaskState.WAITING)
    waiting = paused.waiting
    assert waiting is not None and waiting.kind is WaitKind.PERSON
    assert waiting.package == NOTES and waiting.until is not None
    assert waiting.until - time.time() <= ttl_s + 1  # whole seconds, rounded up
    return sim, task_id


def _kept_text(daemon: Daemon, task_id: str, tmp_path: Path) -> str:
    """Everything phoned kept of the task and of its run: evidence, journal, the artifacts
    (texts), the daemon's log."""
    kept = [json.dumps(daemon.evidence(task_id), ensure_ascii=False)]
    kept.append(json.dumps([j.__dict__ for j in daemon.using(lambda s: s.journal(task_id))],
                           ensure_ascii=False, default=str))  # fmt: skip
    for path in (tmp_path / "state").rglob("*"):
        if path.is_file() and path.suffix in (".xml", ".json", ".txt", ".log"):
            kept.append(path.read_text(errors="replace"))
    kept.append(daemon.log.read_text(errors="replace"))
    return "\n".join(kept)


def _never_acted(sim: Simulator, person_taps: int) -> None:
    """phoned sent no input: the only touches are the person's; no ``input``, no text."""
    assert len(sim.phone.log.entries("click")) == person_taps
    assert not [a for a in sim.phone.log.argvs() if a[:1] == ("input",)]
    logged = json.dumps([e.argv for e in sim.phone.log.entries()], ensure_ascii=False)
    assert SECRET not in logged and "739154" not in logged


def test_the_step_completes_when_the_person_does_it_and_nothing_they_typed_is_kept(
    daemon: Daemon, sim_factory: Any, tmp_path: Path
) -> None:
    sim, task_id = _handed_over(daemon, sim_factory)
    # the card: "waiting for you" with the instruction, in show, show --json and tasks
    shown = phoned(daemon, "show", task_id)
    assert "waiting for you" in shown and repr(INSTRUCTION) in shown
    person = json.loads(phoned(daemon, "show", task_id, "--json"))["pending_person"]
    assert (person["package"], person["instruction"]) == (NOTES, INSTRUCTION)
    assert person["screen"].endswith("handoff_before_screenshot.png")
    assert f"waiting for you: {INSTRUCTION} (in {NOTES})" in phoned(daemon, "tasks")
    time.sleep(1.5)  # the watcher looked (every second): nothing done, still waiting
    assert daemon.task(task_id).state is TaskState.WAITING
    _never_acted(sim, 0)

    notes_app.person_saves_note(sim.phone.ui, SECRET)  # the person does the step
    done = daemon.state(task_id, *TERMINAL, timeout=20)
    assert (done.state, done.observed_target) == (TaskState.COMPLETED, "ui.handed_off")
    outcome = daemon.evidence(task_id, "outcome")[-1]["body"]
    assert outcome["status"] == "met"
    assert outcome["evidence"]["target"]["observed"]["appears"] == 1
    assert daemon.evidence(task_id, "resume_check")  # a fresh stale check before it went on

    folder = next(p for p in (tmp_path / "state").rglob(task_id) if p.is_dir())
    for when in ("before", "after"):
        xml = (folder / f"handoff_{when}_hierarchy.xml").read_text()
        assert f'resource-id="{NOTES}:id/note_text"' in xml and SECRET not in xml
        assert not (folder / f"handoff_{when}_raw.png").exists()
    after = (folder / "handoff_after_hierarchy.xml").read_text()
    assert f'resource-id="{NOTES}:id/saved_count"' in after
    field = sim.phone.ui.focused_edit()
    assert field is not None and field.text == SECRET  # the phone shows it: phoned blanked it
    left, top, right, bottom = field.bounds
    with Image.open(folder / "handoff_after_screenshot.png") as shot:
        middle = shot.convert("RGB").getpixel(((left + right) // 2, (top + bottom) // 2))
    assert middle == (128, 128, 128)
    assert SECRET not in _kept_text(daemon, task_id, tmp_path)
    _never_acted(sim, 1)


def test_nobody_does_the_step_and_it_fails_timeout_at_its_ttl(
    daemon: Daemon, sim_factory: Any, tmp_path: Path
) -> None:
    sim, task_id = _handed_over(daemon, sim_factory, ttl_s=10)
    failed = daemon.state(task_id, *TERMINAL, timeout=30)
    assert failed.state is TaskState.FAILED and failed.failure is not None
    assert failed.failure.reason is FailureReason.TIMEOUT and "TTL (10 s)" in failed.failure.message
    assert failed.attempt == 1  # not retried: that would ask the person again unasked
    assert sim.phone.ui.top().package == NOTES
    _never_acted(sim, 0)


def test_another_app_in_front_fails_stale_state(
    daemon: Daemon, sim_factory: Any, tmp_path: Path
) -> None:
    sim, task_id = _handed_over(daemon, sim_factory)
    sim.phone.ui.go_home()  # another app (the launcher) comes to the front
    failed = daemon.state(task_id, *TERMINAL, timeout=20)
    assert failed.state is TaskState.FAILED and failed.failure is not None
    assert failed.failure.reason is FailureReason.STALE_STATE
    assert f"not {NOTES}" in failed.failure.message
    _never_acted(sim, 0)


def test_bad_input_is_refused_at_the_door_naming_the_field(daemon: Daemon) -> None:
    """Missing, too long, control characters, a field's text: refused at submit."""
    base = {"package": NOTES, "instruction": INSTRUCTION, "expect": SAVED}
    bad = {
        "instruction": [{k: v for k, v in base.items() if k != "instruction"},
                        {**base, "instruction": "x" * 501},
                        {**base, "instruction": "tap Save\x1b[2J"}],
        "expect": [{k: v for k, v in base.items() if k != "expect"},
                   {**base, "expect": {"appears": {"resource_id": "a\nb"}}},
                   {**base, "expect": {"field": {"resource_id": f"{NOTES}:id/note_text"},
                                       "text": "x"}}],
        "ttl_s": [{**base, "ttl_s": 7200}],
    }  # fmt: skip
    for field, params_list in bad.items():
        for params in params_list:
            task = json.dumps({"conversation_id": "c", "method": "ui.handoff", "params": params})
            out = CliRunner().invoke(main, ["submit", "-", "--queue", f"sqlite:///{daemon.queue}"],
                                     input=task)  # fmt: skip
            assert out.exit_code != 0 and field in out.output, (params, out.output)
    assert daemon.using(lambda s: s.list_tasks()) == []
