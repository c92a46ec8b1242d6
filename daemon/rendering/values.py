"""Single values as every report writes them: a time, an argv."""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from typing import Any


def iso(ts: float | None) -> str | None:
    """POSIX seconds as UTC ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (None stays None)."""
    if ts is None:
        return None
    whole = int(ts)
    millis = round((ts - whole) * 1000)
    if millis == 1000:
        whole, millis = whole + 1, 0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


def argv_text(argv: Sequence[Any]) -> str:
    """An argv as a shell would show it (each element quoted when needed)."""
    return shlex.join(str(a) for a in argv)
