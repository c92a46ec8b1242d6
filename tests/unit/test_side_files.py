"""The side files that follow from the method registry (``phoned methods --write``,
``daemon/verbs/side_files.py``): the committed ones are current, a new method module reaches
every one of them with nothing else edited, and ``--check`` names what is stale."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.documents import read_document
from phoned.daemon.verbs import side_files
from phoned.device.actions.method import Method, fixed
from phoned.device.actions.params import NoParams

REPO = Path(__file__).resolve().parents[2]

# A method module nobody lists: what a new method writes, and all it writes.
LAMP = """
from pydantic import Field
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import NoParams, Params
from phoned.device.probes import Probe

LAMP = Probe("cmd_lamp", ("cmd", "lamp", "help"), lambda text, sdk: "get" in text,
             "frameworks/base cmds/lamp/LampShellCommand.java (imagined)", "`cmd lamp` exists")

class LampSet(Params):
    on: bool = Field(description="Light on.", examples=[True])

def set_light(ctx, params): ...
def get(ctx, params): ...
def reconcile(ctx, params, hint): ...

DECLARED = (
    Method("lamp.set", LampSet, set_light, fixed("lamp.on"), reconcile=reconcile,
           approval=True, summary="Switch the lamp.", reads="the lamp", changes="the lamp",
           probes=(LAMP,),
           emulator_params={"on": False},
           actions_row=ActionsRow("`lamp get`", "`lamp set on|off`", "`lamp get` again")),
    Method("lamp.get", NoParams, get, fixed("lamp.on"), summary="Read the lamp.",
           reads="the lamp", probes=(LAMP,)),
)
"""


def _phoned(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "methods", *args],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_generated_side_files_are_current() -> None:
    stale = side_files.stale(REPO)
    assert not stale, f"stale: {', '.join(stale)}: run `phoned methods --write`"


def test_a_new_method_module_reaches_every_generated_file(tmp_path: Path) -> None:
    """Its module is all a method writes: regenerating puts it in each side file."""
    (tmp_path / "lamp.py").write_text(LAMP, encoding="utf-8")
    code = (
        "import json, sys, pathlib, phoned.device.methods as a; a.__path__.append(sys.argv[1]); "
        "from phoned.daemon.verbs.side_files import expected; "
        "print(json.dumps(expected(pathlib.Path(sys.argv[2]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(REPO)],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    files: dict[str, str] = json.loads(out.stdout)
    now = side_files.expected(REPO)
    assert set(files) == set(now) | {"examples/lamp.set.yaml", "examples/lamp.get.yaml"}
    for path in (p for p in now if not p.startswith("examples/")):
        assert "lamp.set" in files[path] and "lamp.get" in files[path], path
    assert "- `lamp.set` (pauses for `phoned approve`) / `lamp.get`\n" in files["README.md"]
    assert (
        "| lamp.get / lamp.set | lamp.py | `lamp get` | `lamp set on\\|off` | `lamp get` again |"
        in files["docs/actions.md"]
    )
    assert (
        "    'lamp.set|{\"on\": false}|4'\n    'lamp.get|{}|0'\n" in files["scripts/ci-emulator.sh"]
    )
    assert '"params.lamp.set"' in files["docs/openapi.json"]
    assert "## `lamp.get`" in files["docs/methods.md"]
    example = tmp_path / "lamp.set.yaml"
    example.write_text(files["examples/lamp.set.yaml"], encoding="utf-8")
    assert read_document(str(example)) == {
        "conversation_id": "examples", "method": "lamp.set", "params": {"on": True}
    }  # fmt: skip
    assert "Needs approval" in files["examples/lamp.set.yaml"]


def _checkout(root: Path) -> None:
    """The hand-written and generated files of the repository, copied under ``root``."""
    for path in [*side_files.expected(REPO), "examples/workflow.yaml"]:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / path, root / path)


def test_check_names_each_stale_file_and_write_repairs_only_those(tmp_path: Path) -> None:
    _checkout(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("- `dnd.set` / `dnd.get`\n", ""))
    (tmp_path / "examples" / "dnd.get.yaml").unlink()
    orphan = side_files.EXAMPLE_HEADER.format(module="lamp") + "\nmethod: lamp.get\n"
    (tmp_path / "examples" / "lamp.get.yaml").write_text(orphan)

    checked = _phoned("--check", "--root", str(tmp_path))
    assert checked.returncode == 1
    assert [line for line in checked.stderr.splitlines() if line.startswith("stale:")] == [
        "stale: README.md", "stale: examples/dnd.get.yaml", "stale: examples/lamp.get.yaml",
    ]  # fmt: skip
    assert "run `phoned methods --write`" in checked.stderr

    written = _phoned("--write", "--root", str(tmp_path))
    assert written.returncode == 0, written.stderr
    assert written.stdout.splitlines() == [
        "wrote README.md", "wrote examples/dnd.get.yaml", "removed examples/lamp.get.yaml",
    ]  # fmt: skip
    assert side_files.stale(tmp_path) == []
    for path in [*side_files.expected(REPO), "examples/workflow.yaml"]:
        assert (tmp_path / path).read_bytes() == (REPO / path).read_bytes(), path
    assert (tmp_path / "scripts" / "ci-emulator.sh").stat().st_mode & 0o111


def test_a_file_without_its_region_is_named() -> None:
    with pytest.raises(side_files.SideFileError, match=r"^README\.md: needs one generated"):
        side_files.replace_region("README.md", "# phoned\n", side_files.MD_BEGIN,
                                  side_files.MD_END, "- `dnd.set`\n")  # fmt: skip


def _declared(module: str, *methods: Method[Any]) -> list[side_files.Declared]:
    return [side_files.Declared(module, m) for m in methods]


def test_a_module_without_its_actions_row_is_named_with_what_to_add() -> None:
    lamp = Method("lamp.get", NoParams, lambda ctx, p: None, fixed("lamp.on"))
    with pytest.raises(side_files.SideFileError, match=r"device/methods/lamp\.py: give exactly"):
        side_files.actions_table(_declared("lamp", lamp))


@pytest.mark.parametrize(
    "value",
    ["priority", "com.example.notes", "android.permission.CAMERA", "+15551234567",
     "See you at 8", "true", "null", "on", "0123", "a: b", "# no", "ünï", 7, 0.5, True, None,
     ["a", 1], {"k": "v"}],
)  # fmt: skip
def test_an_example_value_reads_back_as_itself(value: Any, tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(f"params:\n  x: {side_files.yaml_scalar(value)}\n", encoding="utf-8")
    assert read_document(str(path)) == {"params": {"x": value}}


def test_emulator_cases_read_back_in_bash_as_their_json() -> None:
    """A case naming one of the script's variables, or holding a quote or a dollar, is
    still the JSON it was made from once bash has read it."""
    params = {"to": "+15555550100", "body": 'it\'s $5 `now` \\ "ok"'}
    lamp = Method("lamp.get", NoParams, lambda ctx, p: None, fixed("lamp.on"),
                  emulator_params=params)  # fmt: skip
    cases = side_files.ci_cases(_declared("lamp", lamp), {"+15555550100": "SMS_TO"})
    assert "$SMS_TO" in cases
    script = f'SMS_TO=+15555550100\n{cases}printf "%s\\n" "${{CASES[@]}}"\n'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout == f"lamp.get|{json.dumps(params)}|0\n"
