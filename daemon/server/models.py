"""Request bodies of the control plane that are not an operation's (validated by FastAPI,
published in OpenAPI): an operation's body is made from its declaration
(``phoned.daemon.lifecycle.operation.Op.body_model``); these are the routes' own.

Numbers are finite (``NaN``/``Infinity`` are refused, 422); times are POSIX seconds in
``[0, MAX_TIME]``; waits and leases have upper bounds. ``phoned.daemon.server.limits`` has
already refused NUL characters, over-deep nesting and out-of-range numbers anywhere in
the body before these models see it.
"""

from __future__ import annotations

from typing import Any, Literal

from phoned.daemon.lifecycle.wire import At, ReportBody, TicketBody, WireBody
from pydantic import Field


class ConversationBody(WireBody):
    """Rerun: the conversation that owns the task."""

    conversation_id: str


class ClassifyBody(WireBody):
    """A task or workflow to classify, optionally against a device's capabilities."""

    task: dict[str, Any]
    device: str | None = None


class DeviceInfo(WireBody):
    """A device a daemon serves and the methods it supports."""

    serial: str
    methods: list[str] = Field(default_factory=list)


class RegisterBody(WireBody):
    """A daemon announcing itself."""

    daemon_id: str = Field(min_length=1, max_length=200)
    devices: list[DeviceInfo] = Field(default_factory=list)


class ClaimBody(WireBody):
    """Claim the oldest claimable task of ``device``; wait up to ``wait`` seconds for one."""

    owner: str = Field(min_length=3, max_length=300, pattern=r"^.+/.+$")
    device: str
    wait: float = Field(default=0.0, ge=0, le=3600)
    lease_s: float = Field(default=60.0, ge=5, le=3600)
    task_id: str | None = None


class HoldBody(WireBody):
    """A daemon takes or renews the hold on its phone for ``hold_s`` seconds."""

    holder: str = Field(min_length=1, max_length=300)  # daemon id, "<id>/once" for --once
    host: str = Field(default="", max_length=255)
    pid: int = Field(default=0, ge=0, le=2**22)  # Linux pid_max at most
    command: str = Field(default="", max_length=200)
    hold_s: float = Field(default=60.0, ge=5, le=3600)


class ReleaseBody(WireBody):
    """A daemon gives up the hold it took (``HoldBody`` named the same holder)."""

    holder: str = Field(min_length=1, max_length=300)
    host: str = Field(default="", max_length=255)
    pid: int = Field(default=0, ge=0, le=2**22)  # Linux pid_max at most


class AdmitBody(ReportBody):
    approval_digest: str | None = None


class JournalAfterBody(WireBody):
    report_id: str | None = Field(default=None, max_length=100)
    ticket: TicketBody | None = None  # checked when given; the entry's claim always is
    outcome: Literal["confirmed_success", "confirmed_failure", "unknown"]
    detail: str = ""
    at: At = None


class RecoverBody(WireBody):
    daemon_id: str = Field(min_length=1)
    at: At = None
    device: str | None = None  # only this phone's (a worker that just took its hold)
