"""What is installed on the simulated phone: packages, the permissions they request, and
the platform permission definitions (protection level, the SDK that introduced them).

Package names follow Pixel factory images: the default SMS app is Google Messages
(``com.google.android.apps.messaging``); the permission controller is
``com.google.android.permissioncontroller`` on API 29+ (AOSP builds call it
``com.android.permissioncontroller``); on API 28 permission dialogs still belong to
``com.google.android.packageinstaller``. Protection levels come from
``core/res/AndroidManifest.xml`` of AOSP ``platform_frameworks_base``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

# Protection levels that matter to ``pm grant``: only "dangerous" (runtime) ones change.
DANGEROUS = "dangerous"
NORMAL = "normal"
SIGNATURE = "signature"

P = "android.permission."

# permission -> (protection, first SDK that defines it); core/res/AndroidManifest.xml
PERMISSIONS: dict[str, tuple[str, int]] = {
    P + "CAMERA": (DANGEROUS, 1),
    P + "RECORD_AUDIO": (DANGEROUS, 1),
    P + "READ_CONTACTS": (DANGEROUS, 1),
    P + "WRITE_CONTACTS": (DANGEROUS, 1),
    P + "GET_ACCOUNTS": (DANGEROUS, 1),
    P + "READ_PHONE_STATE": (DANGEROUS, 1),
    P + "CALL_PHONE": (DANGEROUS, 1),
    P + "READ_CALL_LOG": (DANGEROUS, 16),
    P + "SEND_SMS": (DANGEROUS, 1),
    P + "RECEIVE_SMS": (DANGEROUS, 1),
    P + "READ_SMS": (DANGEROUS, 1),
    P + "RECEIVE_MMS": (DANGEROUS, 1),
    P + "ACCESS_FINE_LOCATION": (DANGEROUS, 1),
    P + "ACCESS_COARSE_LOCATION": (DANGEROUS, 1),
    P + "READ_EXTERNAL_STORAGE": (DANGEROUS, 16),
    P + "WRITE_EXTERNAL_STORAGE": (DANGEROUS, 4),
    P + "POST_NOTIFICATIONS": (DANGEROUS, 33),
    P + "INTERNET": (NORMAL, 1),
    P + "ACCESS_NETWORK_STATE": (NORMAL, 1),
    P + "VIBRATE": (NORMAL, 1),
    P + "WAKE_LOCK": (NORMAL, 1),
    P + "RECEIVE_BOOT_COMPLETED": (NORMAL, 1),
    P + "FOREGROUND_SERVICE": (NORMAL, 28),
    # A normal install-time permission: declaring it is NOT DND access (that is the secure
    # list enabled_notification_policy_access_packages), yet dumpsys lists it granted=true.
    P + "ACCESS_NOTIFICATION_POLICY": (NORMAL, 23),
    P + "BIND_NOTIFICATION_LISTENER_SERVICE": (SIGNATURE, 18),
    P + "WRITE_SECURE_SETTINGS": (SIGNATURE, 3),
    P + "STATUS_BAR_SERVICE": (SIGNATURE, 1),
}


@dataclass(frozen=True)
class PackageSpec:
    """One installed package as the package manager knows it."""

    name: str
    app_id: int
    code_path: str  # directory (API 30+ layout) or the directory holding base.apk
    version_name: str
    version_code: int
    system: bool
    requested: tuple[str, ...]
    launch_activity: str | None = None  # "pkg/.Activity" (short form as ComponentName prints)
    services: tuple[str, ...] = ()
    target_sdk: int = 34
    min_sdk: int = 26
    role_holds: tuple[str, ...] = ()  # roles granted at first boot (API 29+)
    # activities without android:exported (or exported="false"): the shell may not start
    # them (ActivityTaskSupervisor.checkStartAnyActivityPermission), full class names
    private_activities: tuple[str, ...] = ()
    # VIEW intent filters: URL prefixes the app's deep-link activity handles (its LAUNCHER one)
    deep_links: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def identity(self) -> str:
        """Stable stand-in for Java's identity hash printed in ``Package [x] (hash):``."""
        return f"{zlib.crc32(self.name.encode()) & 0xFFFFFFF:x}"

    @property
    def apk(self) -> str:
        return f"{self.code_path}/base.apk"


