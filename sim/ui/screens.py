"""The screens of the simulated phone, as declarative view trees (see ``views.py``).

Each builder turns an ``ActivityRecord`` (which activity, and its per-screen state such as
the composer's recipient and body) into a ``Window`` laid out on a 1080x2400 portrait
display. Resource ids are the real ones where public automation scripts show them:

- Messages' conversation list: ``start_new_conversation_button`` (Appium page objects for
  Google Messages found by code search). Its conversation screen, both generations, is the
  Google Messages variant's (``sim/variants/google_messages.py``), as every SMS app's is.
- Permission dialog: ``permission_message``, ``permission_allow_button``,
  ``permission_allow_foreground_only_button``, ``permission_allow_one_time_button``,
  ``permission_deny_button``, ``permission_deny_and_dont_ask_again_button``
  (AOSP packages/modules/Permission PermissionController ``grant_permissions.xml``).
- Keyguard / status bar: ``com.android.systemui:id/clock``, ``keyguard_indication_text``
  (AOSP frameworks/base packages/SystemUI res/layout ``status_bar.xml``,
  ``keyguard_bottom_area.xml``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from phoned.sim.ui import labels, notes_app
from phoned.sim.ui.views import View, Window

WIDTH, HEIGHT = 1080, 2400
STATUS_BAR_BOTTOM = 118  # 45dp at 420dpi (2.625 px/dp)
NAV_BAR_TOP = 2337  # gesture navigation handle, 24dp


@dataclass
class ActivityRecord:
    """One activity on the back stack, with the state its screen shows."""

    package: str
    cls: str
    state: dict[str, str] = field(default_factory=dict)

    @property
    def component(self) -> str:
        return labels.short_component(self.package, self.cls)


@dataclass(frozen=True)
class ScreenContext:
    """What a screen needs to know about the rest of the phone."""

    sdk: int
    clock: str  # "HH:MM"
    installed: tuple[str, ...]
    secure_settings: dict[str, str]
    listener_apps: tuple[tuple[str, str], ...]  # (package, listener component)
    locale: str = "en-US"  # persist.sys.locale: the language the apps draw their words in
    sims: int = 1  # SIM cards in the phone
    per_sim_send: bool = False  # Samsung Messages draws a send button per SIM (older builds)
    options: dict[str, str] = field(default_factory=dict)  # variants' switches (Ui.app_options)
    # the locale's country, in which AOSP Messaging formats a number that is no contact
    # (PhoneUtils.formatForDisplay uses getLocaleCountry): sim/android/phone_numbers.py
    region: str = "US"


def app_frame(package: str, children: list[View]) -> View:
    """The DecorView-like root every app window has."""
    content = View(
        "android.widget.FrameLayout",
        (0, 0, WIDTH, HEIGHT),
        resource_id="android:id/content",
        children=children,
    )
    return View(
        "android.widget.FrameLayout",
        (0, 0, WIDTH, HEIGHT),
        children=[View("android.widget.LinearLayout", (0, 0, WIDTH, HEIGHT), children=[content])],
    )


def toolbar(package: str, title: str) -> View:
    """An app's ``toolbar`` with its title, under the status bar."""
    return View(
        "android.view.ViewGroup",
        (0, STATUS_BAR_BOTTOM, WIDTH, 265),
        resource_id=f"{package}:id/toolbar",
        children=[View("android.widget.TextView", (189, 160, 900, 224), text=title)],
    )


def _row(
    y: int, title: str, summary: str = "", *, switch: bool | None = None, action: str | None = None
) -> View:
    """A Settings preference row; with ``switch`` it carries a checkable Switch."""
    children = [
        View(
            "android.widget.TextView",
            (189, y + 40, 880, y + 100),
            resource_id="android:id/title",
            text=title,
        )
    ]
    if summary:
        children.append(
            View(
                "android.widget.TextView",
                (189, y + 100, 880, y + 150),
                resource_id="android:id/summary",
                text=summary,
            )
        )
    if switch is not None:
        children.append(
            View(
                "android.widget.Switch",
                (906, y + 60, 1038, y + 130),
                resource_id="android:id/switch_widget",
                checkable=True,
                checked=switch,
                focusable=True,
            )
        )
    return View(
        "android.widget.LinearLayout",
        (0, y, WIDTH, y + 190),
        clickable=True,
        focusable=True,
        action=action,
        children=children,
    )


def launcher(rec: ActivityRecord, ctx: ScreenContext) -> View:
    apps = [labels.MESSAGING_PKG, labels.SETTINGS_PKG]
    apps += [p for p in ctx.installed if p not in apps and p in labels.LAUNCH_ACTIVITIES]
    icons = []
    for i, pkg in enumerate(apps[:4]):
        left = 40 + i * 250
        name = labels.app_label(pkg)
        icons.append(
            View(
                "android.widget.TextView",
                (left, 1900, left + 250, 2150),
                text=name,
                desc=name,
                clickable=True,
                long_clickable=True,
                focusable=True,
                action=f"launch:{pkg}",
            )
        )
    hotseat = View(
        "android.view.View",
        (0, 1880, WIDTH, 2170),
        resource_id=f"{rec.package}:id/hotseat",
        children=icons,
    )
    workspace = View(
        "android.widget.ScrollView",
        (0, STATUS_BAR_BOTTOM, WIDTH, 1880),
        resource_id=f"{rec.package}:id/workspace",
        scrollable=True,
    )
    return app_frame(rec.package, [workspace, hotseat])


