"""Issue #23 point 7: a daemon token bound to a serial pattern (``--device '127.0.0.1:*'``).

The pattern is the token's whole reach: ``*`` stands for any run of characters and nothing
else is special, so ``127.0.0.1:*`` is every phone adb reaches on a loopback port (the
simulated ones) and not ``127.0.0.10:5555``. Driven through the real app (TestClient over
``create_app``, a real SQLite queue): the pattern token registers, claims, reads and
reports for a phone it matches, and gets 403 for one it does not; ``*`` still means any.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from planes import AppPlane, Grant, app_plane, plane_settings, write_tokens

from phoned.daemon.server.auth import TokenBook, TokensFileError, serial_matches

SIM, OTHER = "127.0.0.1:45221", "emulator-5554"


@pytest.mark.parametrize(
    ("pattern", "serial", "matches"),
    [
        ("127.0.0.1:*", "127.0.0.1:45221", True),
        ("127.0.0.1:*", "127.0.0.1:", True),
        ("127.0.0.1:*", "127.0.0.10:5555", False),  # '.' and ':' are themselves
        ("127.0.0.1:*", "127x0x0x1:5555", False),
        ("127.0.0.1:*", "x127.0.0.1:5555", False),  # anchored at both ends
        ("*", "anything at all", True),
        ("lab-*-usb", "lab-3-usb", True),
        ("lab-*-usb", "lab-3-usb2", False),
        ("emu-?", "emu-1", False),  # no '?', no '[...]': only '*' is a wildcard
        ("emu-[12]", "emu-1", False),
        ("emu-[12]", "emu-[12]", True),
        ("emulator-5554", "emulator-5554", True),
        ("emulator-5554", "emulator-55545", False),
    ],
)
def test_serial_patterns(pattern: str, serial: str, matches: bool) -> None:
    assert serial_matches(pattern, serial) is matches


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[AppPlane]:
    grants = {
        "sims": Grant("daemon", ("127.0.0.1:*",)),
        "other": Grant("daemon", (OTHER,)),
        "any": Grant("daemon", ("*",)),
        "planner": Grant("planner"),
    }
    tokens = write_tokens(tmp_path / "tokens.yaml", grants)
    with app_plane(plane_settings(tmp_path), tokens) as made:
        yield made


def register(serial: str, daemon_id: str) -> dict[str, object]:
    return {"daemon_id": daemon_id, "devices": [{"serial": serial, "methods": ["dnd.set"]}]}


def test_a_pattern_token_serves_what_it_matches_and_nothing_else(plane: AppPlane) -> None:
    plane.ok("sims", "POST", "/v1/daemons/register", json=register(SIM, "host-a"))
    plane.ok("other", "POST", "/v1/daemons/register", json=register(OTHER, "host-b"))
    dnd = {"method": "dnd.set", "params": {"mode": "priority"}, "conversation_id": "c"}
    mine = plane.ok("planner", "POST", "/v1/tasks", json={**dnd, "device": SIM})["task"]
    theirs = plane.ok("planner", "POST", "/v1/tasks", json={**dnd, "device": OTHER})["task"]

    claim = {"owner": f"host-a/{SIM}", "device": SIM, "task_id": mine["id"]}
    got = plane.ok("sims", "POST", "/v1/claims", json=claim)["task"]
    ticket = {"owner": got["lease_owner"], "attempt": got["attempt"], "revision": got["revision"]}
    plane.ok("sims", "POST", f"/v1/tasks/{mine['id']}/start", json={"ticket": ticket})
    assert plane.ok("sims", "GET", "/v1/tasks", params={"device": SIM})["tasks"][0]["state"] == (
        "running"
    )

    for method, path, body in (
        ("POST", "/v1/daemons/register", register(OTHER, "host-a")),
        ("POST", "/v1/claims", {"owner": f"host-a/{OTHER}", "device": OTHER}),
        ("POST", "/v1/claims", {"owner": f"host-a/{SIM}", "device": OTHER}),
        ("PUT", f"/v1/devices/{OTHER}/context", {}),
        ("GET", f"/v1/tasks/{theirs['id']}", None),
        ("GET", f"/v1/tasks?device={OTHER}", None),
        ("POST", "/v1/daemons/register", register("127.0.0.10:5555", "host-a")),
    ):
        answer = plane.call("sims", method, path, json=body)
        assert answer.status_code == 403, (method, path, answer.text)
    assert plane.ok("planner", "GET", f"/v1/tasks/{theirs['id']}")["task"]["state"] == "queued"
    events = plane.ok("sims", "GET", "/v1/events?after=0")["events"]
    assert {e["task_id"] for e in events} == {mine["id"]}
    # the wildcard keeps its meaning: any device
    claim = {"owner": f"host-c/{OTHER}", "device": OTHER, "task_id": theirs["id"]}
    assert plane.ok("any", "POST", "/v1/claims", json=claim)["task"]["id"] == theirs["id"]


def test_a_tokens_file_refuses_an_empty_device(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(f"tokens:\n  - sha256: {'a' * 64}\n    role: daemon\n    devices: ['']\n")
    path.chmod(0o600)
    with pytest.raises(TokensFileError, match=r"tokens\.0\.devices"):
        TokenBook.load(path)
