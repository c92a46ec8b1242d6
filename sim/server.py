"""``Simulator``: one simulated phone reachable by ``adb connect 127.0.0.1:PORT``.

Usage::

    with Simulator(sdk=34, port=7401) as sim:
        subprocess.run(["adb", "connect", sim.serial])
        phoned.sim.phone.faults.slow_ms = 200

``stop()`` then ``start()`` brings the phone back on the same port ("replug"); the phone's
state survives because it is the same ``Phone`` object.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from phoned.sim.adb.stream_services import ShellFactory, default_shell_factory
from phoned.sim.adb.transport import Transport
from phoned.sim.phone import Phone


class Simulator:
    """Owns a ``Phone`` and the transport that serves it on ``127.0.0.1:port``.

    ``port=0`` picks a free port at the first ``start()`` and keeps it for restarts.
    """

    def __init__(
        self,
        sdk: int = 34,
        port: int = 0,
        *,
        phone: Phone | None = None,
        serial: str = "SIM0001",
        log_path: Path | None = None,
        shell_factory: ShellFactory = default_shell_factory,
    ) -> None:
        self.phone = (
            phone if phone is not None else Phone(sdk=sdk, serial=serial, log_path=log_path)
        )
        self._port = port
        self._shell_factory = shell_factory
        self._transport: Transport | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def serial(self) -> str:
        """What the adb server calls this phone: ``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        return self._transport is not None

    def start(self) -> Simulator:
        """Listen for adb servers; a no-op when already running."""
        if self._transport is None:
            transport = Transport(self.phone, self._port, shell_factory=self._shell_factory)
            transport.start()
            self._port = transport.port
            self._transport = transport
        return self

    def stop(self) -> None:
        """Stop listening and drop every connection (the host sees a reset)."""
        if self._transport is not None:
            self._transport.stop()
            self._transport = None

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
