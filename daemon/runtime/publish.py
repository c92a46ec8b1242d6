"""Announcing a phone to the queue: its supported methods and planning context.

``WorkerStore.register_device`` takes them; a control plane answers ``/v1/classify`` and
``/v1/devices/{serial}/context`` from them, an embedded queue keeps nothing (its
``phoned context`` and ``classify --serial`` read the phone themselves). The context is
read only when the store asks for it, with the launchable apps (the plane gives them only
to a caller asking ``apps=true``).
"""

from __future__ import annotations

import logging

from phoned.daemon.lifecycle.errors import LifecycleError
from phoned.daemon.planning.device_context import context_json, read_context, supported_methods
from phoned.daemon.store.protocol import WorkerStore
from phoned.device.connection import Device
from phoned.device.errors import DeviceError

log = logging.getLogger("phoned.publish")


def publish_device(store: WorkerStore, daemon_id: str, device: Device) -> bool:
    """Register ``device`` with its methods (and context); False when that failed."""

    try:
        methods = sorted(supported_methods(device.capabilities))
        store.register_device(
            daemon_id, device.serial, methods, lambda: context_json(read_context(device, apps=True))
        )
    except (DeviceError, LifecycleError) as exc:
        log.warning("could not publish %s: %s", device.serial, exc)
        return False
    return True
