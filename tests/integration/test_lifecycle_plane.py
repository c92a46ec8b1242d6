"""Issue #13 over the control plane: a real ``phoned serve`` over a SQLite queue, a real
``phoned run --queue http://...`` serving a simulated phone behind the private adb server,
and a second daemon token for a phone nobody serves (the test plays that daemon by hand).

Seed 004's control methods answered directly (never queued), ``wait_policy``, the release
gate of ``POST /tasks/{id}/complete``, a person's pause and resume, revisions in the API,
``failure.retryable`` on records, the documented 422 shape, idempotency conflicts, a stale
device context flagged, and an amend after the admitted effect through the plane.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from phoned_process import BeforeLine, Hooks
from planes import Grant
from stacks import Stack, open_stack

pytestmark = pytest.mark.integration

IDLE = "emu-idle"  # a phone no daemon serves: its tasks stay where the test puts them
CONV = "conv-13"
TERMINAL = ("completed", "failed", "stopped")


class LifecycleStack(Stack):
    """The stack of this module: a planner, a viewer, the phone's daemon and a daemon token
    for ``IDLE`` the tests play by hand; ``hooks`` see each command line of the phone."""

    def submit(self, **task: Any) -> dict[str, Any]:
        doc = {"conversation_id": CONV, "method": "dnd.set", "params": {"mode": "priority"}}
        answer = self.call("planner", "POST", "/v1/tasks", json={**doc, **task})
        assert answer.status_code == 201, answer.text
        return dict(answer.json()["task"])

    def queue(self) -> dict[str, int]:
        return dict(self.call("viewer", "GET", "/v1/queue").json()["queue"])

    def cursor(self) -> int:
        answer = self.call("viewer", "GET", "/v1/events", params={"after": 0, "limit": 1000})
        return int(answer.json()["cursor"])


@contextlib.contextmanager
def _lifecycle_stack(tmp: Path, adb_server: Any, sims: Any) -> Iterator[LifecycleStack]:
    hooks = Hooks()
    sim = sims(sdk=34, shell_factory=BeforeLine.factory(hooks))
    grants = {"planner": Grant("planner"), "viewer": Grant("viewer"),
              "daemon": Grant("daemon", (sim.serial,)), "idle-daemon": Grant("daemon", (IDLE,))}  # fmt: skip
    settle = {"PHONED_SETTLE_TIMEOUT": "3", "PHONED_GRACE_PERIOD": "1"}
    with open_stack(
        tmp, adb_server.env, grants, sim=sim, daemon_id="lc-d1", daemon_env=settle
    ) as made:
        yield LifecycleStack(made.url, made.tokens, made.logs, made.sim, made.reader, hooks)


@pytest.fixture
def fresh_stack(tmp_path: Path, adb_server: Any, sim_factory: Any) -> Iterator[LifecycleStack]:
    """A stack of its own, for a test that reads the whole queue, registry or context."""
    with _lifecycle_stack(tmp_path, adb_server, sim_factory) as made:
        yield made


@pytest.fixture(scope="module")
def shared_stack(
    tmp_path_factory: pytest.TempPathFactory, adb_server: Any, module_sim_factory: Any
) -> Iterator[LifecycleStack]:
    tmp = tmp_path_factory.mktemp("lifecycle-plane")
    with _lifecycle_stack(tmp, adb_server, module_sim_factory) as made:
        yield made


@pytest.fixture
def stack(shared_stack: LifecycleStack) -> Iterator[LifecycleStack]:
    """The module's stack as a fresh one would be for the test's own tasks: no hooks, DND
    off, an empty command log (each test reads only its own tasks; the idempotency key and
    the tasks left on ``IDLE`` are each test's own)."""
    shared_stack.hooks.clear()
    shared_stack.phone.notification.set_zen(0)
    shared_stack.phone.log.clear()
    try:
        yield shared_stack
    finally:
        shared_stack.hooks.clear()


def _control(stack: LifecycleStack, method: str, **fields: Any) -> httpx.Response:
    envelope = {"method": method, "source": "CLOUD", "queue": "state", "taskQueue": "state",
                "forceTaskManager": True, "contract_version": "a2a-task-orchestration-v1"}  # fmt: skip
    return stack.call("viewer", "POST", "/v1/control", json={**envelope, **fields})


def test_seed_004_control_methods_are_answered_directly_and_never_queued(
    fresh_stack: LifecycleStack,
) -> None:
    stack = fresh_stack
    waiting = stack.submit(device=IDLE)
    before = (stack.queue(), stack.cursor())
    answers = {
        "getDevicePlanningContext": _control(
            stack, "getDevicePlanningContext", device=stack.serial
        ),
        "getTaskManagerStatus": _control(stack, "getTaskManagerStatus"),
        "getQueueStatus": _control(stack, "getQueueStatus", device=IDLE),
        "listTasks": _control(stack, "listTasks", conversation_id=CONV),
        "getTaskStatus": _control(stack, "getTaskStatus", taskId=waiting["id"]),
        "classifyTaskIngress": _control(
            stack,
            "classifyTaskIngress",
            task={"taskMethod": "dnd.set", "conversation_id": CONV, "params": {"mode": "off"}},
        ),
    }
    for method, answer in answers.items():
        assert answer.status_code == 200, (method, answer.text)
        assert answer.json()["method"] == method and answer.json()["queued"] is False
    assert (stack.queue(), stack.cursor()) == before  # nothing queued, no transition at all
    docs = {m: a.json() for m, a in answers.items()}
    context = docs["getDevicePlanningContext"]
    assert context["device"]["dnd_mode"]["value"] == "off" and context["stale"] == []
    assert [d["daemon_id"] for d in docs["getTaskManagerStatus"]["daemons"]] == ["lc-d1"]
    assert docs["getQueueStatus"]["queue"]["queued"] == 1
    assert [t["id"] for t in docs["listTasks"]["tasks"]] == [waiting["id"]]
    assert docs["getTaskStatus"]["revisions"][0]["params"] == {"mode": "priority"}
    classified = docs["classifyTaskIngress"]["classification"]
    # (support per device over the plane is #13 item 2, helper "structure")
    assert (classified["accepted"], classified["methods"]) == (True, ["dnd.set"])
    refused = _control(stack, "submitTask", taskMethod="dnd.set")
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "method"
    # a context value older than the bound is flagged stale, never passed off as current
    old = dict(context["device"], dnd_mode={"value": "off", "observed_at": time.time() - 600,
                                             "source": "settings get global zen_mode"})  # fmt: skip
    put = stack.call("daemon", "PUT", f"/v1/devices/{stack.serial}/context", json=old)
    assert put.status_code == 200, put.text
    again = _control(stack, "getDevicePlanningContext", device=stack.serial).json()
    assert again["stale"] == ["dnd_mode"]


def test_wait_policy_completed_waits_for_the_end_and_accepted_answers_at_admission(
    stack: LifecycleStack,
) -> None:
    doc = {"conversation_id": CONV, "method": "dnd.set", "params": {"mode": "alarms"},
           "device": stack.serial}  # fmt: skip
    with stack.client("planner") as planner:
        done = planner.post("/v1/tasks", params={"wait": 30},
                            json={**doc, "wait_policy": "completed"}).json()  # fmt: skip
        accepted = planner.post("/v1/tasks", params={"wait": 30},
                                json={**doc, "wait_policy": "accepted", "device": IDLE}).json()  # fmt: skip
    assert done["terminal"] is True and done["task"]["state"] == "completed"
    assert done["task"]["observed_target"] == "dnd.alarms"
    assert accepted["terminal"] is False and accepted["task"]["state"] == "queued"
    bounded = stack.call("viewer", "GET", f"/v1/tasks/{accepted['task']['id']}/outcome",
                         params={"wait": 0.5}).json()  # fmt: skip
    assert bounded["terminal"] is False and bounded["task"]["state"] == "queued"


def _claimed(stack: LifecycleStack, task_id: str) -> dict[str, Any]:
    """Claim and start ``task_id`` as the idle phone's daemon; its report ticket."""
    with stack.client("idle-daemon") as daemon:
        claim = daemon.post("/v1/claims", json={"owner": f"hand/{IDLE}", "device": IDLE,
                                                "task_id": task_id}).json()["task"]  # fmt: skip
        ticket = {"owner": claim["lease_owner"], "attempt": claim["attempt"], "revision": 1}
        started = daemon.post(f"/v1/tasks/{task_id}/start", json={"ticket": ticket})
        assert started.status_code == 200, started.text
    return ticket


def test_an_ack_never_completes_a_task(stack: LifecycleStack) -> None:
    """Seed 004 §10: completion needs the observed target and the evidence that shows it;
    a bare ACK is refused, and so is any completion after a cancel."""
    task = stack.submit(device=IDLE)
    ticket = _claimed(stack, task["id"])
    path = f"/v1/tasks/{task['id']}/complete"
    with stack.client("idle-daemon") as daemon:
        bare = daemon.post(path, json={"ticket": ticket})
        no_evidence = daemon.post(path, json={"ticket": ticket, "observed_target": "dnd.priority"})
        ref = daemon.post(f"/v1/tasks/{task['id']}/evidence",
                          json={"ticket": ticket, "kind": "outcome", "body": {"ok": 1}}).json()["ref"]  # fmt: skip
        cancel = stack.call("planner", "POST", f"/v1/tasks/{task['id']}/cancel",
                            json={"conversation_id": CONV})  # fmt: skip
        after_cancel = daemon.post(path, json={"ticket": ticket, "observed_target": "dnd.priority",
                                               "evidence_refs": [ref]})  # fmt: skip
        unknown = daemon.post(f"/v1/tasks/{task['id']}/fail",
                              json={"ticket": ticket, "failure": {"reason": "gremlins"}})  # fmt: skip
    assert (bare.status_code, bare.json()["error"]) == (409, "TargetNotObserved")
    assert (no_evidence.status_code, no_evidence.json()["error"]) == (409, "TargetNotObserved")
    assert cancel.json()["task"]["stop_requested"] is True
    assert (after_cancel.status_code, after_cancel.json()["error"]) == (409, "StopRequested")
    assert stack.task(task["id"])["state"] == "running"
    # the documented error shape, naming the field, for an unknown failure reason
    assert unknown.status_code == 422
    body = unknown.json()
    assert body["error"] == "InvalidTask" and body["errors"][0]["field"] == "failure.reason"


def test_a_person_pauses_and_resumes_revisions_are_listed_and_keys_conflict(
    stack: LifecycleStack,
) -> None:
    task = stack.submit(device=IDLE, idempotency_key="k-13")
    path = f"/v1/tasks/{task['id']}"
    paused = stack.call("planner", "POST", f"{path}/user-pause", json={"conversation_id": CONV})
    assert paused.json()["task"]["state"] == "waiting"
    assert paused.json()["task"]["waiting_for"] == "user"
    amended = stack.call("planner", "POST", f"{path}/amend",
                         json={"conversation_id": CONV, "params": {"mode": "off"}})  # fmt: skip
    assert amended.json()["task"]["revision"] == 2
    resumed = stack.call("planner", "POST", f"{path}/user-resume", json={"conversation_id": CONV})
    assert resumed.json()["task"]["state"] == "queued"
    revisions = stack.call("viewer", "GET", f"{path}/revisions").json()["revisions"]
    assert [(r["revision"], r["params"], r["conversation_id"]) for r in revisions] == [
        (1, {"mode": "priority"}, CONV),
        (2, {"mode": "off"}, CONV),
    ]
    assert revisions[0]["checkpoint"]["remaining"]["params"] == {"mode": "off"}
    conflict = stack.call("planner", "POST", "/v1/tasks", json={
        "conversation_id": CONV, "method": "dnd.set", "params": {"mode": "alarms"},
        "device": IDLE, "idempotency_key": "k-13"})  # fmt: skip
    assert conflict.status_code == 409 and conflict.json()["error"] == "IdempotencyConflict"
    assert "params" in conflict.json()["message"]


def test_failure_records_say_whether_they_are_retryable(stack: LifecycleStack) -> None:
    task = stack.submit(device=IDLE)
    ticket = _claimed(stack, task["id"])
    with stack.client("idle-daemon") as daemon:
        failed = daemon.post(f"/v1/tasks/{task['id']}/fail",
                             json={"ticket": ticket, "failure": {"reason": "device_offline"}})  # fmt: skip
    assert failed.json()["task"]["failure"] == {
        "reason": "device_offline", "message": "", "retryable": True,
    }  # fmt: skip
    assert stack.task(task["id"])["failure"]["retryable"] is True


def test_an_amend_after_the_admitted_effect_replans_through_the_plane(
    stack: LifecycleStack,
) -> None:
    """#13 item 1 with the daemon on ``http://``: the late report is refused (409
    ``RevisionSuperseded``) and the same attempt runs revision 2 at once."""
    task_ids: list[str] = []
    amended: list[int] = []

    def amend_at_the_effect(line: str) -> None:
        if "set_dnd priority" in line and task_ids and not amended:
            answer = stack.call("planner", "POST", f"/v1/tasks/{task_ids[0]}/amend",
                                json={"conversation_id": CONV, "params": {"mode": "alarms"}})  # fmt: skip
            amended.append(answer.status_code)

    stack.hooks.append(amend_at_the_effect)
    task_ids.append(stack.submit(device=stack.serial)["id"])
    done = stack.wait_state(task_ids[0], TERMINAL, timeout=30)  # far below the 60 s lease
    assert amended == [200]
    assert (done["state"], done["revision"], done["attempt"]) == ("completed", 2, 1)
    assert done["observed_target"] == "dnd.alarms" and stack.phone.notification.zen_mode == 3
    status = stack.call("viewer", "GET", f"/v1/tasks/{task_ids[0]}").json()
    kinds = [(d["revision"], d["kind"]) for d in status["evidence"]]
    assert kinds == [(1, "outcome"), (1, "replan"), (2, "outcome")]
    assert [(j["revision"], j["outcome"]) for j in status["journal"]] == [
        (1, "confirmed_success"),
        (2, "confirmed_success"),
    ]


def test_a_person_pauses_a_running_task_through_the_plane(stack: LifecycleStack) -> None:
    """The daemon on ``http://`` meets the pause at its admission gate (409
    ``PauseRequested``), keeps a snapshot and waits for the user; only the person resumes."""
    task_ids: list[str] = []
    paused: list[int] = []

    def pause_at_the_first_read(line: str) -> None:
        if "zen_mode" in line and task_ids and not paused:
            answer = stack.call("planner", "POST", f"/v1/tasks/{task_ids[0]}/user-pause",
                                json={"conversation_id": CONV})  # fmt: skip
            paused.append(answer.status_code)

    stack.hooks.append(pause_at_the_first_read)
    task_ids.append(stack.submit(device=stack.serial)["id"])
    held = stack.wait_state(task_ids[0], ("waiting",))
    assert paused == [200] and held["waiting_for"] == "user" and held["pause_requested"]
    sets = [a for a in stack.phone.log.argvs() if a[:3] == ("cmd", "notification", "set_dnd")]
    assert sets == []  # no effect after the safe point
    time.sleep(2)  # the daemon's pause watcher never resumes a person's pause
    assert stack.task(task_ids[0])["state"] == "waiting"
    resumed = stack.call("planner", "POST", f"/v1/tasks/{task_ids[0]}/user-resume",
                         json={"conversation_id": CONV})  # fmt: skip
    assert resumed.status_code == 200, resumed.text
    done = stack.wait_state(task_ids[0], TERMINAL)
    assert (done["state"], done["attempt"]) == ("completed", 1)


def test_the_plane_client_speaks_the_new_verbs(stack: LifecycleStack) -> None:
    """``phoned pause|resume|revisions|show --queue http://...`` go through ``PlaneClient``."""
    from phoned.daemon.store.plane_client import PlaneClient

    task = stack.submit(device=IDLE)
    store = PlaneClient(stack.url, stack.tokens["planner"])
    try:
        held = store.user_pause(task["id"], CONV, time.time())
        store.amend(task["id"], CONV, {"mode": "alarms"}, time.time())
        back = store.user_resume(task["id"], CONV, time.time())
        revisions = store.revisions(task["id"])
    finally:
        store.close()
    assert (held.state.value, held.pause_requested, back.state.value) == ("waiting", True, "queued")
    assert [(r.revision, r.params) for r in revisions] == [
        (1, {"mode": "priority"}),
        (2, {"mode": "alarms"}),
    ]
    assert revisions[0].checkpoint is not None and revisions[1].checkpoint is None