def conversation_list(rec: ActivityRecord, ctx: ScreenContext) -> View:
    pkg = rec.package
    fab = View(
        "android.widget.Button",
        (620, 2150, 1040, 2300),
        text="Start chat",
        resource_id=f"{pkg}:id/start_new_conversation_button",
        clickable=True,
        focusable=True,
        action="new_conversation",
    )
    listing = View(
        "androidx.recyclerview.widget.RecyclerView",
        (0, 265, WIDTH, 2337),
        resource_id=f"{pkg}:id/conversation_list",
        scrollable=True,
        focusable=True,
    )
    return app_frame(pkg, [toolbar(pkg, "Messages"), listing, fab])


def _settings_page(rec: ActivityRecord, title: str, rows: list[View]) -> View:
    pkg = rec.package
    listing = View(
        "androidx.recyclerview.widget.RecyclerView",
        (0, 265, WIDTH, 2337),
        resource_id=f"{pkg}:id/recycler_view",
        scrollable=True,
        focusable=True,
        children=rows,
    )
    return app_frame(pkg, [toolbar(pkg, title), listing])


def _colon_list(value: str | None) -> list[str]:
    return [item for item in (value or "").split(":") if item]


def _access_rows(ctx: ScreenContext, setting: str, by_component: bool, action: str) -> list[View]:
    """One switch per listener app, on when the app (its listener component when
    ``by_component``) is in the secure setting's colon list; a tap runs ``action:<it>``."""
    enabled = _colon_list(ctx.secure_settings.get(setting))
    rows = []
    for i, (pkg, comp) in enumerate(ctx.listener_apps):
        key = comp if by_component else pkg
        rows.append(
            _row(
                265 + 190 * i,
                labels.app_label(pkg),
                switch=key in enabled,
                action=f"{action}:{key}",
            )
        )
    return rows


def notification_access(rec: ActivityRecord, ctx: ScreenContext) -> View:
    rows = _access_rows(ctx, "enabled_notification_listeners", True, "toggle_listener")
    title = "Device & app notifications" if ctx.sdk >= 31 else "Notification access"
    return _settings_page(rec, title, rows)


def zen_access(rec: ActivityRecord, ctx: ScreenContext) -> View:
    setting = "enabled_notification_policy_access_packages"
    rows = _access_rows(ctx, setting, False, "toggle_zen_access")
    return _settings_page(rec, "Do Not Disturb access", rows)


def app_details(rec: ActivityRecord, ctx: ScreenContext) -> View:
    target = rec.state.get("package", "")
    rows = [
        _row(265, labels.app_label(target), target),
        _row(455, "Notifications"),
        _row(645, "Permissions", action=None),
        _row(835, "Force stop", action=f"force_stop:{target}"),
    ]
    return _settings_page(rec, "App info", rows)


def bluetooth(rec: ActivityRecord, ctx: ScreenContext) -> View:
    return _settings_page(rec, "Bluetooth", [_row(265, "Use Bluetooth", switch=False)])


def zen_mode(rec: ActivityRecord, ctx: ScreenContext) -> View:
    return _settings_page(rec, "Do Not Disturb", [_row(265, "Do Not Disturb", switch=False)])


def settings_home(rec: ActivityRecord, ctx: ScreenContext) -> View:
    rows = [
        _row(265 + 190 * i, name)
        for i, name in enumerate(
            ["Network & internet", "Connected devices", "Apps", "Notifications"]
        )
    ]
    return _settings_page(rec, "Settings", rows)


