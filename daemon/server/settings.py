"""What ``phoned serve`` is configured with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phoned.daemon.config import DEFAULT_SWEEP_INTERVAL_S
from phoned.daemon.store.open import sqlite_path
from phoned.daemon.store.retention import RetentionRule


@dataclass(frozen=True)
class ServerSettings:
    """The control plane's store, state, tokens and long-poll bounds."""

    queue_url: str  # the Store behind the API (sqlite:///, postgresql://)
    state_dir: Path  # artifacts and the report ledger live here
    tokens_path: Path
    sweep_interval: float = DEFAULT_SWEEP_INTERVAL_S  # first sweep one interval after start
    max_wait: float = 30.0  # longest long-poll a client may ask for (seconds)
    fallback_poll: float = 0.25  # how often the queue is re-read for other replicas' writes
    worker_threads: int = (
        64  # threads for blocking handlers (a long-poll holds none while it waits)
    )
    max_body_bytes: int = 1024 * 1024  # a JSON request body; larger is 413 before it is read
    max_artifact_bytes: int = 20 * 1024 * 1024  # one artifact upload, streamed to disk
    max_json_depth: int = 64  # nesting of a JSON body; deeper is 422
    max_polls_per_token: int = 32  # long-polls one token may hold open at once; more is 429
    docs: bool = False  # serve /docs and /redoc (their Swagger/ReDoc scripts come from a CDN)
    retention: RetentionRule | None = None  # applied by the sweeper; None keeps every task
    schedule_grace: float = 60.0  # a due time older than this when ticked is missed
    metrics_hash_serials: bool = False  # /metrics: device labels are digests of the serials

    @property
    def artifacts_dir(self) -> Path:
        """Where uploaded artifacts are kept: ``<state>/artifacts/<task id>/<name>``."""
        return self.state_dir / "artifacts"

    @property
    def ledger_path(self) -> Path:
        """The report ledger (dedupe of redelivered reports).

        Beside a SQLite queue file, so replicas over one file share it; otherwise in the
        state directory (replicas over PostgreSQL then dedupe per replica).
        """
        if self.queue_url.startswith("sqlite:///"):
            return Path(f"{sqlite_path(self.queue_url)}.reports.db")
        return self.state_dir / "reports.db"
