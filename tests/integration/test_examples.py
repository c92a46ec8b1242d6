"""Every file in ``examples/`` runs: submitted with the real ``phoned submit`` / ``phoned
workflow submit`` to a real daemon serving a simulated phone, and carried to ``completed``
(an approval-gated one approved with ``phoned approve`` quoting its digest, a permission
request granted on the phone by the person)."""

from __future__ import annotations

import pytest
from phoned.daemon.lifecycle.documents import read_document
from phoned.daemon.lifecycle.states import TaskState
from phoned.device.actions.registry import REGISTRY
from phoned_process import REPO, Daemon

pytestmark = pytest.mark.integration

EXAMPLES = REPO / "examples"
TASKS = sorted(p.name for p in EXAMPLES.glob("*.yaml") if p.name != "workflow.yaml")


def test_there_is_an_example_for_every_method() -> None:
    assert {read_document(str(EXAMPLES / name))["method"] for name in TASKS} == set(REGISTRY)
    assert sorted(f"{m}.yaml" for m in REGISTRY) == TASKS


@pytest.mark.parametrize("name", TASKS)
def test_example_task_runs_to_completed(name: str, daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    sim.phone.bluetooth.TURN_ON_S = 0.2
    if name.startswith("ui."):  # the UI tier's examples act in the notes app (docs/ui-tier.md)
        _open_notes(sim, list_screen=name == "ui.scroll.yaml")
    daemon.start()
    task_id = daemon.phoned("submit", str(EXAMPLES / name)).strip()
    task = daemon.state(task_id, TaskState.COMPLETED, TaskState.APPROVAL, TaskState.PERMISSION,
                        TaskState.WAITING, TaskState.FAILED, TaskState.STOPPED, timeout=60)  # fmt: skip
    if task.state is TaskState.APPROVAL:  # sms.send, ui.*: the person approves the preview
        assert task.approval_digest is not None
        daemon.phoned("approve", task_id, "--revision", str(task.revision),
                      "--digest", task.approval_digest, "--conversation", task.conversation_id)  # fmt: skip
    elif task.state is TaskState.WAITING:  # ui.handoff: the person does the step
        from phoned.sim.ui import notes_app

        notes_app.person_saves_note(sim.phone.ui, "example note")
    elif task.state is TaskState.PERMISSION:  # permission.request: granted on the phone
        params = task.params
        sim.phone.packages.grant(params["package"], params["permission"])
    done = daemon.state(
        task_id, TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED, timeout=60
    )
    assert done.state is TaskState.COMPLETED, (done.failure, daemon.log.read_text()[-2000:])
    assert daemon.evidence(task_id)


def _open_notes(sim, list_screen: bool) -> None:
    from phoned.sim.ui import notes_app
    from phoned.sim.ui.intents import Intent

    screen = notes_app.LIST if list_screen else notes_app.MAIN
    sim.phone.ui.start(Intent(component=(notes_app.PKG, screen)))


def test_example_workflow_runs_every_step_in_order(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=34)
    sim.phone.bluetooth.TURN_ON_S = 0.2
    daemon.start()
    ids = daemon.phoned("workflow", "submit", str(EXAMPLES / "workflow.yaml")).split()
    steps = read_document(str(EXAMPLES / "workflow.yaml"))["steps"]
    assert len(ids) == len(steps)
    done = [daemon.state(i, TaskState.COMPLETED, TaskState.FAILED, TaskState.STOPPED, timeout=60)
            for i in ids]  # fmt: skip
    assert [t.state for t in done] == [TaskState.COMPLETED] * len(steps)
    assert [t.method for t in done] == [s["method"] for s in steps]
    assert sim.phone.notification.zen_mode == 1
