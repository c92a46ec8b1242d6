"""The simulated phone: ``PhoneState`` with every declared service's model made and wired.

``Phone`` is what a test, a scenario or ``phoned sim`` creates. The state every domain
shares lives in ``phone_state``; each module of ``services/*`` and ``ui/*`` that holds a
model declares it (``SIM_SERVICE``), and ``Phone`` makes one per phone and hands it to the
state (``add_service``). Tools see only ``PhoneState`` and reach a model as
``phone.service(Model)``; the shorthands below (``phone.sms``) are for callers above the
simulator's packages.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from phoned.sim.android.audio import AudioService
from phoned.sim.android.battery import Battery
from phoned.sim.android.bluetooth import BluetoothAdapter
from phoned.sim.android.notification import NotificationService
from phoned.sim.android.packages import PackageManager
from phoned.sim.android.sms import SmsProvider
from phoned.sim.android.wifi import WifiRadio
from phoned.sim.phone_state import CommandLog, Faults, FileSystem, PhoneState, Settings
from phoned.sim.shell.registry import sim_services
from phoned.sim.ui.model import Ui

# Re-exported: callers above the simulator import the shared pieces with ``Phone``.
__all__ = ["CommandLog", "Faults", "FileSystem", "Phone", "Settings"]

M = TypeVar("M")


class Phone(PhoneState):
    """One simulated Android phone: shared state plus the domain models.

    ``drop_connection()`` asks every transport serving this phone to close its socket
    abruptly (the fault "phone fell off the bus").
    """

    # Shorthands for the services' models most callers use (each declared by its module's
    # ``SIM_SERVICE``); any model, these and new ones alike, is ``phone.service(Model)``.
    packages: PackageManager
    notification: NotificationService
    bluetooth: BluetoothAdapter
    audio: AudioService
    sms: SmsProvider
    battery: Battery
    wifi: WifiRadio
    ui: Ui

    def __init__(
        self, sdk: int = 34, serial: str = "SIM0001", log_path: Path | None = None
    ) -> None:
        super().__init__(sdk, serial, log_path)
        self._attrs: dict[type, str] = {}
        for part in sim_services():
            self._attrs[part.model] = part.attr
            self.add_service(part.model, part.make(self))

    def add_service(self, kind: type[M], model: M) -> None:
        """Keep ``model`` as ``service(kind)`` and as its shorthand (``phone.wifi``); a test
        swaps in a fake this way (a subclass of ``kind``), and every tool then sees it."""
        super().add_service(kind, model)
        setattr(self, self._attrs[kind], model)
