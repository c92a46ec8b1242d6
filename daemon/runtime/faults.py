"""Crash points: kill the daemon with SIGKILL at a named point of an attempt (fault tests).

``PHONED_CRASH_AT=NAME`` (or ``NAME:N``, the Nth time the point is reached) makes
``fault_point(NAME)`` kill this very process with SIGKILL, with no cleanup, no report and no
flush: what a power cut or the OOM killer does. The variable is read once, at import; when
it is unset every hook is a no-op that costs one comparison (``PreReadRecorder`` is then
plain ``Recorder``).

=======================  ==========================================================
point                    reached
=======================  ==========================================================
``after_claim``          the worker holds the lease (``dispatched``), nothing started
``after_pre_read``       the attempt's first device read returned (``Recorder.read``)
``after_journal_before`` the store admitted and journaled the effect, before it runs
``after_apply``          the effect's command returned, before ``journal_after``
``after_verify``         the action returned its outcome, before evidence is kept
``before_report``        evidence kept, before the transition is reported
``while_paused``         a pause (waiting/approval/permission) was reported
=======================  ==========================================================

``docs/faults.md`` lists where each point sits and what the fault matrix asserts.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from phoned.device.adb import ShellResult
from phoned.device.evidence import Recorder

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.records import TaskRecord

ENV = "PHONED_CRASH_AT"
POINTS = (
    "after_claim",
    "after_pre_read",
    "after_journal_before",
    "after_apply",
    "after_verify",
    "before_report",
    "while_paused",
)
_PAUSED_STATES = frozenset({"waiting", "approval", "permission"})


def parse_crash_at(value: str | None) -> tuple[str, int] | None:
    """``NAME`` or ``NAME:N`` as ``(name, n)`` (n >= 1); None when unset or empty.

    Raises ``ValueError`` for an unknown point or a count that is not a positive integer,
    so a typo in a fault test fails loudly instead of never crashing.
    """
    if not value:
        return None
    name, sep, count = value.partition(":")
    if name not in POINTS:
        raise ValueError(f"{ENV}: unknown crash point {name!r}; known: {', '.join(POINTS)}")
    if not sep:
        return name, 1
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"{ENV}: {count!r} is not a positive count (NAME:N)")
    return name, int(count)


_TARGET = parse_crash_at(os.environ.get(ENV))
_seen: dict[str, int] = {}


def crash_now(name: str) -> None:
    """SIGKILL this process at once (a line on stderr says where, for the test's log)."""
    sys.stderr.write(f"phoned: {ENV} reached {name}: SIGKILL\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def fault_point(name: str) -> None:
    """Kill the process here if ``PHONED_CRASH_AT`` names this point (and its count)."""
    if _TARGET is None or _TARGET[0] != name:
        return
    _seen[name] = _seen.get(name, 0) + 1
    if _seen[name] == _TARGET[1]:
        crash_now(name)


def paused_point(task: TaskRecord) -> None:
    """``while_paused`` when ``task`` was just reported paused."""
    if _TARGET is not None and task.state.value in _PAUSED_STATES:
        fault_point("while_paused")


class _PreReadRecorder(Recorder):
    """A ``Recorder`` that reaches ``after_pre_read`` once its first read returned."""

    _pre_read_done = False

    def read(self, argv: Sequence[str], timeout: float = 10.0) -> ShellResult:
        result = super().read(argv, timeout)
        if not self._pre_read_done:
            self._pre_read_done = True
            fault_point("after_pre_read")
        return result


PreReadRecorder: type[Recorder] = (
    _PreReadRecorder if _TARGET is not None and _TARGET[0] == "after_pre_read" else Recorder
)
