"""Publishing a phone to a control plane: its supported methods and planning context.

Only stores that serve planners remotely (``HttpStore``) take these reports; the embedded
stores answer context queries by reading the phone themselves (``phoned context``).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol, runtime_checkable

from daemon.lifecycle.errors import LifecycleError
from device.connection import Device
from device.errors import DeviceError

log = logging.getLogger("phoned.publish")


@runtime_checkable
class DevicePublisher(Protocol):
    """A store that wants to know which phones a daemon serves and what they look like."""

    def register(self, daemon_id: str, devices: dict[str, list[str]]) -> None: ...

    def report_context(self, serial: str, context: dict[str, Any]) -> None: ...


def publish_device(store: Any, daemon_id: str, device: Device) -> bool:
    """Register ``device`` with its methods and report its context; False if not wanted."""
    if not isinstance(store, DevicePublisher):
        return False
    from daemon.device_context import context_json, read_context, supported_methods

    try:
        methods = sorted(supported_methods(device.capabilities))
        store.register(daemon_id, {device.serial: methods})
        store.report_context(device.serial, context_json(read_context(device)))
    except (DeviceError, LifecycleError) as exc:
        log.warning("could not publish %s: %s", device.serial, exc)
        return False
    return True
