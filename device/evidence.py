"""Evidence of what a device action did: every command, every read-back, every poll.

A ``Recorder`` wraps a ``Device``: each command an action runs through it is recorded with
its argv (sensitive values redacted), exit code and duration; a call that is not a shell
command (a uiautomator2 JSON-RPC call) is recorded the same way by ``call()``, its argv
naming the client and method (``("uiautomator2", "dump_hierarchy")``); ``observe()`` records a value
read from the device with the command that read it and when. ``Evidence`` is the frozen
result with a stable JSON form (``to_json``) that the queue stores and ``phoned show``
renders.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from phoned.device import private
from phoned.device.adb import ShellResult
from phoned.device.connection import Device

T = TypeVar("T")

# The one redacted form of a sensitive value (``device.private``): a number's last digits,
# a text's length and short digest; never the value.
redact = private.redact


def now_iso() -> str:
    """UTC wall-clock time with milliseconds, as evidence timestamps are written."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


@dataclass(frozen=True)
class CommandRecord:
    """One command run on the device."""

    argv: tuple[str, ...]  # sensitive elements already redacted
    exit_code: int | None  # None: no exit code (timeout or transport lost)
    duration_ms: float
    at: str
    error: str = ""
    stdout_excerpt: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "duration_ms": round(self.duration_ms, 3),
            "at": self.at,
            "error": self.error,
            "stdout_excerpt": self.stdout_excerpt,
        }


@dataclass(frozen=True)
class Observation:
    """A value read from the device: which, what it was, how it was read, when."""

    name: str
    value: Any
    phase: str  # "before", "after", "poll" or "read"
    command: tuple[str, ...]
    at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "phase": self.phase,
            "command": list(self.command),
            "at": self.at,
        }


@dataclass(frozen=True)
class Evidence:
    """Everything an action leaves behind as proof (stable JSON via ``to_json``)."""

    method: str
    device: dict[str, Any]
    commands: tuple[CommandRecord, ...]
    observations: tuple[Observation, ...]
    target: dict[str, Any]  # {"expected": ..., "observed": ..., "met": bool}
    artifacts: dict[str, str] = field(default_factory=dict)  # name -> path or reference
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "device": self.device,
            "commands": [c.to_json() for c in self.commands],
            "observations": [o.to_json() for o in self.observations],
            "target": self.target,
            "artifacts": dict(self.artifacts),
            "notes": list(self.notes),
        }

    @property
    def round_trips(self) -> int:
        return len(self.commands)


class Recorder:
    """Runs commands on a device and records them; collects observations for ``Evidence``.

    ``sensitive`` values (the task's phone number and message body) are replaced by their
    redacted form (``phoned.device.private``) wherever they appear in an argv element, an error,
    a note, an observation or the target, and the values of the private keys (``address``,
    ``body``, ``compose_text``, a conversation's ``text``, ...) are redacted whatever they
    hold: phone numbers and message texts never reach the evidence or logs in clear.
    """

    MIN_EMBEDDED = private.MIN_EMBEDDED

    def __init__(self, device: Device, method: str, sensitive: Sequence[str] = ()) -> None:
        self.device = device
        self.method = method
        self.sensitive = [s for s in sensitive if s]
        self.commands: list[CommandRecord] = []
        self.observations: list[Observation] = []
        self.notes: list[str] = []
        self.artifacts: dict[str, str] = {}

    def add_sensitive(self, *values: str) -> None:
        """Treat ``values`` (a phone number, a message body) as secrets from now on."""
        self.sensitive.extend(v for v in values if v and v not in self.sensitive)

    def redact_text(self, text: str) -> str:
        """``text`` with every sensitive value replaced by its redacted form (a secret inside
        a longer text only when it has at least ``MIN_EMBEDDED`` characters: a one-letter
        body must not blank out every ``a`` of a command)."""
        return private.replace_secrets(text, self.sensitive)

    def _redact_argv(self, argv: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.redact_text(str(arg)) for arg in argv)

    def _redact_value(self, value: Any, key: str | None = None) -> Any:
        return private.scrub(value, self.sensitive, key)

    def _record(
        self, argv: Sequence[str], fn: Any, timeout: float, private_output: bool = False
    ) -> ShellResult:
        at, start = now_iso(), time.monotonic()
        try:
            result: ShellResult = fn(argv, timeout)
        except Exception as exc:
            self.commands.append(
                CommandRecord(
                    self._redact_argv(argv),
                    None,
                    (time.monotonic() - start) * 1000,
                    at,
                    error=f"{type(exc).__name__}: {exc}",
                )
            )
            raise
        kept = not self.sensitive and not private_output
        excerpt = private.scrub_markup(result.stdout[:200]) if kept else ""
        self.commands.append(
            CommandRecord(
                self._redact_argv(argv),
                result.exit_code,
                result.duration * 1000,
                at,
                stdout_excerpt=excerpt,
            )
        )
        return result

    def call(self, argv: Sequence[str], fn: Callable[[], T]) -> T:
        """Run ``fn`` (a uiautomator2 call), recorded under ``argv`` like a shell command:
        exit code 0 when it returns, none and the error when it raises (re-raised)."""
        at, start = now_iso(), time.monotonic()
        try:
            value = fn()
        except Exception as exc:
            self.event(
                argv, None, (time.monotonic() - start) * 1000, at, f"{type(exc).__name__}: {exc}"
            )
            raise
        self.event(argv, 0, (time.monotonic() - start) * 1000, at)
        return value

    def event(
        self,
        argv: Sequence[str],
        exit_code: int | None,
        duration_ms: float,
        at: str | None = None,
        error: str = "",
    ) -> None:
        """Record something already done on the device (a session start, a failed ping)."""
        self.commands.append(
            CommandRecord(
                self._redact_argv(argv),
                exit_code,
                duration_ms,
                at or now_iso(),
                error=self.redact_text(error),
            )
        )

    def run(self, argv: Sequence[str], timeout: float = 10.0) -> ShellResult:
        """Run a command with an effect (never retried)."""
        return self._record(argv, self.device.run, timeout)

    def read(self, argv: Sequence[str], timeout: float = 10.0) -> ShellResult:
        """Run a read-only command (transient errors retried)."""
        return self._record(argv, self.device.read, timeout)

    def read_private(self, argv: Sequence[str], timeout: float = 10.0) -> ShellResult:
        """``read`` of a command whose output is message content (notification texts): no
        stdout excerpt is kept in the evidence."""
        return self._record(argv, self.device.read, timeout, private_output=True)

    def observe(self, name: str, value: Any, phase: str, command: Sequence[str]) -> Any:
        """Record that ``name`` was seen as ``value``; returns ``value``."""
        self.observations.append(
            Observation(
                name, self._redact_value(value, name), phase, self._redact_argv(command), now_iso()
            )
        )
        return value

    def note(self, text: str) -> None:
        self.notes.append(self.redact_text(text))

    def evidence(self, target: dict[str, Any]) -> Evidence:
        try:
            device = self.device.identity.to_json()
        except Exception as exc:  # identity unreadable (device gone): say so, keep the rest
            device = {"serial": self.device.serial, "error": f"{type(exc).__name__}: {exc}"}
        return Evidence(
            method=self.method,
            device=device,
            commands=tuple(self.commands),
            observations=tuple(self.observations),
            target=self._redact_value(target),
            artifacts=dict(self.artifacts),
            notes=tuple(self.notes),
        )
