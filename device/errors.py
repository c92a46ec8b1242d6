"""Errors of the device layer: one tree, library errors translated at the boundary.

::

    DeviceError
    ├── AdbServerError        the adb binary is missing or its server cannot be reached/started
    ├── DeviceNotFound        no such serial attached, no device at all, or more than one
    ├── DeviceUnauthorized    the phone has not accepted this computer's RSA key
    ├── DeviceOffline         the device is attached but not answering (state "offline")
    │   └── TransportLost     the connection dropped in the middle of a command
    ├── CommandTimeout        a command did not finish within its explicit timeout
    └── UiAutomatorError      the uiautomator2 session failed (start, RPC, selector)

Callers decide retries by class, never by message text: ``DeviceOffline`` and
``AdbServerError`` are transient; ``TransportLost`` on a command with an effect means the
outcome is unknown. Every error that comes from adbutils, uiautomator2 or a socket is raised
``from`` the original exception so the cause stays in the traceback.
"""

from __future__ import annotations


class DeviceError(Exception):
    """Base of every error the device layer raises."""

    def __init__(self, message: str, *, serial: str | None = None) -> None:
        super().__init__(message)
        self.serial = serial


class AdbServerError(DeviceError):
    """The adb server is not reachable and could not be started."""


class DeviceNotFound(DeviceError):
    """The requested device is not attached (or the choice of device is ambiguous)."""


class DeviceUnauthorized(DeviceError):
    """The phone lists this computer as unauthorized."""

    HINT = (
        "accept the 'Allow USB debugging?' prompt on the phone (tick 'Always allow from this "
        "computer'); if no prompt shows, revoke USB debugging authorisations in Developer "
        "options and reconnect the cable"
    )

    def __init__(self, message: str, *, serial: str | None = None) -> None:
        super().__init__(f"{message}: {self.HINT}", serial=serial)


class DeviceOffline(DeviceError):
    """The device is attached but does not answer."""


class TransportLost(DeviceOffline):
    """The connection to the device dropped before the command reported its exit code.

    The command may or may not have run on the phone.
    """


class CommandTimeout(DeviceError):
    """A command ran longer than its timeout; the stream was closed to stop it."""

    def __init__(self, message: str, *, serial: str | None = None, timeout: float = 0.0) -> None:
        super().__init__(message, serial=serial)
        self.timeout = timeout


class UiAutomatorError(DeviceError):
    """The uiautomator2 session could not start or a UI call failed."""
