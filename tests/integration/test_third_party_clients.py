"""A third-party client on the simulated phone: mobile-mcp's device CLI, ``mobilecli``.

``scripts/ensure-mobilecli.sh`` (run by ``scripts/test.sh``) installs the npm package
``@mobilenext/mobilecli``, whose native binaries ship inside it. The test runs the real
binary against ``phoned sim`` through a private real adb server: every call it makes reaches
the simulated phone as on a phone (``uiautomator dump /dev/tty`` for ``dump ui``,
``cmd package query-activities`` for ``apps list``). Without the package it skips, except
under CI, where a missing client is a failure.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def _mobilecli() -> Path | None:
    configured = os.environ.get("PHONED_MOBILECLI")
    if configured:
        return Path(configured)
    arch = ARCH.get(platform.machine().lower())
    system = platform.system().lower()
    name = f"mobilecli-{system}-{arch}"
    found = ROOT / ".cache/mobilecli/node_modules/@mobilenext/mobilecli/bin" / name
    return found if found.exists() else None


@pytest.fixture
def mobilecli(adb_server: Any, tmp_path: Path) -> Any:
    binary = _mobilecli()
    if binary is None:
        reason = "mobilecli not installed (scripts/ensure-mobilecli.sh needs npm)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "adb").symlink_to(adb_server.path)  # mobilecli runs `adb` from PATH
    env = dict(adb_server.env, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("ANDROID_HOME", None)

    def run(*args: str) -> Any:
        done = subprocess.run(
            [str(binary), *args], env=env, capture_output=True, text=True, timeout=90
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        answer = json.loads(done.stdout)
        assert answer["status"] == "ok", answer
        return answer["data"]

    return run


def test_mobilecli_drives_the_simulated_phone(
    mobilecli: Any, sim_factory: Any, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    serial = sim.serial
    devices = mobilecli("devices")["devices"]
    assert [d["id"] for d in devices if d["platform"] == "android"] == [serial]
    info = mobilecli("device", "info", "--device", serial)["device"]
    assert info["screenSize"]["width"] == sim.phone.ui.size[0] and info["version"] == "14"
    launcher = mobilecli("apps", "foreground", "--device", serial)["packageName"]
    assert launcher == "com.google.android.apps.nexuslauncher"
    mobilecli("apps", "launch", "--device", serial, "com.android.settings")
    assert (
        mobilecli("apps", "foreground", "--device", serial)["packageName"] == "com.android.settings"
    )
    shot = tmp_path / "shot.png"
    mobilecli("screenshot", "--device", serial, "--output", str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    elements = mobilecli("dump", "ui", "--device", serial)["elements"]
    assert any(e.get("text") == "Settings" for e in elements)
    assert ("uiautomator", "dump", "/dev/tty") in sim.phone.log.argvs()
    listed = {app["packageName"] for app in mobilecli("apps", "list", "--device", serial)}
    assert {"com.example.notes", "com.android.settings"} <= listed
