"""Request bodies of the control plane (validated by FastAPI, published in OpenAPI).

Numbers are finite (``NaN``/``Infinity`` are refused, 422); times are POSIX seconds in
``[0, MAX_TIME]``; waits and leases have upper bounds. ``phoned.daemon.server.limits`` has
already refused NUL characters, over-deep nesting and out-of-range numbers anywhere in
the body before these models see it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_TIME = 253402300799.0  # 9999-12-31T23:59:59Z
# When something happened on the daemon (POSIX s); the server never stores a later time.
At = Annotated[float | None, Field(ge=0, le=MAX_TIME, allow_inf_nan=False)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Decision(_Body):
    """Approve or deny: quotes the conversation, revision and preview digest shown."""

    conversation_id: str
    revision: int
    preview_digest: str


class ConversationBody(_Body):
    """Cancel or resume: the conversation that owns the task."""

    conversation_id: str


class AmendBody(_Body):
    """A new revision of a non-terminal task."""

    conversation_id: str
    params: dict[str, Any]


class ClassifyBody(_Body):
    """A task or workflow to classify, optionally against a device's capabilities."""

    task: dict[str, Any]
    device: str | None = None


class DeviceInfo(_Body):
    """A device a daemon serves and the methods it supports."""

    serial: str
    methods: list[str] = Field(default_factory=list)


class RegisterBody(_Body):
    """A daemon announcing itself."""

    daemon_id: str = Field(min_length=1, max_length=200)
    devices: list[DeviceInfo] = Field(default_factory=list)


class ClaimBody(_Body):
    """Claim the oldest claimable task of ``device``; wait up to ``wait`` seconds for one."""

    owner: str = Field(min_length=3, max_length=300, pattern=r"^.+/.+$")
    device: str
    wait: float = Field(default=0.0, ge=0, le=3600)
    lease_s: float = Field(default=60.0, ge=5, le=3600)
    task_id: str | None = None


class HoldBody(_Body):
    """A daemon takes or renews the hold on its phone for ``hold_s`` seconds."""

    holder: str = Field(min_length=1, max_length=300)  # daemon id, "<id>/once" for --once
    host: str = Field(default="", max_length=255)
    pid: int = Field(default=0, ge=0, le=2**22)  # Linux pid_max at most
    command: str = Field(default="", max_length=200)
    hold_s: float = Field(default=60.0, ge=5, le=3600)


class ReleaseBody(_Body):
    """A daemon gives up the hold it took (``HoldBody`` named the same holder)."""

    holder: str = Field(min_length=1, max_length=300)
    host: str = Field(default="", max_length=255)
    pid: int = Field(default=0, ge=0, le=2**22)  # Linux pid_max at most


class TicketBody(_Body):
    """The guard of every report: the claim it belongs to."""

    owner: str
    attempt: int
    revision: int


class Report(_Body):
    """Fields every daemon report carries; ``report_id`` makes redelivery harmless."""

    report_id: str | None = Field(default=None, max_length=100)
    ticket: TicketBody
    at: At = None  # when it happened on the daemon (POSIX s)


class HeartbeatBody(Report):
    lease_s: float = Field(default=60.0, ge=5, le=3600)


class AdmitBody(Report):
    approval_digest: str | None = None


class JournalBeforeBody(Report):
    op_id: str
    action: str
    target: str
    input_digest: str
    approval_digest: str | None = None


class JournalAfterBody(_Body):
    report_id: str | None = Field(default=None, max_length=100)
    ticket: TicketBody | None = None  # checked when given; the entry's claim always is
    outcome: Literal["confirmed_success", "confirmed_failure", "unknown"]
    detail: str = ""
    at: At = None


class EvidenceBody(Report):
    kind: str
    body: dict[str, Any]


class CompleteBody(Report):
    observed_target: str | None = None
    evidence_refs: list[str] = Field(default_factory=list)


class FailureBody(_Body):
    reason: str
    message: str = ""


class FailBody(Report):
    failure: FailureBody
    evidence_refs: list[str] = Field(default_factory=list)


class PauseBody(Report):
    state: Literal["waiting", "permission"]
    waiting_for: str | None = None
    evidence_refs: list[str] = Field(default_factory=list)


class PreviewBody(_Body):
    effect: str
    target: str
    data: dict[str, Any]
    snapshot_digest: str


class ApprovalRequestBody(Report):
    preview: PreviewBody


class SummaryBody(_Body):
    done: list[str] = Field(default_factory=list)
    not_done: list[str] = Field(default_factory=list)


class StoppedBody(Report):
    summary: SummaryBody


class RecoverBody(_Body):
    daemon_id: str = Field(min_length=1)
    at: At = None
    device: str | None = None  # only this phone's (a worker that just took its hold)
