"""Issue #27 items 3 and 4 from the outside: ``notifications_list`` and ``screen_snapshot``
through a spawned ``phoned mcp`` (stdio, the MCP SDK's own client) against a real ``phoned
run`` daemon and a simulated phone; ``phoned run --once`` for notifications.list."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from phoned.sim.android.notification import NotificationService
from phoned_process import REPO, Daemon
from PIL import Image

pytestmark = pytest.mark.integration

POSTS = [
    ("org.telegram.messenger", "Анна", "Привет 👋 как дела?"),
    ("com.kakao.talk", "김민준", "안녕하세요 🙂"),
]


def _post(sim: Any) -> None:
    model = sim.phone.service(NotificationService)
    for i, (package, title, text) in enumerate(POSTS):
        model.post(package, title, text, post_time_ms=1_790_000_000_000 + i * 60_000)


def _calls(daemon: Daemon, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any]]:
    async def main() -> tuple[Any, list[Any]]:
        async with AsyncExitStack() as stack:
            session = await daemon.mcp_session(stack, "conv-screen", 30)
            tools = {t.name: t for t in (await session.list_tools()).tools}
            return tools, [await session.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


def _images(result: Any) -> list[types.ImageContent]:
    return [c for c in result.content if isinstance(c, types.ImageContent)]


def _texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_notifications_list_tool_reads_non_english_posts(daemon: Daemon, sim_factory) -> None:
    sim = sim_factory(sdk=33)
    _post(sim)
    daemon.start()
    tools, (every, kakao) = _calls(
        daemon, [("notifications_list", {}), ("notifications_list", {"package": "com.kakao.talk"})]
    )
    tool = tools["notifications_list"]
    assert tool.annotations.read_only_hint is True
    assert {"package", "limit", "device"} <= set(tool.input_schema["properties"])
    assert "image_max_bytes" not in tool.input_schema["properties"]
    assert not every.is_error, every.content
    listed = every.structured_content["value"]["notifications"]
    assert [(n["package"], n["title"], n["content_text"]) for n in listed] == [
        (p, t, x) for p, t, x in reversed(POSTS)
    ]
    assert listed[0]["posted_at"] == "2026-09-21T14:14:20.000+00:00"
    [only] = kakao.structured_content["value"]["notifications"]
    assert only["title"] == "김민준"
    # the evidence summary the model gets holds counts, never a title
    assert "김민준" not in json.dumps(kakao.structured_content["evidence"], ensure_ascii=False)


def test_screen_snapshot_returns_a_bounded_image_and_the_elements(
    daemon: Daemon, sim_factory
) -> None:
    sim_factory(sdk=34)
    daemon.start()
    tools, (small, default, tiny, bad) = _calls(
        daemon,
        [
            ("screen_snapshot", {"image_max_bytes": 60_000, "image_max_side": 600}),
            ("screen_snapshot", {}),
            ("screen_snapshot", {"image_max_bytes": 2_000, "image_max_side": 64}),
            ("screen_snapshot", {"image_max_side": 10}),
        ],
    )
    schema = tools["screen_snapshot"].input_schema["properties"]
    assert schema["image_max_bytes"]["default"] == 200_000
    for result, limit, side in ((small, 60_000, 600), (default, 200_000, 1000)):
        assert not result.is_error, result.content
        [image] = _images(result)
        assert len(image.data) <= limit
        with Image.open(io.BytesIO(base64.b64decode(image.data))) as decoded:
            assert max(decoded.size) <= side
            assert decoded.format == {"image/png": "PNG", "image/jpeg": "JPEG"}[image.mime_type]
        text = _texts(result)
        assert "visible elements" in text and "bounds" in text
        # the full-size artifact stays in the task's folder
        [evidence] = result.structured_content["evidence"]
        with Image.open(evidence["artifacts"]["snapshot_screenshot"]) as full:
            assert max(full.size) > side
    # a limit too small for a legible image: left out with a note, never over the limit
    assert all(len(i.data) <= 2_000 for i in _images(tiny))
    assert _images(tiny) or "left out" in _texts(tiny)
    assert bad.is_error and "image_max_side" in _texts(bad)


def _run_once(daemon_env: dict[str, str], path: Path, *args: str, timeout: float) -> Any:
    """``phoned run --once --json ARGS --task PATH``, exit 0: the JSON report and its text."""
    argv = [sys.executable, "-m", "phoned.daemon.cli", "run", "--once", "--json", *args]
    done = subprocess.run(
        [*argv, "--task", str(path)], env=daemon_env, cwd=REPO, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout), done.stdout


def test_run_once_lists_notifications(daemon_env, sim_factory, tmp_path: Path) -> None:
    sim = sim_factory(sdk=28)
    _post(sim)
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"conversation_id": "conv-n", "method": "notifications.list",
                                "params": {"package": "org.telegram.messenger"}}))  # fmt: skip
    report, stdout = _run_once(daemon_env, path, "--serial", sim.serial, timeout=60)
    assert report["task"]["state"] == "completed"
    assert "Привет 👋 как дела?" in stdout
    # the text report shows the owner what the read answered, not only that it was met
    shown = subprocess.run(
        [sys.executable, "-m", "phoned.daemon.cli", "show", report["task"]["id"]], env=daemon_env,
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    (value,) = [line for line in shown.stdout.splitlines() if line.startswith("    value: ")]
    assert "Привет 👋 как дела?" in value and '"package": "org.telegram.messenger"' in value


def test_run_once_with_its_own_simulated_phone(daemon_env, tmp_path: Path) -> None:
    """``phoned run --once --sim``: a fresh phone shows no notifications, met with an empty
    list (no notification list in its dump at all)."""
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"conversation_id": "conv-n", "method": "notifications.list"}))
    report, _ = _run_once(daemon_env, path, "--sim=35", timeout=90)
    assert report["task"]["state"] == "completed"
    [outcome] = [e for e in report["evidence"] if e["kind"] == "outcome"]
    assert outcome["value"] == {"notifications": [], "total": 0}
