"""Configuration: CLI flag > ``PHONED_*`` environment > ``config/phoned.yaml`` > default.

Every key is documented in ``config/phoned.yaml``. Nested keys are written with dots in
errors (``timeouts.dispatch``) and with ``_`` in the environment
(``PHONED_TIMEOUTS_DISPATCH``). A bad value raises ``ConfigError`` naming the key; the CLI
turns it into exit code 2.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from phoned.daemon.lifecycle.approval_policy import SOURCES, ApprovalPolicy, policy_method_error
from phoned.daemon.lifecycle.contract import Timeouts as TaskTimeouts
from phoned.daemon.lifecycle.contract import WorkflowSpec
from phoned.daemon.store.open import sqlite_path
from phoned.daemon.store.retention import RetentionRule
from phoned.device.actions.params import PACKAGE
from phoned.foundation.private_files import write_private
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if TYPE_CHECKING:
    from phoned.daemon.lifecycle.approval_policy import ApprovalPolicy
    from phoned.daemon.store.retention import RetentionRule

# How often timed-out tasks are swept, by the daemon and by `phoned serve` alike.
DEFAULT_SWEEP_INTERVAL_S = 30.0

ENV_PREFIX = "PHONED_"


class ConfigError(Exception):
    """A configuration value is invalid; the message names the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"config key {key}: {message}")
        self.key = key


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Timeouts(_Section):
    dispatch: float = Field(default=300.0, gt=0)  # dispatched but not started
    running: float = Field(default=600.0, gt=0)  # active running, excluding paused time
    approval: float = Field(default=900.0, gt=0)  # approval TTL
    permission: float = Field(default=600.0, gt=0)  # permission-recovery TTL
    queued: float = Field(default=3600.0, ge=0)  # time a task may wait unclaimed; 0 = no limit


class Retention(_Section):
    """How long the queue keeps finished tasks (``phoned.daemon.store.retention``; the sweeper)."""

    days: float = Field(default=30.0, ge=0)  # terminal tasks that ended longer ago go; 0 = never
    max_tasks: int = Field(default=100_000, ge=0)  # terminal tasks kept (newest); 0 = no cap


class Approval(_Section):
    """The owner's approval policy (``phoned.daemon.lifecycle.approval_policy``): every change by
    one of ``methods``, or from one of ``sources``, waits for a person's approval."""

    methods: tuple[str, ...] = ()  # e.g. [dnd.set, wifi.set]
    sources: tuple[str, ...] = ()  # e.g. [voice]
    # apps whose UI-tier steps (ui.tap, ui.type, ...) run without asking (they ask by default)
    ui_allow_packages: tuple[str, ...] = ()

    @field_validator("methods", "sources", "ui_allow_packages", mode="before")
    @classmethod
    def _words(cls, value: Any) -> Any:
        if isinstance(value, str):  # PHONED_APPROVAL_METHODS=dnd.set,wifi.set
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, value: tuple[str, ...]) -> tuple[str, ...]:

        for name in value:
            error = policy_method_error(name)
            if error is not None:
                raise ValueError(error)
        return value

    @field_validator("sources")
    @classmethod
    def _known_sources(cls, value: tuple[str, ...]) -> tuple[str, ...]:

        for name in value:
            if name not in SOURCES:
                raise ValueError(f"unknown source {name!r}; one of {', '.join(SOURCES)}")
        return value

    @field_validator("ui_allow_packages")
    @classmethod
    def _packages(cls, value: tuple[str, ...]) -> tuple[str, ...]:

        for name in value:
            if not PACKAGE.fullmatch(name):
                raise ValueError(f"{name!r} is not a package name")
        return value

    @property
    def policy(self) -> ApprovalPolicy:

        return ApprovalPolicy.of(self.methods, self.sources, self.ui_allow_packages)


class Schedules(_Section):
    """How schedules fire (``phoned.daemon.lifecycle.schedules``; the daemon or ``phoned serve``)."""

    # a due time fires when a tick finds it at most this old; an older one is missed
    grace: float = Field(default=60.0, gt=0, le=86400)


