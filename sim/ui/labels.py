"""Package names, activities, labels and permission wording the screens print.

Sources:
- Activity names of Pixel apps: ``dumpsys activity`` captures in public issues, e.g.
  ``com.google.android.apps.nexuslauncher/.NexusLauncherActivity`` (openatx/uiautomator2
  issues), ``com.google.android.apps.messaging/.ui.ConversationListActivity``.
- Permission dialog package per release: AOSP moved GrantPermissionsActivity from
  ``com.android.packageinstaller`` (API 28, packages/apps/PackageInstaller) to the
  PermissionController APEX (API 29+); Pixels ship it as
  ``com.google.android.permissioncontroller`` with resource ids still in the
  ``com.android.permissioncontroller`` namespace (ids seen in Appium scripts).
- Permission group phrases: frameworks/base core/res/res/values/strings.xml
  ``permgroupdesc_*`` ("take pictures and record video", ...).
"""

from __future__ import annotations

LAUNCHER_PKG = "com.google.android.apps.nexuslauncher"
LAUNCHER_ACTIVITY = "com.google.android.apps.nexuslauncher.NexusLauncherActivity"
MESSAGING_PKG = "com.google.android.apps.messaging"
MESSAGING_LIST = "com.google.android.apps.messaging.ui.ConversationListActivity"
MESSAGING_CONVERSATION = "com.google.android.apps.messaging.ui.conversation.ConversationActivity"
SETTINGS_PKG = "com.android.settings"
SYSTEMUI_PKG = "com.android.systemui"

APP_LABELS: dict[str, str] = {
    LAUNCHER_PKG: "Pixel Launcher",
    MESSAGING_PKG: "Messages",
    SETTINGS_PKG: "Settings",
    SYSTEMUI_PKG: "System UI",
    "com.google.android.dialer": "Phone",
    "com.google.android.GoogleCamera": "Camera",
}

# Launcher entry point (MAIN/LAUNCHER) of each app the simulated phone ships.
LAUNCH_ACTIVITIES: dict[str, str] = {
    LAUNCHER_PKG: LAUNCHER_ACTIVITY,
    MESSAGING_PKG: MESSAGING_LIST,
    SETTINGS_PKG: "com.android.settings.Settings",
}

# Runtime permission -> what the dialog says the app wants to do.
PERMISSION_PHRASES: dict[str, str] = {
    "android.permission.CAMERA": "take pictures and record video",
    "android.permission.RECORD_AUDIO": "record audio",
    "android.permission.ACCESS_FINE_LOCATION": "access this device's location",
    "android.permission.READ_CONTACTS": "access your contacts",
    "android.permission.SEND_SMS": "send and view SMS messages",
    "android.permission.READ_SMS": "send and view SMS messages",
    "android.permission.CALL_PHONE": "make and manage phone calls",
    "android.permission.POST_NOTIFICATIONS": "send you notifications",
}
# Permissions whose dialog offers "While using the app" / "Only this time" (API 30+).
FOREGROUND_ONLY = {
    "android.permission.CAMERA",
    "android.permission.RECORD_AUDIO",
    "android.permission.ACCESS_FINE_LOCATION",
}


# The labels in other languages, by language (the apps' ``res/values-LANG`` strings):
# Settings ``settings_label`` (AOSP packages/apps/Settings, values-ru "Настройки", values-ko
# "설정"); Messages ``app_name`` (values-ru "Сообщения", values-ko "메시지"); the simulated
# third-party notes app ships its own.
LOCALIZED_LABELS: dict[str, dict[str, str]] = {
    SETTINGS_PKG: {"ru": "Настройки", "ko": "설정"},
    MESSAGING_PKG: {"ru": "Сообщения", "ko": "메시지"},
    "com.example.notes": {"ru": "Заметки", "ko": "메모"},
}


def app_label(package: str, locale: str | None = None) -> str:
    """The label the launcher and Settings show for ``package``, in ``locale``'s language
    when the app ships one (``ru-RU`` -> ``ru``), else its default (English) label."""
    language = (locale or "").replace("_", "-").split("-")[0].lower()
    translated = LOCALIZED_LABELS.get(package, {}).get(language)
    if translated is not None:
        return translated
    if package in APP_LABELS:
        return APP_LABELS[package]
    last = package.rsplit(".", 1)[-1]
    return last[:1].upper() + last[1:]


def permission_controller(sdk: int) -> tuple[str, str, str]:
    """(window package, activity class, resource-id namespace) of the permission dialog."""
    if sdk < 29:
        pkg = "com.android.packageinstaller"
        return pkg, f"{pkg}.permission.ui.GrantPermissionsActivity", pkg
    return (
        "com.google.android.permissioncontroller",
        "com.android.permissioncontroller.permission.ui.GrantPermissionsActivity",
        "com.android.permissioncontroller",
    )


def short_component(package: str, cls: str) -> str:
    """``ComponentName.flattenToShortString``: ``pkg/.Cls`` when the class is in the package."""
    if cls.startswith(package + "."):
        return f"{package}/{cls[len(package) :]}"
    return f"{package}/{cls}"
