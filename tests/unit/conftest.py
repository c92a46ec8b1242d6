"""Fixtures the unit tests share.

``queue`` (function): the URL of a fresh SQLite queue file, ``tmp_path/queue.db``, not yet
created (the CLI verbs under test make its schema on first use).
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def queue(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'queue.db'}"
