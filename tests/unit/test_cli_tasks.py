"""``phoned submit``, ``workflow submit``, ``tasks``, ``show``, ``rerun`` through click's
CliRunner against a real SQLite queue file; errors are one line and an exit code."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import heavy_modules_after, phoned
from phoned.daemon.cli import main
from phoned.daemon.lifecycle.records import Failure
from phoned.daemon.lifecycle.states import FailureReason
from phoned.daemon.store.sqlite_store import SqliteStore
from seed004_examples import SEED004_TASK, SEED004_WORKFLOW


def stored(queue: str) -> SqliteStore:
    return SqliteStore(queue[len("sqlite://") :])


def all_tasks(queue: str) -> list[dict[str, Any]]:
    result = phoned(queue, "tasks", "--json")
    assert result.exit_code == 0, result.output
    docs: list[dict[str, Any]] = json.loads(result.stdout)
    return docs[::-1]  # `phoned tasks` lists newest first; these tests read submission order


def assert_one_line_error(result: Result, code: int, *needles: str) -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("phoned: "), result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0]


def test_submit_with_params_prints_the_id_and_queues_the_task(queue: str) -> None:
    result = phoned(queue, "submit", "--method", "dnd.set", "--param", "mode=priority",
                    "--conversation", "c1", "--device", "emulator-5554")  # fmt: skip
    assert result.exit_code == 0, result.output
    task_id = result.stdout.strip()
    [task] = all_tasks(queue)
    assert (task["id"], task["method"], task["params"]) == (
        task_id,
        "dnd.set",
        {"mode": "priority"},
    )
    assert (task["state"], task["device"], task["source"]) == ("queued", "emulator-5554", "cli")


@pytest.mark.parametrize(
    ("method", "pairs", "want"),
    [
        ("bluetooth.set", ["enabled=true"], {"enabled": True}),
        ("volume.set", ["stream=music", "level=7"], {"stream": "music", "level": 7}),
        ("sms.draft", ["to=+15551234567", "body=hi"], {"to": "+15551234567", "body": "hi"}),
        ("sms.draft", ["to=15551234567", "body=42"], {"to": "15551234567", "body": "42"}),
        ("sms.draft", ["to=0301234567", "body=true"], {"to": "0301234567", "body": "true"}),
    ],
)
def test_param_values_are_json_unless_the_schema_wants_text(
    queue: str, method: str, pairs: list[str], want: dict[str, Any]
) -> None:
    args = [a for pair in pairs for a in ("--param", pair)]
    result = phoned(queue, "submit", "--method", method, *args, "--conversation", "c")
    assert result.exit_code == 0, result.output
    assert all_tasks(queue)[0]["params"] == want


def test_submit_json_prints_the_record(queue: str) -> None:
    result = phoned(queue, "submit", "--method", "dnd.get", "--conversation", "c", "--json")
    record = json.loads(result.stdout)
    assert (record["method"], record["state"], record["revision"]) == ("dnd.get", "queued", 1)


def test_submit_from_file_and_stdin(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "task.json"
    path.write_text(
        json.dumps({"method": "dnd.set", "params": {"mode": "off"}, "conversation_id": "c"})
    )
    assert phoned(queue, "submit", str(path)).exit_code == 0
    yaml_text = "method: sms.draft\nconversation_id: c\nparams:\n  to: +15551234567\n  body: hi\n"
    result = phoned(queue, "submit", "-", stdin=yaml_text)
    assert result.exit_code == 0, result.output
    tasks = all_tasks(queue)
    assert [t["method"] for t in tasks] == ["dnd.set", "sms.draft"]
    # YAML 1.1 would read the unquoted +15551234567 as an integer; it must stay the number
    assert tasks[1]["params"]["to"] == "+15551234567"


def test_submit_accepts_the_seed004_shape(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(SEED004_TASK))
    result = phoned(queue, "submit", str(path), "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert (record["method"], record["params"]) == ("dnd.set", {"mode": "priority"})
    assert (record["step_id"], record["plan_id"], record["output_key"]) == (
        "step_quiet", "plan_meeting", "dnd_result",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--method", "dnd.set", "--param", "mode=loud", "--conversation", "c"], "params.mode"),
        (["--method", "dnd.fly", "--conversation", "c"], "method"),
        (["--method", "dnd.set", "--param", "mode=off"], "conversation_id"),
        (
            [
                "--method",
                "sms.send",
                "--param",
                "to=+1 call me",
                "--param",
                "body=x",
                "--conversation",
                "c",
            ],
            "params.to",
        ),
        (
            ["--method", "bluetooth.set", "--param", "enabled=yes", "--conversation", "c"],
            "params.enabled",
        ),
    ],
)
def test_invalid_task_names_the_field_exits_2_and_queues_nothing(
    queue: str, args: list[str], field: str
) -> None:
    result = phoned(queue, "submit", *args)
    assert_one_line_error(result, 2, field)
    assert all_tasks(queue) == []


def test_unknown_fields_in_a_file_are_refused_by_name(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("method: dnd.get\nconversation_id: c\npriority: high\n")
    assert_one_line_error(phoned(queue, "submit", str(path)), 2, "priority")
    assert all_tasks(queue) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["submit"], "--method"),
        (["submit", "/nonexistent/task.json"], "cannot read"),
        (["submit", "-", "--method", "dnd.get"], "not both"),
        (["submit", "-", "--param", "mode=off"], "--param and --conversation go with --method"),
        (
            ["submit", "--method", "dnd.get", "--param", "novalue", "--conversation", "c"],
            "KEY=VALUE",
        ),
    ],
)
def test_unusable_input_is_exit_2(queue: str, args: list[str], needle: str) -> None:
    assert_one_line_error(phoned(queue, *args), 2, needle)


def test_broken_document_is_exit_2(queue: str) -> None:
    result = phoned(queue, "submit", "-", stdin='{"method": "dnd.get",')
    assert_one_line_error(result, 2, "neither JSON nor YAML")


def test_bad_queue_url_and_bad_config_are_exit_2(queue: str) -> None:
    result = CliRunner().invoke(main, ["tasks", "--queue", "mysql://x"])
    assert_one_line_error(result, 2, "queue")
    # a well-formed URL whose server is unreachable is a runtime failure (1), not usage (2)
    result = CliRunner().invoke(main, ["tasks", "--queue", "postgresql://127.0.0.1:1/phoned"])
    assert_one_line_error(result, 1, "queue")
    result = phoned(queue, "tasks", env={"PHONED_POLL_INTERVAL": "often"})
    assert_one_line_error(result, 2, "poll_interval")


def test_idempotency_key_returns_the_first_task(queue: str) -> None:
    args = ["submit", "--method", "dnd.get", "--conversation", "c", "--idempotency-key", "k1"]
    first, again = phoned(queue, *args), phoned(queue, *args)
    assert first.stdout == again.stdout and len(all_tasks(queue)) == 1


def test_workflow_submit_keeps_steps_in_order(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "wf.json"
    path.write_text(json.dumps(SEED004_WORKFLOW))
    result = phoned(queue, "workflow", "submit", str(path))
    assert result.exit_code == 0, result.output
    ids = result.stdout.split()
    tasks = all_tasks(queue)
    assert [t["id"] for t in tasks] == ids
    assert [t["method"] for t in tasks] == ["volume.set", "dnd.set", "volume.set"]
    assert [t["step_index"] for t in tasks] == [0, 1, 2]
    workflow_id = tasks[0]["workflow_id"]
    listed = json.loads(phoned(queue, "tasks", "--workflow", workflow_id, "--json").stdout)
    assert len(listed) == 3


def test_workflow_submit_refuses_a_single_task(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"method": "dnd.get", "conversation_id": "c"}))
    assert_one_line_error(phoned(queue, "workflow", "submit", str(path)), 2, "steps")
    bad = {**SEED004_WORKFLOW, "subTasks": [{"taskMethod": "dnd.set", "mode": "loud"}]}
    path.write_text(json.dumps(bad))
    assert_one_line_error(phoned(queue, "workflow", "submit", str(path)), 2, "subTasks.0.mode")
    assert all_tasks(queue) == []


def test_tasks_table_and_filters(queue: str) -> None:
    for conversation in ("a", "b"):
        phoned(queue, "submit", "--method", "dnd.get", "--conversation", conversation)
    table = phoned(queue, "tasks").stdout.splitlines()
    assert table[0].split()[:4] == ["ID", "STATE", "METHOD", "DEVICE"] and len(table) == 3
    only_b = json.loads(phoned(queue, "tasks", "--conversation", "b", "--json").stdout)
    assert [t["conversation_id"] for t in only_b] == ["b"]
    assert json.loads(phoned(queue, "tasks", "--state", "completed", "--json").stdout) == []
    assert len(json.loads(phoned(queue, "tasks", "--limit", "1", "--json").stdout)) == 1
    assert phoned(queue, "tasks", "--state", "bogus").exit_code == 2


def _failed_task(queue: str) -> str:
    task_id = phoned(queue, "submit", "--method", "dnd.get", "--conversation", "c").stdout.strip()
    store = stored(queue)
    try:
        claimed = store.claim("daemon-x/w0", None, time.time())
        assert claimed is not None
        store.start(claimed.ticket, time.time())
        store.fail(claimed.ticket, Failure(FailureReason.ACTION_ERROR, "boom"), time.time())
    finally:
        store.close()
    return task_id


def test_show_text_and_json(queue: str) -> None:
    task_id = _failed_task(queue)
    text = phoned(queue, "show", task_id)
    assert text.exit_code == 0, text.output
    assert f"task {task_id}  dnd.get  failed" in text.stdout
    assert "failure: action_error (final) boom" in text.stdout
    assert [ln.split()[2] for ln in text.stdout.split("transitions\n")[1].splitlines()[:4]] == [
        "queued", "dispatched", "running", "failed",
    ]  # fmt: skip
    report = json.loads(phoned(queue, "show", task_id, "--json").stdout)
    assert report["task"]["failure"] == {
        "reason": "action_error",
        "retryable": False,
        "message": "boom",
    }
    assert [t["state"] for t in report["transitions"]] == [
        "queued",
        "dispatched",
        "running",
        "failed",
    ]


def test_show_html_writes_a_file(queue: str, tmp_path: Path) -> None:
    task_id = _failed_task(queue)
    out = tmp_path / "report.html"
    result = phoned(queue, "show", task_id, "--html", str(out))
    assert result.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    assert task_id in out.read_text()


def test_show_unknown_task_is_one_line_exit_1(queue: str) -> None:
    phoned(queue, "submit", "--method", "dnd.get", "--conversation", "c")  # the queue exists
    assert_one_line_error(phoned(queue, "show", "nope"), 1, "nope")


def test_rerun_creates_a_new_task_from_a_terminal_one(queue: str) -> None:
    task_id = _failed_task(queue)
    result = phoned(queue, "rerun", task_id, "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["rerun_of"] == task_id and record["id"] != task_id
    assert record["state"] == "queued"


def test_rerun_of_a_live_task_is_refused(queue: str) -> None:
    task_id = phoned(queue, "submit", "--method", "dnd.get", "--conversation", "c").stdout.strip()
    assert_one_line_error(phoned(queue, "rerun", task_id), 1)


def test_help_is_light_and_run_has_its_options() -> None:
    heavy = {"pydantic", "yaml", "adbutils", "sqlite3", "device", "uiautomator2"}
    assert heavy_modules_after("from phoned.daemon.cli import main", heavy) == []
    help_text = CliRunner().invoke(main, ["run", "--help"]).stdout
    for option in ("--once", "--serial", "--wait", "--task", "--json", "--queue", "--config",
                   "--poll-interval", "--grace-period"):  # fmt: skip
        assert option in help_text
