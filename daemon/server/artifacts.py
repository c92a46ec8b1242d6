"""Artifacts on the server's disk: ``<state>/artifacts/<task id>/<name>``.

Names are single path components (letters, digits, ``._-``) so no upload can escape its
task's directory, and the task's folder and the file are created from the artifacts root
without following a link (``phoned.foundation.private_files``: a planted one is refused, 500, and
logged). Uploads are streamed to a temporary file and counted against the cap as they
arrive (never held in memory whole); over the cap the temporary file is removed and the
upload is 413. Downloads are served as ``application/octet-stream`` with
``X-Content-Type-Options: nosniff``, except PNG, JPEG, GIF and WebP images, whose type is
set from their leading bytes (never guessed from the name).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from fastapi import HTTPException, Request
from fastapi.responses import FileResponse
from phoned.foundation.private_files import UnsafePath, private_dir, private_writer

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
OCTET_STREAM = "application/octet-stream"
log = logging.getLogger("phoned.server")
NOSNIFF = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def artifact_path(root: Path, task_id: str, name: str) -> Path:
    """Where an artifact lives; 422 for a name or task id that is not one safe component."""
    for part in (task_id, name):
        if not _NAME.match(part) or ".." in part:
            raise HTTPException(422, f"not a safe artifact path component: {part!r}")
    return root / task_id / name


def artifact_ref(task_id: str, name: str) -> str:
    """The reference evidence keeps for an uploaded artifact (its URL path)."""
    return f"/v1/tasks/{task_id}/artifacts/{name}"


async def receive_artifact(request: Request, path: Path, cap: int) -> int:
    """Stream the request body to ``path`` (through ``<path>.part``); its size in bytes.

    413 as soon as more than ``cap`` bytes arrived; the part file is then removed and the
    rest of the body is never read.
    """

    root = path.parent.parent  # the artifacts root: <root>/<task id>/<name>
    size = 0
    try:
        private_dir(path.parent, root=root)  # 0700: screenshots and hierarchies show messages
        with private_writer(path, root=root) as out:  # 0600, renamed over path once whole
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise HTTPException(
                        413, f"artifact larger than {cap} bytes", {"Connection": "close"}
                    )
                out.write(chunk)
    except UnsafePath as exc:  # a planted link or a foreign folder: nothing written there
        log.error("artifact upload refused: %s", exc)
        raise HTTPException(500, "the plane cannot keep this artifact (see its log)") from exc
    return size


_IMAGE_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),  # RIFF....WEBP
)


def artifact_type(path: Path) -> str:
    """``image/png|jpeg|gif|webp`` when the file starts like one, else octet-stream."""
    with path.open("rb") as f:
        head = f.read(16)
    for magic, offset, media_type in _IMAGE_MAGIC:
        if head[offset : offset + len(magic)] == magic and (offset == 0 or head[:4] == b"RIFF"):
            return media_type
    return OCTET_STREAM


def artifact_response(path: Path) -> FileResponse:
    """The artifact file with a fixed content type and ``nosniff`` (no name-based guess)."""
    return FileResponse(path, media_type=artifact_type(path), headers=NOSNIFF)
