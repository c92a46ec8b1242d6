"""Control queries: planning context freshness and ingress classification."""

from __future__ import annotations

from pathlib import Path

from phoned.daemon.lifecycle.contract import validate_task
from phoned.daemon.planning.classify import classify_ingress
from phoned.daemon.planning.context import DeviceContext, Observed, planning_context
from phoned.daemon.store.sqlite_store import SqliteStore


class FakeProvider:
    def device_context(self, serial: str) -> DeviceContext:
        return DeviceContext(
            serial=serial,
            sdk=Observed(34, 100.0, "getprop ro.build.version.sdk"),
            dnd_mode=Observed("off", 10.0, "settings get global zen_mode"),
        )


def test_planning_context_flags_stale_and_missing_values(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "q.db"))
    try:
        store.submit(
            validate_task({"method": "dnd.get", "conversation_id": "c", "device": "S"}), 1.0
        )
        ctx = planning_context(FakeProvider(), store, "S", now=120.0, max_age_s=60)
        assert ctx.device.sdk is not None and ctx.device.sdk.observed_at == 100.0
        assert ctx.stale == ("dnd_mode",)
        assert "bluetooth_on" in ctx.missing and "sdk" not in ctx.missing
        assert ctx.queue["queued"] == 1
    finally:
        store.close()


def test_classify_ingress_without_side_effects() -> None:
    send = {"method": "sms.send", "params": {"to": "112", "body": "x"}, "conversation_id": "c"}
    verdict = classify_ingress(send, frozenset({"sms.send"}))
    assert (verdict.accepted, verdict.kind, verdict.needs_approval, verdict.supported) == (
        True, "task", True, True,
    )  # fmt: skip
    unsupported = classify_ingress(send, frozenset({"dnd.get"}))
    assert not unsupported.accepted and unsupported.unsupported == ("sms.send",)
    bad = classify_ingress({"method": "dnd.set", "params": {}, "conversation_id": "c"})
    assert not bad.accepted and bad.errors[0]["field"] == "params.mode"
