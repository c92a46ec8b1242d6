"""The tree's own layout rules that lint-imports cannot see (scripts/ and bench/ are no
installed packages): bench/ builds on scripts/, never the other way round, and one
``free_port`` serves scripts, bench and tests (issue #32)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import grimp

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency below 3.11
    import tomli as tomllib

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


# ---- one import namespace, phoned (issue #32) -------------------------------------------

TOPS = ("daemon", "device", "sim", "android_data", "foundation")


def _folder_packages() -> list[str]:
    """Every folder below the top-level ones, as a ``phoned.*`` package: data-only folders
    (``daemon/store/sql``, ``daemon/server/static``) too, whose files are package data."""
    return sorted(
        "phoned." + ".".join(folder.relative_to(REPO).parts)
        for top in TOPS
        for folder in [REPO / top, *(REPO / top).rglob("*")]
        if folder.is_dir() and folder.name != "__pycache__"
    )


def test_the_build_maps_every_folder_package_into_phoned() -> None:
    """pyproject.toml lists each package of the top-level folders as ``phoned.*`` and maps
    each folder with ``package-dir``: a package added to a folder and not to the list would
    be missing from the wheel."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    assert sorted(setuptools["packages"]) == _folder_packages()
    assert setuptools["package-dir"] == {f"phoned.{top}": top for top in TOPS}
    assert config["project"]["scripts"]["phoned"] == "phoned.daemon.cli:main"


def test_no_code_imports_a_folder_by_its_bare_name() -> None:
    """``daemon`` and ``device`` are other distributions' names (python-daemon): everything
    imports them as ``phoned.daemon`` / ``phoned.device``; a bare import would also load a
    second copy of a module from the checkout."""
    bare = {
        str(path.relative_to(REPO)): sorted(m for m in _imports(path) if m.split(".")[0] in TOPS)
        for path in _python_files(*TOPS, "scripts", "bench", "tests")
    }
    assert {k: v for k, v in bare.items() if v} == {}


def test_the_wheel_names_phoned_alone(tmp_path: Path) -> None:
    """The wheel's ``top_level.txt`` is ``phoned``, and its files sit under ``phoned/``
    (built from a copy of the checkout, as ``scripts/install.sh`` builds)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    for top in TOPS:
        shutil.copytree(REPO / top, source / top, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("phoned-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert archive.read(top_level).decode().split() == ["phoned"]
    assert {n.split("/")[0] for n in names if ".dist-info/" not in n} == {"phoned"}
    assert "phoned/daemon/cli.py" in names and "phoned/sim/variants/samsung.py" in names
    # package data: the SQL the stores run, the monitor page, the generated word tables
    assert "phoned/daemon/store/sql/schema.sql" in names
    assert "phoned/daemon/store/sql/postgres/0001_initial.sql" in names
    assert "phoned/daemon/server/static/monitor.html" in names
    assert "phoned/android_data/messaging_words.json" in names


_IMPORT_EACH_FIRST = """
import importlib, sys, traceback
failed = {}
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "phoned" or m.startswith("phoned.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed[name] = traceback.format_exc(limit=-3)
for name, error in failed.items():
    print(name, error, sep="\\n")
sys.exit(1 if failed else 0)
"""


def test_every_module_imports_when_it_is_the_first_one_loaded() -> None:
    """Each module of phoned imports on its own, before anything else of phoned: an import
    cycle that only the first importer's order hides (a benchmark importing
    ``phoned.device.actions.snapshot`` first) fails here, not in the benchmark."""
    modules = sorted(
        "phoned." + ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for path in _python_files(*TOPS)
    )
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH_FIRST, *modules],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_two_modules_import_each_other() -> None:
    """No import cycle anywhere in phoned, function-local imports included (grimp reads every
    import statement, as lint-imports does): the issue #32 pair ``phoned.device.actions`` and
    its registry is gone, and no new pair comes back."""
    graph = grimp.build_graph(*(f"phoned.{top}" for top in TOPS), cache_dir=None)
    cycles = sorted(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    )
    assert cycles == []


def _unexplained_local_imports(path: Path) -> list[int]:
    """The lines of ``path``'s function-local imports that give no ``# lazy:`` reason: on
    the import itself, or on the comment line heading the run of imports it stands in."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for fn in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            own = lines[node.lineno - 1 : node.end_lineno]
            above = node.lineno - 2  # up through the imports before it, to their heading
            while above >= 0 and lines[above].strip().startswith(("from ", "import ", ")")):
                above -= 1
            heading = lines[above].strip() if above >= 0 else ""
            if not any("# lazy:" in line for line in own) and "# lazy:" not in heading:
                found.append(node.lineno)
    return found


def test_every_function_local_import_says_why() -> None:
    """Imports sit at the top of a module; one inside a function says why (a measured
    start-up cost, an optional dependency, a heavy library used by one path) with a
    ``# lazy:`` comment (issue #32)."""
    unexplained = {
        str(path.relative_to(REPO)): lines
        for path in _python_files(*TOPS, "scripts", "bench")
        if (lines := _unexplained_local_imports(path))
    }
    assert unexplained == {}
