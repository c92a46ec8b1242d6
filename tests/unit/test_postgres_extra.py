"""PostgreSQL is an extra (``phoned[postgres]``): without psycopg a ``postgresql://`` queue
is a usage error naming the extra, and the SQLite path never imports psycopg.

psycopg's absence is simulated by a ``sys.meta_path`` finder that refuses it (in a child
process, so this process keeps its psycopg for other tests), or by ``sys.modules``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, run_python

from phoned.daemon.store.open import QueueUrlError, open_store

PG_URL = "postgresql://phoned@127.0.0.1:1/phoned"  # nothing is ever connected to
HINT = "pip install 'phoned[postgres]'"

# Run as `python -c BLOCKER ARGS...`: the phoned CLI with psycopg uninstallable.
BLOCKER = """
import importlib.abc, sys

class NoPsycopg(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("psycopg", "psycopg_binary", "psycopg_c"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoPsycopg())
from phoned.daemon.cli import main
main(sys.argv[1:], prog_name="phoned")
"""


def _phoned_without_psycopg(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONED_")}
    config = tmp_path / "phoned.yaml"
    config.write_text(f"state_dir: {tmp_path / 'state'}\n")
    env["PHONED_CONFIG"] = str(config)
    return run_python("-c", BLOCKER, *args, env=env)


def test_a_postgresql_queue_without_psycopg_exits_2_naming_the_extra(tmp_path: Path) -> None:
    for verb in (["tasks"], ["submit", "--method", "dnd.get", "--conversation", "c"]):
        proc = _phoned_without_psycopg(tmp_path, *verb, "--queue", PG_URL)
        assert proc.returncode == 2, (verb, proc.stderr)
        assert HINT in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_open_store_names_the_extra_when_psycopg_cannot_be_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    with pytest.raises(QueueUrlError, match=r"pip install 'phoned\[postgres\]'"):
        open_store(PG_URL)


def test_a_sqlite_queue_runs_with_psycopg_uninstallable(tmp_path: Path) -> None:
    queue = f"sqlite:///{tmp_path / 'queue.db'}"
    submitted = _phoned_without_psycopg(
        tmp_path, "submit", "--method", "dnd.get", "--conversation", "c", "--queue", queue
    )
    assert submitted.returncode == 0, submitted.stderr
    listed = _phoned_without_psycopg(tmp_path, "tasks", "--queue", queue)
    assert listed.returncode == 0, listed.stderr
    assert "dnd.get" in listed.stdout


def test_no_module_but_the_postgres_store_imports_psycopg() -> None:
    code = """
import importlib, pkgutil, sys
import phoned.daemon as daemon, phoned.device as device
POSTGRES = {"phoned.daemon.store.postgres_db", "phoned.daemon.store.postgres_migrations",
            "phoned.daemon.store.postgres_store"}
for package in (daemon, device):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name not in POSTGRES:
            importlib.import_module(info.name)
print(sorted(m for m in sys.modules if m.split(".")[0].startswith("psycopg")))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == "[]"


def test_serve_on_a_postgresql_queue_without_psycopg_exits_2_naming_the_extra(tmp_path) -> None:
    """``phoned serve`` checks for the driver before uvicorn starts (whose start-up would
    turn the missing import into a traceback and exit 3)."""
    import subprocess
    import sys

    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("tokens: []\n")
    tokens.chmod(0o600)
    blocker = (
        "import sys; sys.modules['psycopg'] = None; "
        "from phoned.daemon.cli import main; sys.argv = ['phoned', 'serve', '--queue', "
        f"'postgresql://x@127.0.0.1:1/db', '--tokens', {str(tokens)!r}]; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocker], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "phoned[postgres]" in done.stderr and "Traceback" not in done.stderr
