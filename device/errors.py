"""Errors of the device layer: one tree, library errors translated at the boundary.

::

    DeviceError
    ├── AdbServerError        the adb binary is missing or its server cannot be reached/started
    ├── DeviceNotFound        no such serial attached, no device at all, or more than one
    ├── DeviceUnauthorized    the phone has not accepted this computer's RSA key
    ├── DeviceOffline         the device is attached but not answering (state "offline")
    │   └── TransportLost     the connection dropped in the middle of a command
    ├── CommandTimeout        a command did not finish within its explicit timeout
    ├── UiAutomatorError      the uiautomator2 session failed (start, RPC, selector)
    ├── InputRefused          ``input`` was refused (MIUI without "USB debugging (Security
    │                         settings)"): the key or tap did nothing
    └── UiDumpFailed          no hierarchy could be read: ``uiautomator dump`` reported a
                              failure, or the text read back is not a hierarchy (raw kept)

Callers decide retries by class, never by message text: ``DeviceOffline`` and
``AdbServerError`` are transient; ``TransportLost`` on a command with an effect means the
outcome is unknown; ``UiDumpFailed`` means the screen could not be read, which an action
reports as ``not_met`` or ``cannot_tell`` with the raw output, never as a stale read. Every error that comes from adbutils, uiautomator2 or a socket is raised
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


class InputRefused(DeviceError):
    """The phone refused to inject a key or tap: nothing happened on the screen."""


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


class UiDumpFailed(DeviceError):
    """The window hierarchy could not be read; ``stdout``/``stderr`` keep what the phone said.

    ``path`` names the reader (``"uiautomator2"`` or ``"uiautomator dump"``) and ``reason``
    the detected failure (``"could not get idle state"``, ``"killed"``, ...).
    """

    def __init__(
        self,
        message: str,
        *,
        serial: str | None = None,
        path: str = "",
        reason: str = "",
        stdout: str = "",
        stderr: str = "",
        exit_code: int | None = None,
    ) -> None:
        super().__init__(message, serial=serial)
        self.path = path
        self.reason = reason
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code

    def to_json(self) -> dict[str, object]:
        """The raw evidence of the failure (texts cut to 2000 characters)."""
        return {
            "path": self.path,
            "reason": self.reason,
            "stdout": self.stdout[:2000],
            "stderr": self.stderr[:2000],
            "exit_code": self.exit_code,
        }
