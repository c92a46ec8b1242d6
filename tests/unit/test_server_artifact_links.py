"""Issue #24 point 3 on the control plane: an upload never follows a link planted under
``<state>/serve/artifacts`` (a task's folder, or the artifact's name): it is refused (500,
logged) and the place the link points to is neither chmod-ed nor written. In-process app
over a real SQLite queue, as ``test_server_limits.py``."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from planes import SERIAL, AppPlane, Grant, app_plane, plane_settings, running, write_tokens

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[AppPlane]:
    grants = {"daemon": Grant("daemon", (SERIAL,)), "planner": Grant("planner")}
    tokens = write_tokens(tmp_path / "tokens.yaml", grants)
    with app_plane(plane_settings(tmp_path), tokens) as made:
        yield made


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside"
    target.mkdir()
    target.chmod(0o755)
    return target


def test_an_upload_into_a_linked_task_folder_or_name_is_refused_untouched(
    plane: AppPlane, outside: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    task = running(plane)
    root = tmp_path / "serve" / "artifacts"
    (root / task["id"]).symlink_to(outside)
    path = f"/v1/tasks/{task['id']}/artifacts/snapshot_screenshot.png"
    refused = plane.call("daemon", "PUT", path, content=PNG)
    assert refused.status_code == 500, refused.text
    assert list(outside.iterdir()) == [] and stat.S_IMODE(outside.stat().st_mode) == 0o755
    assert f"refusing {root / task['id']}: it is a symlink" in caplog.text

    (root / task["id"]).unlink()
    (root / task["id"]).mkdir(mode=0o700)
    (root / task["id"] / "snapshot_screenshot.png").symlink_to(outside / "shot.png")
    refused = plane.call("daemon", "PUT", path, content=PNG)
    assert refused.status_code == 500, refused.text
    assert list(outside.iterdir()) == []
    assert [p.name for p in (root / task["id"]).iterdir()] == ["snapshot_screenshot.png"]
    assert (root / task["id"] / "snapshot_screenshot.png").is_symlink()
