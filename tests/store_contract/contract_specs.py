"""Valid task specs for the store contract suite."""

from __future__ import annotations

from typing import Any

from phoned.daemon.lifecycle.contract import TaskSpec, validate_task


def spec(method: str = "dnd.set", conversation: str = "conv-a", **extra: Any) -> TaskSpec:
    """A valid task spec; ``params`` default to a valid set for the method."""
    defaults: dict[str, dict[str, Any]] = {
        "dnd.set": {"mode": "priority"},
        "sms.send": {"to": "+4915112345678", "body": "Буду через десять минут"},
        "sms.draft": {"to": "+4915112345678", "body": "draft"},
        "volume.set": {"stream": "music", "percent": 40},
        "bluetooth.set": {"enabled": True},
    }
    raw: dict[str, Any] = {"method": method, "conversation_id": conversation}
    raw["params"] = extra.pop("params", defaults.get(method, {}))
    raw.update(extra)
    return validate_task(raw)
