"""Artifacts on the server's disk: ``<state>/artifacts/<task id>/<name>``.

Names are single path components (letters, digits, ``._-``) so no upload can escape its
task's directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import HTTPException

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def artifact_path(root: Path, task_id: str, name: str) -> Path:
    """Where an artifact lives; 422 for a name or task id that is not one safe component."""
    for part in (task_id, name):
        if not _NAME.match(part) or ".." in part:
            raise HTTPException(422, f"not a safe artifact path component: {part!r}")
    return root / task_id / name


def artifact_ref(task_id: str, name: str) -> str:
    """The reference evidence keeps for an uploaded artifact (its URL path)."""
    return f"/v1/tasks/{task_id}/artifacts/{name}"
