"""The lifecycle rules moved to ``phoned.daemon.lifecycle.rules``; this name is kept for old imports."""

from __future__ import annotations

from phoned.daemon.lifecycle.rules import (
    USER_HOLD,
    Row,
    add_refs,
    bump,
    check_admission,
    check_conversation,
    check_lease,
    check_not_terminal,
    checkpoint,
    fail,
    move,
    require,
    stop,
)

__all__ = [
    "USER_HOLD",
    "Row",
    "add_refs",
    "bump",
    "check_admission",
    "check_conversation",
    "check_lease",
    "check_not_terminal",
    "checkpoint",
    "fail",
    "move",
    "require",
    "stop",
]
