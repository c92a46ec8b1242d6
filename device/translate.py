"""Library errors (adbutils, uiautomator2) mapped to the device error tree, at the boundary.

``translate`` is the one place a foreign exception becomes a ``DeviceError`` (its message
kept); the connection and the UI session both call it.
"""

from __future__ import annotations

from phoned.device.adb import map_failure
from phoned.device.errors import (
    AdbServerError,
    DeviceError,
    DeviceOffline,
    TransportLost,
    UiAutomatorError,
)


def translate(exc: BaseException, serial: str | None) -> DeviceError:
    """Map an adbutils or uiautomator2 exception to our tree (message kept)."""
    if isinstance(exc, DeviceError):
        return exc
    module = type(exc).__module__ or ""
    message = str(exc) or type(exc).__name__
    if module.startswith("uiautomator2"):
        return UiAutomatorError(f"uiautomator2: {message}", serial=serial)
    if isinstance(exc, (ConnectionError, EOFError)):
        return TransportLost(f"connection to {serial} lost: {message}", serial=serial)
    if module.startswith("adbutils"):
        return _translate_adbutils(exc, message, serial)
    return DeviceError(message, serial=serial)


def _translate_adbutils(exc: BaseException, message: str, serial: str | None) -> DeviceError:
    # lazy: adbutils is loaded only by the verbs that use it (start-up)
    from adbutils.errors import AdbConnectionError, AdbTimeout

    if isinstance(exc, AdbTimeout):
        return DeviceOffline(f"{serial}: adb timed out: {message}", serial=serial)
    if isinstance(exc, AdbConnectionError):
        return AdbServerError(message, serial=serial)
    return map_failure(message, serial)
