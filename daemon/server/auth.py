"""Bearer tokens and roles of the control plane.

The tokens file (YAML) holds only sha256 digests of tokens, never a raw token::

    tokens:
      - sha256: 3f1c...            # hex digest of the token
        role: daemon               # daemon | planner | approver | viewer
        name: lab-pi-1             # shown in logs instead of the token
        devices: [emulator-5554]   # daemon only: serials it may claim and report for ("*": any)

What each role may do (``CAN``): a viewer reads; a planner reads and submits, amends,
cancels, reruns and resumes; an approver reads and approves or denies; a daemon
registers, claims, heartbeats, reports and uploads artifacts for its own devices only.
A missing or unknown token is 401; a known token without the right is 403.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import yaml


class Role(str, Enum):
    """Who a token speaks for."""

    DAEMON = "daemon"  # a phoned daemon serving the listed devices
    PLANNER = "planner"  # an upstream planner: submits and steers tasks
    APPROVER = "approver"  # a person or service allowed to approve or deny effects
    VIEWER = "viewer"  # read-only


class Right(str, Enum):
    """A class of endpoints."""

    READ = "read"  # list, status, events, context, classify
    PLAN = "plan"  # submit, amend, cancel, rerun, resume
    DECIDE = "decide"  # approve, deny
    SERVE = "serve"  # register, claim, heartbeat, reports, artifacts (own devices)


CAN: dict[Role, frozenset[Right]] = {
    Role.VIEWER: frozenset({Right.READ}),
    Role.PLANNER: frozenset({Right.READ, Right.PLAN}),
    Role.APPROVER: frozenset({Right.READ, Right.DECIDE}),
    Role.DAEMON: frozenset({Right.SERVE}),
}


class TokensFileError(ValueError):
    """The tokens file cannot be used; the message says which entry and why."""


@dataclass(frozen=True)
class Principal:
    """The holder of a valid token."""

    name: str
    role: Role
    devices: frozenset[str] = field(default_factory=frozenset)

    def may(self, right: Right) -> bool:
        """True when the role grants ``right``."""
        return right in CAN[self.role]

    def serves(self, serial: str | None) -> bool:
        """True when this daemon may claim and report for ``serial``."""
        if self.role is not Role.DAEMON or serial is None:
            return False
        return "*" in self.devices or serial in self.devices


def token_digest(token: str) -> str:
    """The hex sha256 of a raw token, as the tokens file keeps it."""
    return hashlib.sha256(token.encode()).hexdigest()


class TokenBook:
    """The known token digests and whom they belong to."""

    def __init__(self, principals: dict[str, Principal]) -> None:
        self._by_digest = principals

    @classmethod
    def load(cls, path: Path) -> TokenBook:
        """Read a tokens file; raise ``TokensFileError`` naming the bad entry."""
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise TokensFileError(f"cannot read tokens file {path}: {exc}") from exc
        entries = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise TokensFileError(f"{path}: expected a mapping with a 'tokens' list")
        return cls(dict(_entry(i, e) for i, e in enumerate(entries)))

    def lookup(self, token: str) -> Principal | None:
        """The principal of a raw token, or None; compares digests in constant time."""
        wanted = token_digest(token)
        for known, principal in self._by_digest.items():
            if hmac.compare_digest(known, wanted):
                return principal
        return None


def _entry(index: int, entry: Any) -> tuple[str, Principal]:
    where = f"tokens.{index}"
    if not isinstance(entry, dict):
        raise TokensFileError(f"{where}: expected a mapping")
    digest = str(entry.get("sha256", "")).lower()
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise TokensFileError(f"{where}.sha256: expected 64 hex digits")
    try:
        role = Role(entry.get("role"))
    except ValueError as exc:
        raise TokensFileError(f"{where}.role: one of {', '.join(r.value for r in Role)}") from exc
    devices = entry.get("devices") or []
    if not isinstance(devices, list) or not all(isinstance(d, str) for d in devices):
        raise TokensFileError(f"{where}.devices: expected a list of serials")
    if role is Role.DAEMON and not devices:
        raise TokensFileError(f"{where}.devices: a daemon token must list its devices")
    name = str(entry.get("name") or f"{role.value}-{digest[:8]}")
    return digest, Principal(name, role, frozenset(devices))


def make_token(role: Role, devices: tuple[str, ...] = (), name: str = "") -> tuple[str, str]:
    """A new random token and the tokens-file entry (YAML) that admits it."""
    token = "phd_" + secrets.token_urlsafe(32)
    entry: dict[str, Any] = {
        "sha256": token_digest(token),
        "role": role.value,
        "name": name or f"{role.value}-{token_digest(token)[:8]}",
    }
    if devices:
        entry["devices"] = list(devices)
    text = yaml.safe_dump([entry], sort_keys=False, default_flow_style=False)
    return token, "".join(f"  {line}\n" for line in text.splitlines())
