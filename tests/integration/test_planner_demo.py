"""scripts/planner_demo.py end to end: a planner drives a whole workflow through ``phoned
serve`` with two daemons and two simulated phones, and the monitor page shows it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def test_planner_demo_completes_both_workflows_and_the_monitor_shows_them(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("CI needs Chromium (scripts/ensure-chromium.sh)")
        pytest.skip("no /usr/bin/chromium: run scripts/ensure-chromium.sh")
    shot = tmp_path / "monitor.png"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "planner_demo.py"), "--monitor-shot", str(shot)],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert out.count(": completed\n") == 2  # "workflow ID on SERIAL: completed", one per phone
    for step in ("s1-dnd.set", "s2-bluetooth.set", "s3-volume.set", "s4-sms.draft"):
        done_lines = re.findall(rf"^  {re.escape(step)} +completed +observed=\S+", out, re.M)
        assert len(done_lines) == 2, step
    assert "2 workflow(s) shown completed" in out
    with Image.open(shot) as image:
        assert image.format == "PNG" and image.width >= 800
