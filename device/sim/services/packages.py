"""Package manager model: installed packages, runtime permissions, roles; ``pm``, ``cmd package``,
``cmd role``, ``dumpsys package``. (Owner: packages/audio/SMS work; stub until filled.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from device.sim.phone import Phone

SMS_PACKAGE = "com.google.android.apps.messaging"


class PackageManager:
    """Installed packages with their runtime-permission grants and the role holders."""

    def __init__(self, phone: Phone) -> None:
        self.phone = phone

    def is_installed(self, package: str) -> bool:
        raise NotImplementedError

    def is_granted(self, package: str, permission: str) -> bool:
        raise NotImplementedError

    def grant(self, package: str, permission: str) -> None:
        raise NotImplementedError

    def revoke(self, package: str, permission: str) -> None:
        raise NotImplementedError

    def default_sms_package(self) -> str | None:
        """The holder of ``android.app.role.SMS`` (or ``sms_default_application`` below API 29)."""
        raise NotImplementedError
