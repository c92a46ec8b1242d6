"""Stub: the shell interpreter (owner: shell work). Interface the transport relies on:

    Shell(phone).run(line, stdout, stderr, *, stdin=b"", cancelled=None) -> exit code
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from device.sim.phone import Phone
    from device.sim.registry import OutputSink


class Shell:
    def __init__(self, phone: Phone) -> None:
        self.phone = phone

    def run(
        self,
        line: str,
        stdout: OutputSink,
        stderr: OutputSink,
        *,
        stdin: bytes = b"",
        cancelled: threading.Event | None = None,
    ) -> int:
        raise NotImplementedError
