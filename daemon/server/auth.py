"""Bearer tokens and roles of the control plane.

The tokens file (YAML) holds only sha256 digests of tokens, never a raw token::

    tokens:
      - sha256: 3f1c...            # hex digest of the token
        role: daemon               # daemon | planner | approver | viewer
        name: lab-pi-1             # shown in logs instead of the token
        devices: [emulator-5554]   # daemon only: serials (or patterns) it may claim and report for
        conversations: [c1]        # planner/approver/viewer: bound to these conversations

A ``devices`` entry is a serial or a pattern where ``*`` stands for any run of characters
(``127.0.0.1:*``: every phone adb reaches on a loopback port, the simulated ones; ``*``: any
device). A daemon token serves exactly the serials its entries match: a phone whose serial
matches none does not exist for it (403), whichever daemon registered it.

What each role may do (``CAN``): a viewer reads (and scrapes ``/metrics``); a metrics
token only scrapes ``/metrics``; a planner reads and submits, amends,
cancels, reruns and resumes; an approver reads and approves or denies; a daemon
registers, claims, heartbeats, reports and uploads artifacts for its own devices only.
A missing or unknown token is 401; a known token without the right is 403.

A token with ``conversations`` is bound: every other conversation's tasks, events,
reports, workflows and artifacts do not exist for it (404, absent from lists), and it
may submit only into its own (403 naming ``conversation_id``). A token without them is
an operator's and reaches every conversation (``docs/security.md``).

The file must not be group- or world-writable (refused); group/world-readable is warned.
``add_to_tokens_file`` appends one entry the way ``phoned serve --make-token --write`` does:
text kept as it is (other entries, comments), the result checked as ``load`` would, then
written whole to a temporary file renamed over the old one (mode 0600); a symlink, a file of
another user or a group/world-writable file is refused.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import logging
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

from phoned.foundation.private_files import write_private

log = logging.getLogger("phoned.server")


class Role(str, Enum):
    """Who a token speaks for."""

    DAEMON = "daemon"  # a phoned daemon serving the listed devices
    PLANNER = "planner"  # an upstream planner: submits and steers tasks
    APPROVER = "approver"  # a person or service allowed to approve or deny effects
    VIEWER = "viewer"  # read-only
    METRICS = "metrics"  # a Prometheus server: scrapes /metrics, nothing else


class Right(str, Enum):
    """A class of endpoints."""

    READ = "read"  # list, status, events, context, classify
    PLAN = "plan"  # submit, amend, cancel, rerun, resume
    DECIDE = "decide"  # approve, deny
    SERVE = "serve"  # register, claim, heartbeat, reports, artifacts (own devices)
    SCRAPE = "scrape"  # /metrics (counts over every conversation: unbound tokens only)


CAN: dict[Role, frozenset[Right]] = {
    Role.VIEWER: frozenset({Right.READ, Right.SCRAPE}),
    Role.METRICS: frozenset({Right.SCRAPE}),
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
        """True when this daemon may claim and report for ``serial``: one of its ``devices``
        is that serial or a pattern matching it."""
        if self.role is not Role.DAEMON or serial is None:
            return False
        return any(serial_matches(pattern, serial) for pattern in self.devices)


def serial_matches(pattern: str, serial: str) -> bool:
    """True when ``serial`` is ``pattern``, where each ``*`` of it stands for any run of
    characters (nothing else is special: ``?``, ``[`` and ``.`` are themselves)."""
    if "*" not in pattern:
        return serial == pattern
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, serial, flags=re.DOTALL) is not None


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
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TokensFileError(f"cannot read tokens file {path}: {exc}") from exc
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, path: Path) -> TokenBook:
        """The book a tokens file's ``text`` describes; ``TokensFileError`` names a bad entry."""
        return cls(dict(_entry(i, e) for i, e in enumerate(_token_entries(text, path))))

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


def _token_entries(text: str, path: Path) -> list[Any]:
    """The ``tokens`` list of a tokens file's text (not yet checked entry by entry)."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise TokensFileError(f"cannot read tokens file {path}: {exc}") from exc
    entries = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise TokensFileError(f"{path}: expected a mapping with a 'tokens' list")
    return entries


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
    if not isinstance(devices, list) or not all(isinstance(d, str) and d for d in devices):
        raise TokensFileError(f"{where}.devices: expected a list of serials or patterns")
    if role is Role.DAEMON and not devices:
        raise TokensFileError(f"{where}.devices: a daemon token must list its devices")
    conversations = entry.get("conversations") or []
    if not isinstance(conversations, list) or not all(
        isinstance(c, str) and c for c in conversations
    ):
        raise TokensFileError(f"{where}.conversations: expected a list of conversation ids")
    if conversations and role is Role.DAEMON:
        raise TokensFileError(f"{where}.conversations: a daemon token is bound to devices")
    if conversations and role is Role.METRICS:
        raise TokensFileError(f"{where}.conversations: a metrics token cannot be bound")
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


def add_to_tokens_file(path: Path, entry: str) -> bool:
    """Append ``entry`` (the text ``make_token`` returns) to the tokens file ``path``, which
    is created (mode 0600) when missing; True when it was created.

    Everything already in the file (entries, comments, other keys) is kept as written; the
    result must load as ``TokenBook.load`` reads it and hold exactly the old entries and the
    new one, else nothing is written (``TokensFileError``). The new text goes to a temporary
    file renamed over ``path``; writers of one folder take turns (``flock`` on the folder).
    Refused: a symlink at ``path``, anything but a regular file, a file of another user, and a
    group/world-writable file (anyone could have added a token to it).
    """
    try:
        lock = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise TokensFileError(f"cannot write tokens file {path}: {exc}") from exc
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        existing = _read_own_file(path)
        text = _with_entry(existing or "", entry, path)
        try:
            write_private(path, text)
        except OSError as exc:
            raise TokensFileError(f"cannot write tokens file {path}: {exc}") from exc
    finally:
        os.close(lock)  # releases the lock
    return existing is None


def _read_own_file(path: Path) -> str | None:
    """The text of the tokens file at ``path`` (None: there is none), once it is known to be
    a regular file of this user that only this user may write (``TokensFileError`` else)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise TokensFileError(
                f"{path} is a symlink: refusing to write through it (name the file itself)"
            ) from exc
        raise TokensFileError(f"cannot read tokens file {path}: {exc}") from exc
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TokensFileError(f"{path} is not a regular file")
        if info.st_uid != os.geteuid():
            raise TokensFileError(
                f"{path} belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()}): "
                "refusing to rewrite it"
            )
        mode = stat.S_IMODE(info.st_mode)
        if mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise TokensFileError(
                f"tokens file {path} is group/world-writable (mode {mode:04o}): anyone could "
                f"have added a token; check its entries, then chmod 600 {path}"
            )
        return file.read().decode("utf-8")


def _with_entry(text: str, entry: str, path: Path) -> str:
    """The tokens file ``text`` with ``entry`` appended, checked: it loads as ``load`` reads
    it and says what ``text`` said plus the one entry (else ``TokensFileError``)."""
    appended = _appended(text, entry, path)
    TokenBook.parse(appended, path)  # every entry as serve will read it
    before = yaml.safe_load(text) or {}
    tokens = before.get("tokens") if isinstance(before, dict) else None
    expected = None
    if isinstance(before, dict) and isinstance(tokens, (list, type(None))):
        expected = {**before, "tokens": [*(tokens or []), *yaml.safe_load(entry)]}
    if expected is None or yaml.safe_load(appended) != expected:
        raise _not_appendable(path)
    return appended


def _not_appendable(path: Path) -> TokensFileError:
    return TokensFileError(
        f"cannot add to {path} as text (its 'tokens' list is not a block list like the one "
        "--make-token writes); add the entry by hand: run without --write"
    )


def _appended(text: str, entry: str, path: Path) -> str:
    """``text`` with ``entry`` added as the last item of its ``tokens`` block list (indented
    as that list is), or under a new ``tokens:`` key when it has none."""
    try:
        document = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise TokensFileError(f"cannot read tokens file {path}: {exc}") from exc
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if document is not None and not isinstance(document, yaml.MappingNode):
        raise TokensFileError(f"{path}: expected a mapping with a 'tokens' list")
    pairs = document.value if document is not None else []
    found = [(key, value) for key, value in pairs if getattr(key, "value", None) == "tokens"]
    if not found:
        return "".join(lines) + "tokens:\n" + entry
    key, value = found[-1]
    if isinstance(value, yaml.SequenceNode) and not value.flow_style:
        indent, last = value.start_mark.column, _last_content_line(lines, value)
    elif isinstance(value, yaml.ScalarNode) and value.tag.endswith(":null") and not value.value:
        indent, last = 2, key.end_mark.line  # ``tokens:`` with nothing under it yet
    else:
        raise _not_appendable(path)
    item = "".join(" " * indent + line[2:] + "\n" for line in entry.splitlines())
    return "".join(lines[: last + 1]) + item + "".join(lines[last + 1 :])


def _last_content_line(lines: list[str], node: yaml.Node) -> int:
    """The index of the last line of ``node`` that is neither blank nor only a comment
    (a block node's end mark lies past the comments and blank lines that follow it, at the
    start of the next key's line)."""
    end = node.end_mark.line + (1 if node.end_mark.column else 0)  # past the node's last line
    last = node.start_mark.line
    for index in range(node.start_mark.line, min(end, len(lines))):
        stripped = lines[index].strip()
        if stripped and not stripped.startswith("#"):
            last = index
    return last
