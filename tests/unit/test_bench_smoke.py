"""``bench/run.py --short --only shell`` end to end: the one documented command works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_short_shell_section_prints_the_table_and_writes_results(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--short", "--only", "shell",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("| shell round trip |")]
    assert [line.split(" | ")[1] for line in table] == [
        "raw socket shell,v2 (floor)", "phoned Device.run", "adb shell (CLI)",
        "stock adbutils shell2()",
    ]  # fmt: skip
    results = json.loads((tmp_path / "results.json").read_text())
    shell = results["sections"]["shell"]
    assert shell["status"] == "ok" and list(results["sections"]) == ["shell"]
    assert all(len(s) == 30 and min(s) > 0 for s in shell["samples"].values())
    assert shell["data"]["series"]["phoned Device.run"]["n"] == 30