class Metrics(_Section):
    """Prometheus ``/metrics`` (``phoned.daemon.runtime.metrics``; docs/deploy.md, "Metrics")."""

    # phoned run: where to serve /metrics; "" = off; "PORT" or ":PORT" = 127.0.0.1:PORT
    listen: str = ""
    # the device label of a phone is sha256:<12 hex> of its serial, not the serial itself
    # (phoned run and phoned serve)
    hash_serials: bool = False

    @field_validator("listen")
    @classmethod
    def _address(cls, value: str) -> str:
        if value:
            listen_address(value)
        return value

    @property
    def address(self) -> tuple[str, int] | None:
        """(host, port) to listen on, or None when off."""
        return listen_address(self.listen) if self.listen else None


def listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` as (host, port); loopback when no host is given.
    Raises ``ValueError`` saying what is wrong."""
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        host = ""
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: expected HOST:PORT, :PORT or PORT (port 1-65535)")
    return host, int(port)


class Config(_Section):
    """The daemon's settings after every source has been applied."""

    queue: str = ""  # store URL; "" = the default SQLite file in state_dir
    state_dir: str = ""  # "" = $STATE_DIRECTORY, else $XDG_STATE_HOME/phoned
    daemon_id: str = ""  # "" = a stable id kept in state_dir
    devices: tuple[str, ...] = ()  # serials to serve; empty = every attached device
    adb_host: str = ""  # "" = $ANDROID_ADB_SERVER_HOST or 127.0.0.1, as adb does
    adb_port: int = Field(default=0, ge=0, le=65535)  # 0 = $ANDROID_ADB_SERVER_PORT or 5037
    adb_path: str = ""  # adb binary that starts the server; "" = adbutils.adb_path()
    poll_interval: float = Field(default=1.0, gt=0, le=60)  # seconds between claims when idle
    lease_seconds: float = Field(default=60.0, ge=5)
    heartbeat_interval: float = Field(default=10.0, gt=0)
    sweep_interval: float = Field(default=DEFAULT_SWEEP_INTERVAL_S, gt=0)
    # how long a verb (submit, approve, MCP) waits for another process's write lock on a
    # SQLite queue before it fails with "queue busy" (the daemon itself retries forever)
    queue_busy_wait: float = Field(default=30.0, ge=0, le=3600)
    grace_period: float = Field(default=20.0, ge=0)  # SIGTERM: time to reach a safe point
    settle_timeout: float = Field(default=10.0, gt=0)  # bound on async device transitions
    ci_grant_permissions: bool = False  # CI only: grant with pm/cmd instead of waiting
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["json", "text"] = "text"
    timeouts: Timeouts = Field(default_factory=Timeouts)
    retention: Retention = Field(default_factory=Retention)
    approval: Approval = Field(default_factory=Approval)
    schedules: Schedules = Field(default_factory=Schedules)
    metrics: Metrics = Field(default_factory=Metrics)

    @field_validator("queue")
    @classmethod
    def _queue_scheme(cls, value: str) -> str:
        if value and not value.startswith(("sqlite:///", "postgresql://", "http://", "https://")):
            raise ValueError("must start with sqlite:///, postgresql://, http:// or https://")
        return value

    @property
    def state_path(self) -> Path:
        if self.state_dir:
            return Path(self.state_dir)
        if os.environ.get("STATE_DIRECTORY"):  # set by systemd's StateDirectory=
            return Path(os.environ["STATE_DIRECTORY"].split(":")[0])
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(base) / "phoned"

    @property
    def queue_url(self) -> str:
        return self.queue or f"sqlite:///{self.state_path / 'queue.db'}"

    @property
    def artifacts_path(self) -> Path:
        """Where a daemon keeps screenshots and dumps (``<dir>/<task id>/<name>``).

        Beside the queue file (``<queue file>.artifacts``) when a SQLite ``queue`` is given
        and no ``state_dir``, so a queue named with ``--queue`` keeps its evidence with it;
        else ``<state_dir>/artifacts``.
        """
        if self.queue.startswith("sqlite:///") and not self.state_dir:
            queue_file = sqlite_path(self.queue)
            return queue_file.with_name(queue_file.name + ".artifacts")
        return self.state_path / "artifacts"

    @property
    def retention_rule(self) -> RetentionRule:
        """The retention this host applies (``retention.*``), with its artifacts folder."""

        return RetentionRule(self.retention.days, self.retention.max_tasks, self.artifacts_path)

    def stable_daemon_id(self) -> str:
        """The configured id, or one created once and kept in the state directory."""
        if self.daemon_id:
            return self.daemon_id
        path = self.state_path / "daemon-id"
        if path.exists():
            return path.read_text().strip()

        ident = f"{socket.gethostname()}-{os.urandom(4).hex()}"
        write_private(path, ident + "\n")  # 0600 in a 0700 state folder
        return ident


def with_default_timeouts(spec: Any, cfg: Config) -> Any:
    """A task or workflow spec whose unset timeouts take this host's ``timeouts.*`` values.

    Timeouts the submitter gave explicitly are kept.
    """

    defaults = TaskTimeouts(
        dispatch_s=cfg.timeouts.dispatch,
        run_s=cfg.timeouts.running,
        approval_ttl_s=cfg.timeouts.approval,
        permission_ttl_s=cfg.timeouts.permission,
        queued_s=cfg.timeouts.queued or None,
    )

    def fill(item: Any) -> Any:
        if "timeouts" in item.model_fields_set:
            return item
        return item.model_copy(update={"timeouts": defaults})

    if isinstance(spec, WorkflowSpec):
        return spec.model_copy(update={"steps": [fill(step) for step in spec.steps]})
    return fill(spec)


# nested sections: PHONED_<SECTION>_<KEY> in the environment; every section field of
# Config (a hand-kept list missed ``schedules``: PHONED_SCHEDULES_GRACE was ignored)
_SECTIONS: dict[str, type[_Section]] = {
    name: field.annotation
    for name, field in Config.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, _Section)
}


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in Config.model_fields.items():
        if name in _SECTIONS:
            for sub in _SECTIONS[name].model_fields:
                key = f"{ENV_PREFIX}{name.upper()}_{sub.upper()}"
                if key in environ:
                    out.setdefault(name, {})[sub] = environ[key]
            continue
        key = f"{ENV_PREFIX}{name.upper()}"
        if key in environ:
            value: Any = environ[key]
            if field.annotation == tuple[str, ...]:
                value = tuple(v for v in value.split(",") if v)
            out[name] = value
    return out


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_file(path: Path) -> dict[str, Any]:
    import yaml  # lazy: yaml is loaded only by the verbs that use it (start-up)

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise ConfigError("config", f"cannot read {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError("config", f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError("config", f"{path} must hold a mapping of keys")
    return data


# The host's config, written by scripts/install.sh with the service's queue and state
# folder: read first, by every verb and any user, so the service, an operator's CLI and a
# desktop MCP client find one queue (issue #23). ``./config/phoned.yaml`` (a checkout's
# documented defaults) only where the host has none.
HOST_CONFIG = Path("/etc/phoned/phoned.yaml")


def default_config_path() -> Path | None:
    """``$PHONED_CONFIG``, else ``/etc/phoned/phoned.yaml``, else ``./config/phoned.yaml``."""
    if os.environ.get(f"{ENV_PREFIX}CONFIG"):
        return Path(os.environ[f"{ENV_PREFIX}CONFIG"])
    for candidate in (HOST_CONFIG, Path("config/phoned.yaml")):
        if candidate.exists():
            return candidate
    return None


def load(
    path: Path | None = None,
    flags: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Config:
    """Build the config from file, environment and flags (flags win); raise ``ConfigError``."""
    environ = dict(os.environ) if environ is None else environ
    data = _read_file(path) if path is not None else {}
    data = _merge(data, _env_overrides(environ))
    data = _merge(data, {k: v for k, v in (flags or {}).items() if v is not None})
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "config"
        raise ConfigError(key, err["msg"]) from exc
