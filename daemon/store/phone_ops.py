"""The operations on who serves which phone: the phone holds (``phoned.daemon.store.holds``),
the presence rows (``phoned.daemon.store.presence``) and a daemon's device registration.

They are operations as the task's are (``phoned.daemon.lifecycle.ops``): a store applies them
(``apply``), the named verbs of ``phoned.daemon.store.protocol`` build them, and the ones a
control plane takes carry their route and wire form. They live here, not in the
lifecycle, because they carry the store's records (``Holder``).

* ``HoldPhone``: ``PUT /v1/devices/{serial}/hold``, answering the phone's ``Holder``;
* ``ReleasePhone``: ``POST /v1/devices/{serial}/release``;
* ``RegisterDevice``: ``POST /v1/daemons/register`` (then the device's context);
* ``MarkPresence``, ``ForgetPresence``: not on the wire, a plane learns a daemon's
  presence from its claims (``TouchPresence``, applied by the plane to its own queue).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from phoned.daemon.lifecycle.operation import Delivery, Op
from phoned.daemon.store.holds import Holder


@dataclass(frozen=True)
class HoldPhone(Op[Holder]):
    """Take or renew the hold on ``want.serial`` until ``want.expires_at`` (``want.since``
    is now); the phone's holder afterwards, another's when it holds the phone (refused:
    nothing changed). On the wire the plane times it by its own clock (``hold_s``)."""

    # never spooled: no phone is driven on a hold the plane did not grant
    offline: ClassVar[Delivery] = "direct"
    route: ClassVar[str] = "/v1/devices/{serial}/hold"
    method: ClassVar[str] = "PUT"
    answer_key: ClassVar[str] = "hold"
    want: Holder

    def path(self) -> str:
        return self.route.format(serial=self.want.serial)

    def to_wire(self) -> dict[str, Any]:
        want = self.want
        return {"holder": want.holder, "host": want.host, "pid": want.pid,
                "command": want.command, "hold_s": round(want.expires_at - want.since, 3)}  # fmt: skip

    def answer_json(self, result: Holder) -> dict[str, Any]:
        return {"hold": result.to_json()}

    def answer_from(self, body: Mapping[str, Any]) -> Holder:
        return Holder.from_json(body["hold"])


@dataclass(frozen=True)
class ReleasePhone(Op[None]):
    """Give up the hold ``mine`` took; another holder's row is left alone."""

    offline: ClassVar[Delivery] = "direct"
    route: ClassVar[str] = "/v1/devices/{serial}/release"
    answer_key: ClassVar[str] = "serial"
    mine: Holder

    def path(self) -> str:
        return self.route.format(serial=self.mine.serial)

    def to_wire(self) -> dict[str, Any]:
        return {"holder": self.mine.holder, "host": self.mine.host, "pid": self.mine.pid}

    def answer_json(self, result: None) -> dict[str, Any]:
        return {"serial": self.mine.serial}

    def answer_from(self, body: Mapping[str, Any]) -> None:
        return None


@dataclass(frozen=True)
class RegisterDevice(Op[None]):
    """This daemon serves ``serial`` with ``methods``; ``context`` reads its planning
    context (``daemon.device_context.context_json``) for a store that publishes it (a
    plane's ``/v1/classify`` and ``/v1/devices``; an embedded queue keeps nothing)."""

    route: ClassVar[str] = "/v1/daemons/register"
    offline: ClassVar[Delivery] = "direct"  # kept and sent again before the next claim
    answer_key: ClassVar[str] = "daemon_id"
    daemon_id: str
    serial: str
    methods: tuple[str, ...]
    context: Callable[[], dict[str, Any]] = field(compare=False)

    def to_wire(self) -> dict[str, Any]:
        device = {"serial": self.serial, "methods": sorted(self.methods)}
        return {"daemon_id": self.daemon_id, "devices": [device]}

    def answer_json(self, result: None) -> dict[str, Any]:
        return {"daemon_id": self.daemon_id, "devices": [self.serial]}

    def answer_from(self, body: Mapping[str, Any]) -> None:
        return None


class _Unrouted(Op[None]):
    """An operation no plane takes (``route`` "")."""

    route: ClassVar[str] = ""

    def to_wire(self) -> None:
        return None

    def answer_from(self, body: Mapping[str, Any]) -> None:
        return None


@dataclass(frozen=True)
class MarkPresence(_Unrouted):
    """This daemon serves ``serials`` and looked for work at ``now``; ``claimed`` holds its
    last claim per phone (``phoned.daemon.store.presence.mark``)."""

    offline: ClassVar[Delivery] = "local"  # the plane records presence from the claims
    daemon_id: str
    serials: tuple[str, ...]
    claimed: Mapping[str, float]
    now: float


@dataclass(frozen=True)
class ForgetPresence(_Unrouted):
    """This daemon stopped: it serves nothing any more."""

    offline: ClassVar[Delivery] = "local"
    daemon_id: str


@dataclass(frozen=True)
class TouchPresence(_Unrouted):
    """A control plane saw ``daemon_id`` look for work for ``serial`` (``claimed``: and
    claim a task), ``host`` being what the plane knows it by (``presence.touch``)."""

    daemon_id: str
    serial: str
    host: str
    now: float
    claimed: bool