def notes_main(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """The third-party notes app's editor (``notes_app.py``)."""
    title = toolbar(rec.package, notes_app.label(ctx.locale))
    return app_frame(rec.package, [title, *notes_app.main_screen(rec.state, ctx.locale)])


def notes_list(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """The notes app's scrollable list (``notes_app.py``)."""
    title = toolbar(rec.package, notes_app.words(ctx.locale)["list"])
    return app_frame(rec.package, [title, *notes_app.list_screen(rec.state, ctx.locale)])


def blank_app(rec: ActivityRecord, ctx: ScreenContext) -> View:
    """Any other app: its label in a toolbar over an empty content area."""
    return app_frame(rec.package, [toolbar(rec.package, labels.app_label(rec.package))])


Builder = Callable[[ActivityRecord, ScreenContext], View]

BUILDERS: dict[str, Builder] = {
    labels.LAUNCHER_ACTIVITY: launcher,
    labels.MESSAGING_LIST: conversation_list,
    notes_app.MAIN: notes_main,
    notes_app.LIST: notes_list,
    "com.android.settings.Settings": settings_home,
    "com.android.settings.Settings$NotificationAccessSettingsActivity": notification_access,
    "com.android.settings.Settings$ZenAccessSettingsActivity": zen_access,
    "com.android.settings.applications.InstalledAppDetails": app_details,
    "com.android.settings.Settings$BluetoothSettingsActivity": bluetooth,
    "com.android.settings.Settings$ZenModeSettingsActivity": zen_mode,
}


def app_window(rec: ActivityRecord, ctx: ScreenContext) -> Window:
    """The window of the activity ``rec``: its screen, owned by its package."""
    root = BUILDERS.get(rec.cls, blank_app)(rec, ctx)
    return Window(rec.package, root, rec.cls, rec.component)


def status_bar(ctx: ScreenContext) -> Window:
    """The systemui status bar with its clock (the text changes every minute)."""
    pkg = labels.SYSTEMUI_PKG
    clock = View(
        "android.widget.TextView",
        (63, 0, 200, STATUS_BAR_BOTTOM),
        resource_id=f"{pkg}:id/clock",
        text=ctx.clock,
        desc=ctx.clock,
    )
    battery = View(
        "android.widget.LinearLayout",
        (950, 0, 1030, STATUS_BAR_BOTTOM),
        resource_id=f"{pkg}:id/battery",
        desc="Battery 100 percent.",
    )
    root = View(
        "android.widget.FrameLayout", (0, 0, WIDTH, STATUS_BAR_BOTTOM), children=[clock, battery]
    )
    return Window(pkg, root, None, "StatusBar")


def keyguard(ctx: ScreenContext, secure: bool) -> Window:
    """The lock screen: big clock, and the hint to swipe up (or the secure-lock hint)."""
    pkg = labels.SYSTEMUI_PKG
    hint = "Swipe up to unlock" if not secure else "Swipe up to open"
    children = [
        View(
            "android.widget.TextView",
            (63, 0, 200, STATUS_BAR_BOTTOM),
            resource_id=f"{pkg}:id/clock",
            text=ctx.clock,
            desc=ctx.clock,
        ),
        View(
            "android.widget.TextView",
            (240, 500, 840, 760),
            resource_id=f"{pkg}:id/keyguard_clock_container",
            text=ctx.clock,
        ),
        View(
            "android.widget.TextView",
            (140, 2150, 940, 2230),
            resource_id=f"{pkg}:id/keyguard_indication_text",
            text=hint,
        ),
        View(
            "android.widget.ImageView",
            (480, 1950, 600, 2070),
            resource_id=f"{pkg}:id/lock_icon",
            desc="Device locked",
        ),
    ]
    root = View("android.widget.FrameLayout", (0, 0, WIDTH, HEIGHT), children=children)
    title = "NotificationShade" if ctx.sdk >= 30 else "StatusBar"
    return Window(pkg, root, None, title)


def permission_dialog(ctx: ScreenContext, app: str, permission: str) -> Window:
    """GrantPermissionsActivity over ``app``: message plus the buttons of this release."""
    pkg, cls, ns = labels.permission_controller(ctx.sdk)
    phrase = labels.PERMISSION_PHRASES.get(permission, "use this permission")
    message = f"Allow {labels.app_label(app)} to {phrase}?"
    buttons = _permission_buttons(ctx.sdk, permission)
    children = [
        View(
            "android.widget.TextView",
            (150, 900, 930, 1050),
            resource_id=f"{ns}:id/permission_message",
            text=message,
        )
    ]
    for i, (rid, text, action) in enumerate(buttons):
        top = 1100 + 150 * i
        children.append(
            View(
                "android.widget.Button",
                (150, top, 930, top + 130),
                resource_id=f"{ns}:id/{rid}",
                text=text,
                clickable=True,
                focusable=True,
                action=action,
            )
        )
    dialog = View(
        "android.widget.LinearLayout",
        (90, 820, 990, 1100 + 150 * len(buttons)),
        resource_id=f"{ns}:id/grant_dialog",
        children=children,
    )
    root = View("android.widget.FrameLayout", (0, 0, WIDTH, HEIGHT), children=[dialog])
    return Window(pkg, root, cls, labels.short_component(pkg, cls))


def _permission_buttons(sdk: int, permission: str) -> list[tuple[str, str, str]]:
    """(id, label, action) per button; labels from PermissionController strings.xml."""
    if sdk < 29:
        return [
            ("permission_deny_button", "DENY", "perm_deny"),
            ("permission_allow_button", "ALLOW", "perm_allow"),
        ]
    deny = "Don't allow" if sdk >= 31 else "Deny"
    if permission in labels.FOREGROUND_ONLY:
        return [
            ("permission_allow_foreground_only_button", "While using the app", "perm_allow"),
            ("permission_allow_one_time_button", "Only this time", "perm_allow"),
            ("permission_deny_button", deny, "perm_deny"),
        ]
    return [
        ("permission_allow_button", "Allow", "perm_allow"),
        ("permission_deny_button", deny, "perm_deny"),
    ]
