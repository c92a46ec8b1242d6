"""The tree's own layout rules that lint-imports cannot see (scripts/ and bench/ are no
installed packages): bench/ builds on scripts/, never the other way round, and one
``free_port`` serves scripts, bench and tests (issue #32)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _python_files(*folders: str) -> list[Path]:
    return [p for folder in folders for p in sorted((REPO / folder).rglob("*.py"))]


def test_scripts_never_import_bench() -> None:
    offenders = {
        str(path.relative_to(REPO)): sorted(m for m in _imports(path) if m.split(".")[0] == "bench")
        for path in _python_files("scripts")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_free_port_is_written_once() -> None:
    defined = [
        str(path.relative_to(REPO))
        for path in _python_files("daemon", "device", "sim", "scripts", "bench", "tests")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name == "free_port"
    ]
    assert defined == ["scripts/stack.py"]
