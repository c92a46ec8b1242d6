"""The action contract with a handler-function fake device: no adb, no simulator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from phoned.device.actions import Status, execute, reconcile
from phoned.device.actions.base import ActionContext
from phoned.device.adb import ShellResult
from phoned.device.connection import Capabilities, DeviceIdentity
from phoned.device.errors import DeviceOffline, TransportLost
from phoned.device.evidence import Recorder
from phoned.device.methods.volume import percent_to_level

Handler = Callable[[tuple[str, ...]], tuple[str, int]]


@dataclass
class FakeDevice:
    """Answers each argv through ``handler``; records every argv it was given."""

    handler: Handler
    sdk: int = 34
    set_dnd: bool = True
    calls: list[tuple[str, ...]] = field(default_factory=list)
    serial: str = "FAKE"

    @property
    def identity(self) -> DeviceIdentity:
        return DeviceIdentity(self.serial, "Pixel", "Google", self.sdk, "14", "fp")

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            {
                "shell_v2": True,
                "set_dnd": self.set_dnd,
                "cmd_bluetooth_manager": True,
                "cmd_media_session": True,
                "services": frozenset(),
            }
        )

    def run(self, argv: Sequence[str], timeout: float = 10.0) -> ShellResult:
        self.calls.append(tuple(argv))
        out, code = self.handler(tuple(argv))
        return ShellResult(" ".join(argv), out.encode(), b"", code, 0.001)

    read = run


def _ctx(device: FakeDevice, method: str) -> ActionContext:
    return ActionContext(recorder=Recorder(device, method), poll_interval=0.01, settle_timeout=0.1)  # type: ignore[arg-type]


def _zen(value: str, set_dnd_reply: str = "") -> Handler:
    def handle(argv: tuple[str, ...]) -> tuple[str, int]:
        if argv[:2] == ("settings", "get"):
            return value + "\n", 0
        return set_dnd_reply, 0

    return handle


def test_unknown_method_raises_value_error() -> None:
    device = FakeDevice(_zen("0"))
    with pytest.raises(ValueError):
        execute("dnd.toggle", {}, _ctx(device, "dnd.toggle"))
    with pytest.raises(ValueError):
        reconcile("dnd.toggle", {}, _ctx(device, "dnd.toggle"))


def test_error_text_with_exit_zero_is_not_met() -> None:
    reply = "Error occurred. Check logcat for details. Invalid filter: 0\n"
    out = execute("dnd.set", {"mode": "priority"}, _ctx(FakeDevice(_zen("0", reply)), "dnd.set"))
    assert out.status is Status.NOT_MET
    assert out.detail == {"before": 0, "after": 0}


def test_below_api_29_is_unsupported_and_sends_nothing() -> None:
    device = FakeDevice(_zen("0"), sdk=28, set_dnd=False)
    out = execute("dnd.set", {"mode": "alarms"}, _ctx(device, "dnd.set"))
    assert out.status is Status.UNSUPPORTED
    assert device.calls == [("settings", "get", "global", "zen_mode")]


def test_offline_before_an_effect_propagates() -> None:
    def handle(argv: tuple[str, ...]) -> tuple[str, int]:
        raise DeviceOffline("gone")

    ctx = _ctx(FakeDevice(handle), "dnd.set")
    with pytest.raises(DeviceOffline):
        execute("dnd.set", {"mode": "alarms"}, ctx)
    assert ctx.started_effects == []


def test_transport_lost_after_an_effect_is_unknown_and_journaled() -> None:
    def handle(argv: tuple[str, ...]) -> tuple[str, int]:
        if argv[:2] == ("cmd", "notification"):
            raise TransportLost("cable pulled")
        return "0\n", 0

    ctx = _ctx(FakeDevice(handle), "dnd.set")
    out = execute("dnd.set", {"mode": "alarms"}, ctx)
    assert out.status is Status.UNKNOWN
    assert out.detail["reconcile"]["method"] == "dnd.set"
    entries = list(ctx.journal.entries.values())  # type: ignore[attr-defined]
    assert [e["outcome"] for e in entries] == ["unknown"]
    assert out.evidence.commands[-1].exit_code is None


def test_gate_refusal_stops_the_effect() -> None:
    class Refused(Exception):
        pass

    def gate(action: str) -> None:
        raise Refused(action)

    device = FakeDevice(_zen("0"))
    ctx = _ctx(device, "dnd.set")
    ctx.gate = gate
    with pytest.raises(Refused):
        execute("dnd.set", {"mode": "alarms"}, ctx)
    assert not [c for c in device.calls if c[0] == "cmd"]


def test_sensitive_values_never_reach_the_evidence() -> None:
    device = FakeDevice(_zen("0"))
    rec = Recorder(device, "sms.draft")  # type: ignore[arg-type]
    rec.add_sensitive("+15551234567", "secret body")
    rec.run(("am", "start", "-d", "smsto:+15551234567", "--es", "sms_body", "secret body"))
    rec.observe("compose", {"text": "secret body"}, "after", ("uiautomator", "dump"))
    text = str(rec.evidence({"expected": {"compose_text": "secret body"}}).to_json())
    assert "secret body" not in text and "5551234567" not in text
    assert "<text 11 chars sha256:" in text and "<number •••4567>" in text


@pytest.mark.parametrize(
    ("percent", "low", "high", "level"),
    [(0, 0, 15, 0), (100, 0, 15, 15), (50, 0, 15, 8), (50, 0, 7, 4), (10, 1, 5, 1), (40, 1, 7, 3)],
)
def test_percent_maps_onto_the_device_range(
    percent: float, low: int, high: int, level: int
) -> None:
    assert percent_to_level(percent, low, high) == level


def test_get_reports_value_with_evidence() -> None:
    out = execute("dnd.get", {}, _ctx(FakeDevice(_zen("3")), "dnd.get"))
    assert out.status is Status.MET and out.value == "alarms"
    obs: Any = out.evidence.observations[0]
    assert obs.command == ("settings", "get", "global", "zen_mode") and obs.value == 3
