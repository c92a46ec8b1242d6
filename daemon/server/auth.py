"""Bearer tokens and roles of the control plane.

The tokens file (YAML) holds only sha256 digests of tokens, never a raw token::

    tokens:
      - sha256: 3f1c...            # hex digest of the token
        role: daemon               # daemon | planner | approver | viewer
        name: lab-pi-1             # shown in logs instead of the token
        devices: [emulator-5554]   # daemon only: serials it may claim and report for ("*": any)
        conversations: [c1]        # planner/approver/viewer: bound to these conversations

What each role may do (``CAN``): a viewer reads; a planner reads and submits, amends,
cancels, reruns and resumes; an approver reads and approves or denies; a daemon
registers, claims, heartbeats, reports and uploads artifacts for its own devices only.
A missing or unknown token is 401; a known token without the right is 403.

A token with ``conversations`` is bound: every other conversation's tasks, events,
reports, workflows and artifacts do not exist for it (404, absent from lists), and it
may submit only into its own (403 naming ``conversation_id``). A token without them is
an operator's and reaches every conversation (``docs/security.md``).

The file must not be group- or world-writable (refused); group/world-readable is warned.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import stat
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("phoned.server")


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
    conversations: frozenset[str] = field(default_factory=frozenset)  # empty: unbound
    key: str = ""  # the token's digest: who a claim, a report id or a registration belongs to

    def may(self, right: Right) -> bool:
        """True when the role grants ``right``."""
        return right in CAN[self.role]

    @property
    def bound(self) -> bool:
        """True for a token limited to its ``conversations``; False for an operator's."""
        return bool(self.conversations)

    def sees(self, conversation_id: str) -> bool:
        """True when the token reaches ``conversation_id`` (an unbound token reaches all)."""
        return not self.conversations or conversation_id in self.conversations

    @property
    def redacted(self) -> bool:
        """True when numbers and message bodies are hidden from it (a bound viewer)."""
        return self.bound and self.role is Role.VIEWER

    @property
    def sees_artifacts(self) -> bool:
        """Screenshots and hierarchies: operators (unbound) and the conversation's approvers."""
        return not self.bound or self.role is Role.APPROVER

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
        """Read a tokens file; raise ``TokensFileError`` naming the bad entry.

        A group/world-writable file is refused (anyone could add a token); a readable one
        is warned about (the digests are not secrets, but the names and scopes are).
        """
        check_permissions(path)
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


def check_permissions(path: Path) -> None:
    """Refuse a group/world-writable tokens file; warn when it is group/world-readable."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError as exc:
        raise TokensFileError(f"cannot read tokens file {path}: {exc}") from exc
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise TokensFileError(
            f"tokens file {path} is group/world-writable (mode {mode:04o}): "
            f"anyone could add a token; run chmod 600 {path}"
        )
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        log.warning("tokens file %s is group/world-readable (mode %04o): chmod 600 it", path, mode)


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
    conversations = entry.get("conversations") or []
    if not isinstance(conversations, list) or not all(
        isinstance(c, str) and c for c in conversations
    ):
        raise TokensFileError(f"{where}.conversations: expected a list of conversation ids")
    if conversations and role is Role.DAEMON:
        raise TokensFileError(f"{where}.conversations: a daemon token is bound to devices")
    name = str(entry.get("name") or f"{role.value}-{digest[:8]}")
    principal = Principal(name, role, frozenset(devices), frozenset(conversations), digest)
    return digest, principal


def make_token(
    role: Role, devices: tuple[str, ...] = (), name: str = "", conversations: tuple[str, ...] = ()
) -> tuple[str, str]:
    """A new random token and the tokens-file entry (YAML) that admits it."""
    token = "phd_" + secrets.token_urlsafe(32)
    entry: dict[str, Any] = {
        "sha256": token_digest(token),
        "role": role.value,
        "name": name or f"{role.value}-{token_digest(token)[:8]}",
    }
    if devices:
        entry["devices"] = list(devices)
    if conversations:
        entry["conversations"] = list(conversations)
    text = yaml.safe_dump([entry], sort_keys=False, default_flow_style=False)
    return token, "".join(f"  {line}\n" for line in text.splitlines())
