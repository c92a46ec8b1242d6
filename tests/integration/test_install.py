"""``scripts/install.sh`` into staging roots: dry run, real install, idempotence, uninstall.

The script and the sources are copied first (other work may be editing the checkout; the
installer digests the sources to decide whether the venv is current). The real install
builds a venv and pip-installs phoned into it (about 30 s with a warm pip cache), once per
module; the tests after it run in file order on that one staged root.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
COPIED = (
    "pyproject.toml",
    "README.md",
    "daemon",
    "device",
    "sim",
    "android_data",
    "foundation",
    "config",
    "docs",
    "systemd",
    "scripts",
)
UNIT = "etc/systemd/system/phoned.service"
RULE = "etc/udev/rules.d/51-phoned-android.rules"
CONFIG = "etc/phoned/phoned.yaml"
VENV = "opt/phoned/venv"


@dataclass
class Staged:
    """A source copy and the staging root it was installed into."""

    src: Path
    root: Path
    first_output: str

    def install(self, *args: str, root: Path | None = None) -> subprocess.CompletedProcess[str]:
        return run_install(self.src, "--root", str(root or self.root), *args)


def run_install(src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(src / "scripts" / "install.sh"), *args],
        capture_output=True,
        text=True,
        timeout=540,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )


@pytest.fixture(scope="module")
def src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen copy of the parts of the checkout the installer reads."""
    dest = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in COPIED:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, dest / name, ignore=ignore)
        else:
            shutil.copy2(path, dest / name)
    return dest


@pytest.fixture(scope="module")
def staged(src: Path, tmp_path_factory: pytest.TempPathFactory) -> Staged:
    root = tmp_path_factory.mktemp("root")
    proc = run_install(src, "--root", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return Staged(src, root, proc.stdout)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def mtimes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_dry_run_lists_every_action_and_changes_nothing(src: Path, tmp_path: Path) -> None:
    proc = run_install(src, "--dry-run", "--root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    out = proc.stdout
    for path in (VENV, "opt/phoned/README.md", UNIT, RULE, CONFIG):
        assert "would: " in out and str(tmp_path / path) in out, path
    assert "skip: user phoned and group plugdev are not created under --root" in out
    assert "nothing was changed" in out


def test_dry_run_shows_the_prefix_written_into_exec_start(src: Path, tmp_path: Path) -> None:
    proc = run_install(src, "--dry-run", "--root", str(tmp_path), "--prefix", "/srv/phoned")
    assert proc.returncode == 0, proc.stderr
    assert "with ExecStart=/srv/phoned/venv/bin/phoned run" in proc.stdout
    assert str(tmp_path / "srv/phoned/venv") in proc.stdout


def test_bad_arguments_exit_2(src: Path) -> None:
    for args in (["--bogus"], ["--prefix", "relative/dir"], ["--root"]):
        proc = run_install(src, "--dry-run", *args)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith("install.sh: ")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root+setpriv")
def test_refuses_a_real_install_without_root(src: Path) -> None:
    script = (src / "scripts" / "install.sh").read_text()
    proc = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-s"],
        input=script,
        capture_output=True,
        text=True,
        cwd="/",
        timeout=30,
    )
    assert proc.returncode == 1
    assert "must run as root" in proc.stderr


def test_install_places_files_with_their_modes(staged: Staged) -> None:
    root = staged.root
    for path in (UNIT, RULE, CONFIG, "opt/phoned/README.md", "opt/phoned/docs/deploy.md"):
        assert mode(root / path) == 0o644, path
    # the documented defaults, with this host's one queue and state folder named (#23)
    written = (root / CONFIG).read_text().splitlines()
    source = (staged.src / "config/phoned.yaml").read_text().splitlines()
    changed = [(a, b) for a, b in zip(source, written, strict=True) if a != b]
    assert [a for a, _ in changed] == ['queue: ""', 'state_dir: ""']
    assert changed[0][1].startswith('queue: "sqlite:////var/lib/phoned/queue.db"')
    assert changed[1][1].startswith('state_dir: "/var/lib/phoned"')
    assert mode(root / "var/lib/phoned") == 0o2770  # the group phoned's shared state folder
    assert (root / RULE).read_text() == (staged.src / "systemd/51-android.rules").read_text()
    unit = (root / UNIT).read_text()
    assert "ExecStart=/opt/phoned/venv/bin/phoned run\n" in unit  # final path, not the stage
    assert "done: 7 change(s)" in staged.first_output


def test_installed_console_script_runs(staged: Staged) -> None:
    phoned = staged.root / VENV / "bin" / "phoned"
    assert mode(phoned) & 0o111
    proc = subprocess.run([str(phoned), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "phoned, version" in proc.stdout
    # non-editable: the package lives in the venv, not in the source copy
    found = list((staged.root / VENV).glob("lib/python3*/site-packages/phoned/daemon/cli.py"))
    assert len(found) == 1


def test_second_run_changes_nothing(staged: Staged) -> None:
    before = mtimes(staged.root)
    proc = staged.install()
    assert proc.returncode == 0, proc.stderr
    assert "nothing to do: phoned is already installed and up to date" in proc.stdout
    assert "+ " not in proc.stdout
    assert mtimes(staged.root) == before


def test_dry_run_after_install_has_nothing_to_do(staged: Staged) -> None:
    proc = staged.install("--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "would:" not in proc.stdout
    assert "nothing to do" in proc.stdout


def test_a_changed_unit_is_reinstalled_and_the_config_is_kept(staged: Staged) -> None:
    (staged.root / UNIT).write_text("[Service]\nExecStart=/bin/false\n")
    (staged.root / CONFIG).write_text("poll_interval: 2.0\n")
    proc = staged.install()
    assert proc.returncode == 0, proc.stderr
    assert f"+ install {staged.root / UNIT}" in proc.stdout
    assert "done: 1 change(s)" in proc.stdout
    assert (staged.root / UNIT).read_text().startswith("# phoned")
    assert (staged.root / CONFIG).read_text() == "poll_interval: 2.0\n"
    assert "never overwritten" in proc.stdout


def test_uninstall_removes_what_it_installed(staged: Staged) -> None:
    proc = staged.install("--uninstall")
    assert proc.returncode == 0, proc.stderr
    root = staged.root
    for path in (UNIT, RULE, "opt/phoned"):
        assert not (root / path).exists(), path
    assert (root / CONFIG).exists()  # the config stays
    assert "kept:" in proc.stdout
    again = staged.install("--uninstall")
    assert again.returncode == 0, again.stderr
    assert "nothing to do: phoned is already removed" in again.stdout
