"""Errors say what would work: the nearest method or field name, one ``--param`` per key,
a boolean's two words, the line and column of a syntax error. At the CLI (CliRunner, real
SQLite queue file) and at ingress (``parse_ingress``, which the control plane shares)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from phoned.daemon.cli import main
from phoned.daemon.lifecycle.errors import InvalidTask
from phoned.daemon.lifecycle.ingress import parse_ingress
from phoned.device.actions import registry


@pytest.fixture
def queue(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'queue.db'}"


def phoned(queue: str, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, [*args, "--queue", queue], input=stdin)


def refused(result: Result, code: int = 2) -> str:
    """The one error line of ``result``, after checking its exit code."""
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("phoned: "), result.stderr
    return lines[0]


def submitted(queue: str, method: str, *pairs: str) -> Result:
    args = [a for pair in pairs for a in ("--param", pair)]
    return phoned(queue, "submit", "--method", method, *args, "--conversation", "c", "--json")


def ingress_errors(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(InvalidTask) as caught:
        parse_ingress(raw)
    return {e["field"]: e["message"] for e in caught.value.errors}


def test_an_unknown_method_names_the_nearest_one(queue: str) -> None:
    line = refused(submitted(queue, "dnd.sett", "mode=priority"))
    first = min(registry.REGISTRY)  # the list is the registry's methods, sorted
    assert f"method: unknown method (did you mean dnd.set?); one of {first}" in line
    far = refused(submitted(queue, "zzz"))
    assert "did you mean" not in far and "unknown method; one of" in far


@pytest.mark.parametrize("key", ["params", "param"])
def test_params_nested_in_one_param_are_refused_with_the_form_that_works(
    queue: str, key: str
) -> None:
    line = refused(submitted(queue, "dnd.set", f"{key}=mode=priority"))
    assert f"--param '{key}=mode=priority': give each parameter as its own --param" in line
    assert "(--param mode=priority) (dnd.set takes mode)" in line


def test_a_param_without_a_value_names_the_keys_the_method_takes(queue: str) -> None:
    line = refused(submitted(queue, "volume.set", "music"))
    assert "expected KEY=VALUE (volume.set takes stream, level, percent)" in line


@pytest.mark.parametrize(
    ("word", "value"),
    [("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False)],
)
def test_a_boolean_param_takes_true_or_false_as_yaml_does(
    queue: str, word: str, value: bool
) -> None:
    result = submitted(queue, "bluetooth.set", f"enabled={word}")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["params"] == {"enabled": value}


@pytest.mark.parametrize("word", ["yes", "on", "1", "tRUE", ""])
def test_another_boolean_word_is_refused_naming_the_two_that_work(queue: str, word: str) -> None:
    line = refused(submitted(queue, "wifi.set", f"enabled={word}"))
    assert (
        line
        == "phoned: invalid task: params.enabled: Input should be a valid boolean: true or false"
    )


def test_a_file_with_conversation_is_told_conversation_id(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("method: dnd.set\nparams: {mode: priority}\nconversation: c\n")
    line = refused(phoned(queue, "submit", str(path)))
    assert "conversation: Extra inputs are not permitted (did you mean conversation_id?)" in line
    path.write_text("method: dnd.set\nparams: {mod: priority}\nconversation_id: c\n")
    line = refused(phoned(queue, "submit", str(path)))
    assert "params.mod: Extra inputs are not permitted (did you mean mode?)" in line


def test_conversation_on_the_command_line_says_where_it_goes(queue: str, tmp_path: Path) -> None:
    line = refused(phoned(queue, "submit", "--method", "dnd.get"))
    assert line == (
        "phoned: invalid task: conversation_id: Field required: give --conversation C, "
        "the conversation that owns the task"
    )
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"method": "dnd.get", "conversation_id": "c"}))
    line = refused(phoned(queue, "submit", str(path), "--conversation", "c"))
    assert "put them in FILE (as params and conversation_id)" in line


def test_a_yaml_error_names_its_line_and_column(queue: str, tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("method: dnd.set\nparams:\n  mode: priority\n conversation_id: c\n")
    line = refused(phoned(queue, "submit", str(path)))
    assert f"{path} is neither JSON nor YAML: line 4, column 2: expected <block end>" in line
    assert line.endswith("(as YAML)")


def test_a_json_error_names_its_line_and_column(queue: str) -> None:
    line = refused(phoned(queue, "submit", "-", stdin='{"method": "dnd.get"\n "x": 1}'))
    assert "stdin is neither JSON nor YAML: line 2, column 2: Expecting ',' delimiter" in line
    assert line.endswith("(as JSON)")


def test_ingress_hints_reach_every_caller() -> None:
    found = ingress_errors(
        {"method": "bluetooth.set", "params": {"enabled": "yes"}, "conversation_id": "c"}
    )
    assert found == {"params.enabled": "Input should be a valid boolean: true or false"}
    found = ingress_errors({"method": "dnd.set", "params": {"mode": "off"},
                            "conversation_id": "c", "timeouts": {"run": 5}, "devices": "x"})  # fmt: skip
    assert found == {
        "timeouts.run": "Extra inputs are not permitted (did you mean run_s?)",
        "devices": "Extra inputs are not permitted (did you mean device?)",
    }
    seed = {"method": "submitWorkflow", "conversation_id": "c", "subTasks": [
        {"taskMethod": "volume.set", "stream": "music", "levl": 3},
        {"taskMethod": "dnd.sett", "mode": "off"},
    ]}  # fmt: skip
    found = ingress_errors(seed)
    assert found["subTasks.0.levl"] == "Extra inputs are not permitted (did you mean level?)"
    assert found["subTasks.1.taskMethod"].startswith("unknown method (did you mean dnd.set?)")
    assert ingress_errors({"method": "dnd.get", "conversation_id": "c", "priority": 1}) == {
        "priority": "Extra inputs are not permitted"  # nothing near: no guess
    }
