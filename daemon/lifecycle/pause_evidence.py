"""The evidence a pause keeps and the checks made against it (SPEC §7), by kind.

A paused attempt keeps a ``pause_snapshot`` of the phone; the resumed attempt compares a
fresh one with it (``resume_check``); while an approval is pending, a worker compares the
phone with it after each task (``approval_check``). The runtime writes these documents
(``phoned.daemon.runtime.staleness``, ``phoned.daemon.runtime.approval_watch``); the approval card reads
them (``phoned.daemon.rendering.approval_view``). Both take the kinds and the rule of which check
is current from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from phoned.daemon.lifecycle.records import TaskRecord

PAUSE_KIND = "pause_snapshot"
RESUME_KIND = "resume_check"
CHECK_KIND = "approval_check"


def latest_check(evidence: Sequence[dict[str, Any]], task: TaskRecord) -> dict[str, Any] | None:
    """The last ``approval_check`` of ``task``'s attempt since its latest pause snapshot (the
    preview now pending was taken with that snapshot); None when none was made since."""
    found: dict[str, Any] | None = None
    for doc in evidence:
        if doc.get("attempt") != task.attempt:
            continue
        if doc.get("kind") == PAUSE_KIND:
            found = None
        elif doc.get("kind") == CHECK_KIND:
            found = doc
    return found
