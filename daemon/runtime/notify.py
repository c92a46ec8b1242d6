"""systemd notifications (``Type=notify``): READY, STATUS, WATCHDOG, STOPPING.

Speaks the ``sd_notify`` datagram protocol on ``$NOTIFY_SOCKET`` directly; outside systemd
(no socket) every call is a no-op. ``watchdog_interval()`` is half of ``$WATCHDOG_USEC``.
"""

from __future__ import annotations

import os
import socket


class Notifier:
    """Sends state lines to the service manager, if there is one."""

    def __init__(self, environ: dict[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        if address.startswith("@"):  # abstract namespace
            address = "\0" + address[1:]
        self._address = address
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        mine = not pid or pid == str(os.getpid())
        self.watchdog_usec = int(usec) if usec.isdigit() and mine else 0

    @property
    def enabled(self) -> bool:
        return bool(self._address)

    def watchdog_interval(self) -> float | None:
        """Seconds between WATCHDOG=1 pings, or None when no watchdog is configured."""
        return self.watchdog_usec / 2_000_000 if self.watchdog_usec else None

    def send(self, *lines: str) -> bool:
        """Send ``KEY=value`` lines; False when there is no manager or it is unreachable."""
        if not self._address:
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.connect(self._address)
                sock.sendall("\n".join(lines).encode("utf-8"))
        except OSError:
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, status: str) -> bool:
        return self.send(f"STATUS={status}")

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def stopping(self, status: str = "") -> bool:
        return self.send("STOPPING=1", *([f"STATUS={status}"] if status else []))