def sms_perms(sdk: int) -> tuple[str, ...]:
    notif = (P + "POST_NOTIFICATIONS",) if sdk >= 33 else ()
    return (
        P + "SEND_SMS",
        P + "RECEIVE_SMS",
        P + "READ_SMS",
        P + "RECEIVE_MMS",
        P + "READ_CONTACTS",
        P + "READ_PHONE_STATE",
        P + "CALL_PHONE",
        P + "INTERNET",
        P + "ACCESS_NETWORK_STATE",
        P + "VIBRATE",
        P + "WAKE_LOCK",
        *notif,
    )


def _data_app_dir(sdk: int, name: str) -> str:
    """API 30+ installs under ``/data/app/~~<rand>==/<pkg>-<rand>==``; API 28 ``<pkg>-1``."""
    if sdk >= 30:
        return f"/data/app/~~kQ3mW8yZ1bN5vX7cR2tP4g==/{name}-Hn6sJd2LqP0aVt9ZcXe3Rw=="
    return f"/data/app/{name}-1"


def installed_packages(sdk: int) -> list[PackageSpec]:
    """The installed set of a Pixel of this SDK, in the order ``pm list packages`` prints."""
    controller = (
        "com.google.android.permissioncontroller"
        if sdk >= 29
        else "com.google.android.packageinstaller"
    )
    notif = (P + "POST_NOTIFICATIONS",) if sdk >= 33 else ()
    return [
        PackageSpec(
            "com.google.android.apps.messaging",
            10154,
            "/product/app/PrebuiltBugle",
            "20240501_02_RC00.phone_dynamic",
            203003640,
            True,
            sms_perms(sdk),
            "com.google.android.apps.messaging/.ui.ConversationListActivity",
            role_holds=("android.app.role.SMS",),
        ),
        PackageSpec(
            "com.android.settings",
            1000,
            "/system_ext/priv-app/SettingsGoogle",
            str(sdk),
            sdk,
            True,
            (P + "WRITE_SECURE_SETTINGS", P + "INTERNET"),
            "com.android.settings/.Settings",
        ),
        PackageSpec(
            controller,
            10122,
            "/apex/com.android.permission/priv-app/GooglePermissionController"
            if sdk >= 29
            else "/system/priv-app/GooglePackageInstaller",
            str(sdk),
            sdk,
            True,
            (P + "INTERNET",),
        ),
        PackageSpec(
            "com.android.systemui",
            10123,
            "/system_ext/priv-app/SystemUIGoogle",
            str(sdk),
            sdk,
            True,
            (P + "STATUS_BAR_SERVICE", P + "VIBRATE", *notif),
        ),
        PackageSpec(
            "com.google.android.apps.nexuslauncher",
            10160,
            "/system_ext/priv-app/NexusLauncherRelease",
            str(sdk),
            sdk,
            True,
            (P + "VIBRATE",),
            "com.google.android.apps.nexuslauncher/.NexusLauncherActivity",
        ),
        PackageSpec(
            "com.android.shell",
            2000,
            "/system/priv-app/Shell",
            str(sdk),
            sdk,
            True,
            (
                P + "READ_SMS",
                P + "SEND_SMS",
                P + "READ_CONTACTS",
                P + "READ_PHONE_STATE",
                P + "CALL_PHONE",
                P + "WRITE_SECURE_SETTINGS",
                P + "INTERNET",
            ),
        ),
        PackageSpec(
            "com.google.android.dialer",
            10158,
            "/product/app/GoogleDialer",
            "130.0.123",
            1300000,
            True,
            (
                P + "CALL_PHONE",
                P + "READ_CONTACTS",
                P + "READ_CALL_LOG",
                P + "READ_PHONE_STATE",
                P + "RECORD_AUDIO",
                *notif,
            ),
            "com.google.android.dialer/.extensions.GoogleDialtactsActivity",
            role_holds=("android.app.role.DIALER",),
        ),
        PackageSpec(
            "com.example.notes",
            10241,
            _data_app_dir(sdk, "com.example.notes"),
            "1.4.2",
            42,
            False,
            (P + "CAMERA", *notif, P + "ACCESS_NOTIFICATION_POLICY", P + "INTERNET"),
            "com.example.notes/.MainActivity",
            services=("com.example.notes/.NotesListenerService",),
            private_activities=("com.example.notes.internal.DebugActivity",),
            deep_links=("https://notes.example.com/", "http://notes.example.com/"),
            extra={"installerPackageName": "com.android.vending"},
        ),
    ]


def protection(permission: str, sdk: int) -> str | None:
    """The protection level of a permission defined on this SDK, None when unknown."""
    entry = PERMISSIONS.get(permission)
    if entry is None or entry[1] > sdk:
        return None
    return entry[0]
