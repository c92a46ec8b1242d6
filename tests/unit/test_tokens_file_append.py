"""Issue #23 point 7: ``add_to_tokens_file``, what ``phoned serve --make-token --write`` does.

The entry goes in as text, so whatever a person wrote stays: comments, the list's own
indentation, keys after the list. A file it cannot extend as text (a flow list, a scalar)
is refused with nothing written, as are a symlink and a group/world-writable file; the
result is always one the loader reads, with the old entries and the new one, mode 0600.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml

from phoned.daemon.server.auth import Role, TokenBook, TokensFileError, add_to_tokens_file, make_token

A, B = "a" * 64, "b" * 64

KEPT = {
    "comments around an indented list": (
        f"# head\ntokens:\n  - sha256: {A}\n    role: planner  # inline\n"
        "  # - sha256: disabled\n\n# tail\n"
    ),
    "a list as yaml.safe_dump writes it": yaml.safe_dump(
        {"tokens": [{"sha256": A, "role": "viewer"}]}
    ),
    "a key after the list": f"tokens:\n- sha256: {A}\n  role: viewer\nnote: kept\n",
    "no newline at the end": f"tokens:\n  - sha256: {A}\n    role: viewer",
    "an empty tokens key": "tokens:  # none yet\n",
    "only a comment": "# nothing yet\n",
    "an empty file": "",
}


@pytest.mark.parametrize("text", KEPT.values(), ids=KEPT.keys())
def test_an_entry_is_appended_and_the_rest_kept(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(text)
    path.chmod(0o600)
    token, entry = make_token(Role.DAEMON, ("127.0.0.1:*",), name="sims")
    assert add_to_tokens_file(path, entry) is False
    written = path.read_text()
    for line in text.splitlines():
        assert line in written.splitlines(), line
    before = (yaml.safe_load(text) or {}) if text else {}
    after = yaml.safe_load(written)
    assert after == {**before, "tokens": [*(before.get("tokens") or []), *yaml.safe_load(entry)]}
    principal = TokenBook.load(path).lookup(token)
    assert principal is not None and principal.devices == {"127.0.0.1:*"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_missing_file_is_created_0600(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    old = os.umask(0o022)
    try:
        token, entry = make_token(Role.PLANNER, name="p")
        assert add_to_tokens_file(path, entry) is True
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TokenBook.load(path).lookup(token) is not None
    second, entry = make_token(Role.VIEWER)
    assert add_to_tokens_file(path, entry) is False
    book = TokenBook.load(path)
    assert book.lookup(token) is not None and book.lookup(second) is not None


REFUSED = {
    "a flow list": ("tokens: []\n", "not a block list"),
    "a scalar list": ("tokens: everyone\n", "not a block list"),
    "a list document": ("- sha256: x\n", "expected a mapping"),
    "a bad entry already there": (f"tokens:\n  - sha256: {B}\n    role: root\n", "tokens.0.role"),
    "not yaml": ("tokens: [\n", "cannot read"),
}


@pytest.mark.parametrize(("text", "needle"), REFUSED.values(), ids=REFUSED.keys())
def test_a_file_it_cannot_extend_is_left_as_it_is(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(TokensFileError, match=needle):
        add_to_tokens_file(path, make_token(Role.PLANNER)[1])
    assert path.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["tokens.yaml"]


def test_a_symlink_and_a_writable_file_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "target.yaml"
    target.write_text("tokens:\n")
    target.chmod(0o600)
    link = tmp_path / "tokens.yaml"
    link.symlink_to(target)
    with pytest.raises(TokensFileError, match="symlink"):
        add_to_tokens_file(link, make_token(Role.PLANNER)[1])
    assert link.is_symlink() and target.read_text() == "tokens:\n"
    target.chmod(0o606)
    with pytest.raises(TokensFileError, match="group/world-writable"):
        add_to_tokens_file(target, make_token(Role.PLANNER)[1])
    assert target.read_text() == "tokens:\n"
