"""Screen, keyguard, activities and windows of the simulated phone.

``Ui`` owns the display state (power, keyguard, rotation), the activity back stack and a
pending runtime-permission dialog, and turns them into windows (``screens.py``) that the
dumpers (``hierarchy.py``) and the screenshot renderer (``render.py``) draw. Input (taps,
swipes, keys, text) is dispatched here; cross-domain effects go through the documented
methods of other models: ``phone.sms.insert``, ``phone.packages.grant``/``is_granted``/
``is_installed``/``default_sms_package`` and ``phone.settings``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PIL import Image

from phoned.sim.android import phone_numbers
from phoned.sim.android.contacts import ContactsProvider
from phoned.sim.android.notification import NotificationService
from phoned.sim.android.packages import PackageManager
from phoned.sim.android.packages_catalog import PackageSpec
from phoned.sim.android.sms import SmsProvider
from phoned.sim.shell.registry import SimService
from phoned.sim.ui import apps, hierarchy, labels, notes_app, render, screens
from phoned.sim.ui.automation import UiAutomation
from phoned.sim.ui.intents import FLAG_ACTIVITY_NEW_TASK, Intent
from phoned.sim.ui.screens import ActivityRecord, ScreenContext
from phoned.sim.ui.sent_messages import SentEntry
from phoned.sim.ui.views import View, Window, find, find_by_id, hit

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

START_SUCCESS, START_TASK_TO_FRONT = 0, 2
START_INTENT_NOT_RESOLVED, START_CLASS_NOT_FOUND = -1, -2
START_PERMISSION_DENIED = -4  # ActivityManager.START_PERMISSION_DENIED: not exported
DEFAULT_LISTENER_APPS: tuple[tuple[str, str], ...] = (
    # A Pixel ships Android System Intelligence as a notification listener.
    (
        "com.google.android.as",
        "com.google.android.as/com.google.android.apps.miphone.aiai.common.notification"
        ".service.AiAiNotificationListenerService",
    ),
)
SETTINGS_ACTIONS: dict[str, str] = {
    "android.settings.ACTION_NOTIFICATION_LISTENER_SETTINGS": "com.android.settings.Settings$NotificationAccessSettingsActivity",
    "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS": "com.android.settings.Settings$ZenAccessSettingsActivity",
    "android.settings.APPLICATION_DETAILS_SETTINGS": "com.android.settings.applications.InstalledAppDetails",
    "android.settings.BLUETOOTH_SETTINGS": "com.android.settings.Settings$BluetoothSettingsActivity",
    "android.settings.ZEN_MODE_SETTINGS": "com.android.settings.Settings$ZenModeSettingsActivity",
    "android.settings.SETTINGS": "com.android.settings.Settings",
}
BUILTIN_PACKAGES = (
    labels.LAUNCHER_PKG,
    labels.MESSAGING_PKG,
    labels.SETTINGS_PKG,
    labels.SYSTEMUI_PKG,
)
SWIPE_UNLOCK_MIN_PX = 300


def conversation_activity(package: str) -> str:
    """The activity a ``SENDTO smsto:`` intent opens in SMS app ``package``: a variant's
    (``apps.MESSAGING_APPS``, e.g. Samsung Messages' WithActivity), else the built-in
    Messages' ConversationActivity."""
    app = apps.messaging_app(package)
    return app.conversation_activity if app else labels.MESSAGING_CONVERSATION


def _is_conversation(cls: str) -> bool:
    return cls == labels.MESSAGING_CONVERSATION or any(
        a.conversation_activity == cls for a in apps.MESSAGING_APPS.values()
    )


@dataclass(frozen=True)
class StartResult:
    """What ``startActivity`` answered: an ActivityManager START_* code and the record."""

    code: int
    record: ActivityRecord | None = None
    launch_state: str = "COLD"  # COLD / WARM / HOT (am start -W, API 29+)
    component: tuple[str, str] | None = None


class Ui:
    """What is on the screen: power/keyguard state, the activity stack, the window hierarchy."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self.screen_on = True
        self.locked = False
        self.secure_lock = False  # a PIN/pattern: swiping never unlocks (tests call unlock())
        self.rotation = 0
        self.size = (screens.WIDTH, screens.HEIGHT)
        self.density = int(phone.props.get("ro.sf.lcd_density", "420"))
        self.second_display: tuple[int, int] | None = None  # a cast/cover screen, unfocused
        self.work_profile_apps: set[str] = set()  # packages that run as user 10 (work profile)
        self.samsung_power = False  # dumpsys power prints getWakefulnessLocked()= only
        # Messages sends as a chat (RCS) message: "chat" (delivered after CHAT_SEND_S),
        # "chat-stuck" (stays "Sending…"), "chat-fail" ("Not sent"); None sends SMS.
        self.chat_send: str | None = None
        self.sims = 1  # SIM cards: slot N sends with subscription id N
        self.per_sim_send = False  # Samsung Messages draws send_button1 / send_button2
        # a variant's own switches, by variant name (``google-messages``: its screen
        # generation); its builders read them from ``ScreenContext.options``
        self.app_options: dict[str, str] = {}
        self.stack: list[ActivityRecord] = [
            ActivityRecord(labels.LAUNCHER_PKG, labels.LAUNCHER_ACTIVITY)
        ]
        self.running: set[str] = {labels.LAUNCHER_PKG, labels.SYSTEMUI_PKG}
        self.pending_permission: tuple[str, str] | None = None  # (app, permission)
        self.permission_requests: dict[str, str] = {}  # app -> permission it asks on open
        self.listener_apps: list[tuple[str, str]] = list(DEFAULT_LISTENER_APPS)
        self.clipboard: str | None = None
        self.last_toast: str | None = None
        # who holds UiAutomation, what the UI readers cost, injected dump/server failures
        self.automation = UiAutomation(phone)

    # ---- state read by the tools -------------------------------------------------------

    def top(self) -> ActivityRecord:
        return self.stack[-1]

    def context(self) -> ScreenContext:
        secure = self.phone.settings.tables["secure"]
        return ScreenContext(
            sdk=self.phone.sdk,
            clock=time.strftime("%H:%M", time.gmtime()),
            installed=tuple(p for p in labels.LAUNCH_ACTIVITIES if self.is_installed(p)),
            secure_settings=dict(secure),
            listener_apps=tuple(self.listener_apps),
            locale=self.phone.props.get("persist.sys.locale")
            or self.phone.props.get("ro.product.locale", "en-US"),
            region=phone_numbers.locale_country(
                self.phone.props.get("persist.sys.locale")
                or self.phone.props.get("ro.product.locale", "en-US")
            ),
            sims=self.sims,
            per_sim_send=self.per_sim_send,
            options=dict(self.app_options),
        )

    def windows(self) -> list[Window]:
        """The visible windows, bottom to top."""
        ctx = self.context()
        if self.locked:
            return [screens.keyguard(ctx, self.secure_lock)]
        stack = [screens.app_window(self.top(), ctx)]
        if self.pending_permission is not None:
            stack.append(screens.permission_dialog(ctx, *self.pending_permission))
        return [*stack, screens.status_bar(ctx)]

    def focused_window(self) -> Window:
        """The window with input focus: keyguard, dialog or the top activity."""
        windows = self.windows()
        apps = [w for w in windows if w.activity is not None]
        return apps[-1] if apps else windows[0]

    def hierarchy_xml(self, *, u2: bool, active_only: bool | None = None) -> str:
        """The hierarchy as ``uiautomator dump`` writes it (the active window) or the u2
        server does (every window, or with ``active_only`` its ``rootInActive`` dump)."""
        style = hierarchy.DumpStyle(
            u2=u2, sdk=self.phone.sdk, width=self.size[0], height=self.size[1]
        )
        active = not u2 if active_only is None else active_only
        with self.phone.lock:
            windows = [self.focused_window()] if active else self.windows()
            return hierarchy.dump(windows, self.rotation, style)

    def screenshot(self) -> Image.Image:
        with self.phone.lock:
            return render.render(self.windows(), self.size, self.screen_on)

    # ---- packages ----------------------------------------------------------------------

    def is_installed(self, package: str) -> bool:
        try:
            return self.phone.service(PackageManager).is_installed(package)
        except NotImplementedError:  # package model not filled yet: the stock apps exist
            return package in BUILTIN_PACKAGES

    def default_sms_package(self) -> str | None:
        try:
            return self.phone.service(PackageManager).default_sms_package()
        except NotImplementedError:
            return labels.MESSAGING_PKG

    def _is_granted(self, package: str, permission: str) -> bool:
        try:
            return self.phone.service(PackageManager).is_granted(package, permission)
        except NotImplementedError:
            return False

    # ---- activities --------------------------------------------------------------------

    def resolve(self, intent: Intent) -> tuple[str, str] | None:
        """The (package, activity) an intent starts, or None when nothing handles it."""
        if intent.component is not None:
            return intent.component
        action = intent.action or ""
        scheme = (intent.data or "").partition(":")[0].lower()
        if action in ("android.intent.action.SENDTO", "android.intent.action.VIEW") and scheme in (
            "sms",
            "smsto",
        ):
            sms = self.default_sms_package()
            return (sms, conversation_activity(sms)) if sms else None
        if action in SETTINGS_ACTIONS:
            return labels.SETTINGS_PKG, SETTINGS_ACTIONS[action]
        if "android.intent.category.HOME" in intent.categories:
            return labels.LAUNCHER_PKG, labels.LAUNCHER_ACTIVITY
        pkg = intent.package
        if pkg and not self._enabled(pkg):
            return None  # a disabled package's components never resolve
        if pkg and intent.data is not None:
            return self._deep_link(pkg, intent.data)
        if pkg and pkg in labels.LAUNCH_ACTIVITIES and self.is_installed(pkg):
            return pkg, labels.LAUNCH_ACTIVITIES[pkg]
        if pkg and action == "android.intent.action.MAIN":
            return self._launcher_of(pkg)
        return None

    # An installed app's own entries (``PackageSpec``): its launcher activity, deep links,
    # disabled state and activities the shell may not start.

    def _spec(self, package: str) -> PackageSpec | None:
        try:
            return self.phone.service(PackageManager).spec(package)
        except NotImplementedError:
            return None

    def _enabled(self, package: str) -> bool:
        try:
            return self.phone.service(PackageManager).is_enabled(package)
        except NotImplementedError:
            return self.is_installed(package)

    def _launcher_of(self, package: str) -> tuple[str, str] | None:
        spec = self._spec(package)
        if spec is None or spec.launch_activity is None:
            return None
        pkg, _, cls = spec.launch_activity.partition("/")
        return pkg, pkg + cls if cls.startswith(".") else cls

    def _deep_link(self, package: str, url: str) -> tuple[str, str] | None:
        """A VIEW intent pinned to ``package``: its launcher activity when one of its
        intent filters takes the URL, else nothing resolves."""
        spec = self._spec(package)
        if spec is None or not any(url.startswith(p) for p in spec.deep_links):
            return None
        return self._launcher_of(package)

    def _not_exported(self, package: str, cls: str) -> bool:
        spec = self._spec(package)
        return spec is not None and cls in spec.private_activities

    def _known_activity(self, package: str, cls: str) -> bool:
        return self._enabled(package) and (
            cls in screens.BUILDERS
            or labels.LAUNCH_ACTIVITIES.get(package) == cls
            or package not in BUILTIN_PACKAGES
        )

    def start(self, intent: Intent) -> StartResult:
        """``ActivityTaskManager.startActivity``: resolve, push, maybe raise a dialog."""
        intent.flags |= FLAG_ACTIVITY_NEW_TASK
        with self.phone.lock:
            target = self.resolve(intent)
            if target is None:
                return StartResult(START_INTENT_NOT_RESOLVED)
            if self._not_exported(*target):
                return StartResult(START_PERMISSION_DENIED, component=target)
            if not self._known_activity(*target):
                code = (
                    START_CLASS_NOT_FOUND
                    if self.is_installed(target[0])
                    else START_INTENT_NOT_RESOLVED
                )
                return StartResult(code, component=target)
            return self._push(target, intent)

    def _push(self, target: tuple[str, str], intent: Intent) -> StartResult:
        package, cls = target
        state = self._launch_state(package, cls)
        top = self.top()
        if state == "HOT" and not intent.extras and intent.data is None:
            self._maybe_ask_permission(package)
            return StartResult(START_TASK_TO_FRONT, top, state, target)
        record = ActivityRecord(package, cls, _initial_state(cls, intent))
        if "recipient" in record.state:  # a saved contact's conversation shows the name
            self._name_recipient(record)
        self.stack = [r for r in self.stack if r.cls != cls or r.package != package]
        self.stack.append(record)
        self.running.add(package)
        self._maybe_ask_permission(package)
        return StartResult(START_SUCCESS, record, state, target)

    def _name_recipient(self, record: ActivityRecord) -> None:
        """The participant's display name, as AOSP Messaging's ParticipantData and Google
        Messages' ``conversation_title`` show it: the contact's name when the number is saved
        (then the chip holds the name, not the number), else the number."""
        rows = self.phone.service(ContactsProvider).lookup_rows(record.state["recipient"])
        if rows:
            record.state["title"] = str(rows[0]["display_name"])

    def _launch_state(self, package: str, cls: str) -> str:
        if package not in self.running:
            return "COLD"
        top = self.top()
        return "HOT" if (top.package, top.cls) == (package, cls) else "WARM"

    def _maybe_ask_permission(self, package: str) -> None:
        if package not in self.phone.faults.permission_dialog_packages:
            return
        permission = self.permission_requests.get(package, "android.permission.CAMERA")
        if not self._is_granted(package, permission):
            self.pending_permission = (package, permission)

    def force_stop(self, package: str) -> None:
        """``am force-stop``: the package's activities leave the stack, its process dies."""
        with self.phone.lock:
            self.running.discard(package)
            self.stack = [r for r in self.stack if r.package != package] or [
                ActivityRecord(labels.LAUNCHER_PKG, labels.LAUNCHER_ACTIVITY)
            ]
            if self.pending_permission and self.pending_permission[0] == package:
                self.pending_permission = None

    def go_home(self) -> None:
        self.stack.append(ActivityRecord(labels.LAUNCHER_PKG, labels.LAUNCHER_ACTIVITY))
        self.stack = [r for r in self.stack[:-1] if r.cls != labels.LAUNCHER_ACTIVITY] + [
            self.stack[-1]
        ]

    def back(self) -> None:
        if self.pending_permission is not None:
            self.pending_permission = None
        elif len(self.stack) > 1:
            self.stack.pop()

    # ---- power and keyguard ------------------------------------------------------------

    def wake(self) -> None:
        self.screen_on = True

    def sleep(self) -> None:
        """Screen off; the keyguard engages as it does on a phone with a lock screen."""
        self.screen_on = False
        self.locked = True

    def unlock(self) -> None:
        """Dismiss the keyguard (what entering the PIN would do)."""
        with self.phone.lock:
            self.screen_on = True
            self.locked = False

    def lock(self, *, secure: bool | None = None) -> None:
        with self.phone.lock:
            self.locked = True
            if secure is not None:
                self.secure_lock = secure

    # ---- input -------------------------------------------------------------------------

    def tap(self, x: int, y: int) -> View | None:
        """A finger tap: logged, then delivered to the interactive view under it."""
        self.phone.log.record("click", ["tap", str(x), str(y)])
        fault: str | None = None
        with self.phone.lock:
            if not self.screen_on:
                return None
            loc = hit(self.windows(), x, y)
            if loc is None or not loc.view.enabled:
                return None
            fault = self._dispatch(loc.view)
        if fault is not None:
            self.phone.fault_point(fault)
        return loc.view

    def _dispatch(self, view: View) -> str | None:
        """Run the view's action; returns a fault point to pass once the lock is released."""
        if view.action is None:
            return None
        name, _, arg = view.action.partition(":")
        return _ACTIONS[name](self, arg)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        """A swipe up on an insecure keyguard unlocks; over the notes app's list it scrolls
        it; elsewhere it does nothing."""
        self.phone.log.record("swipe", ["swipe", str(x1), str(y1), str(x2), str(y2)])
        with self.phone.lock:
            if not self.screen_on:
                return
            if self.locked:
                if not self.secure_lock and y1 - y2 >= SWIPE_UNLOCK_MIN_PX:
                    self.locked = False
                return
            if self.pending_permission is None:
                notes_app.scroll(self.top().cls, self.top().state, x1, y1, y2)

    def focused_edit(self) -> View | None:
        with self.phone.lock:
            if self.locked or not self.screen_on:
                return None
            top = self.top()
            app = apps.messaging_app(top.package)
            if app is not None and top.cls == app.conversation_activity:
                return find(self.windows(), app.compose_field)
            field = notes_app.focused_field(top.cls) if top.package == notes_app.PKG else None
            return find_by_id(self.windows(), field) if field else None

    def type_text(self, text: str) -> bool:
        """Text typed into the focused field (the composer); False when none has focus."""
        with self.phone.lock:
            if self.focused_edit() is None:
                return False
            top = self.top()
            if top.package == notes_app.PKG:
                notes_app.type_text(top.state, text)
                return True
            top.state["body"] = top.state.get("body", "") + text
            return True

    def set_text(self, view: View, text: str) -> bool:
        """``UiObject.setText`` on ``view``: the compose fields and the notes app's field
        hold text (exactly as given, any unicode); other views keep none."""
        with self.phone.lock:
            top = self.top()
            if top.package == notes_app.PKG:
                return notes_app.set_text(top.cls, top.state, view, text)
            app = apps.messaging_app(top.package)
            if app is not None and app.compose_field(view):
                top.state["body"] = text
                return True
            if view.resource_id == f"{top.package}:id/recipient_text_view":
                top.state["recipient"] = text
                return True
            return False

    # ---- actions (View.action) ---------------------------------------------------------

    def _act_launch(self, package: str) -> str | None:
        cls = labels.LAUNCH_ACTIVITIES.get(package)
        if cls is not None:
            self._push((package, cls), Intent(action="android.intent.action.MAIN"))
        return None

    def _act_new_conversation(self, _arg: str) -> str | None:
        self._push((self.top().package, labels.MESSAGING_CONVERSATION), Intent(data="new:"))
        return None

    def _act_send(self, arg: str) -> str | None:
        """The composer's send button (``arg``: the SIM slot of a per-SIM button, else the
        first SIM): as SMS, store in the sent box with that SIM's subscription; as a chat
        message (``chat_send`` set), Samsung Messages stores it in ``content://im/chat``,
        Google Messages in its own database (only the conversation shows it). Then clear
        the field."""
        top = self.top()
        state = top.state
        body, recipient = state.get("body", ""), state.get("recipient", "")
        if not body or not recipient:
            return None
        slot = int(arg) if arg.isdigit() else 1
        kind = self.chat_send or "sms"
        if kind == "sms":
            self.phone.service(SmsProvider).insert_values(
                {"type": 2, "address": recipient, "body": body, "sub_id": slot}
            )
        else:
            app = apps.messaging_app(top.package)
            if app is not None and app.chat_sink is not None:
                app.chat_sink(self.phone, recipient, body, kind, slot)
        entry = SentEntry(body, kind, self.phone.now(), slot)
        state["sent"] = state.get("sent", "") + "\x1e" + entry.encode()
        state["body"] = ""
        return "sms.after_send_tap"

    def _act_perm(self, allow: bool) -> str | None:
        if self.pending_permission is not None:
            app, permission = self.pending_permission
            if allow:
                self.phone.service(PackageManager).grant(app, permission)
            self.pending_permission = None
        return None

    def _act_toggle(self, key: str, item: str) -> str | None:
        items = [i for i in (self.phone.settings.get("secure", key) or "").split(":") if i]
        items = [i for i in items if i != item] if item in items else [*items, item]
        self.phone.settings.put("secure", key, ":".join(items))
        return None

    def _act_notes_save(self, _arg: str) -> str | None:
        def post(title: str, text: str, number: int) -> None:
            self.phone.service(NotificationService).post(
                package=notes_app.PKG, title=title, text=text, id=number, uid=notes_app.UID
            )

        notes_app.save(self.top().state, self.context().locale, post)
        return None

    def _act_notes_open_list(self, _arg: str) -> str | None:
        self._push((notes_app.PKG, notes_app.LIST), Intent(data="list:"))
        return None

    def _act_notes_tag(self, tag: str) -> str | None:
        self.top().state["tag"] = tag
        return None

    def _act_force_stop(self, package: str) -> str | None:
        self.running.discard(package)
        return None


def _initial_state(cls: str, intent: Intent) -> dict[str, str]:
    """Per-screen state an intent carries: composer recipient/body, app-details package."""
    data = intent.data or ""
    scheme, _, rest = data.partition(":")
    if _is_conversation(cls) and scheme.lower() in ("sms", "smsto"):
        body = intent.extras.get("sms_body", "")
        return {"recipient": rest.split("?", 1)[0], "body": str(body)}
    if scheme == "package":
        return {"package": rest}
    return {}


_ACTIONS: dict[str, Callable[[Ui, str], str | None]] = {
    "launch": Ui._act_launch,
    "new_conversation": Ui._act_new_conversation,
    "send": Ui._act_send,  # "send:N": Samsung's send button of SIM N
    "focus": lambda ui, arg: None,
    "perm_allow": lambda ui, arg: ui._act_perm(True),
    "perm_deny": lambda ui, arg: ui._act_perm(False),
    "toggle_listener": lambda ui, arg: ui._act_toggle("enabled_notification_listeners", arg),
    "toggle_zen_access": lambda ui, arg: ui._act_toggle(
        "enabled_notification_policy_access_packages", arg
    ),
    "force_stop": Ui._act_force_stop,
    "notes_save": Ui._act_notes_save,
    "notes_open_list": Ui._act_notes_open_list,
    "notes_tag": Ui._act_notes_tag,
}


SIM_SERVICE = SimService("ui", Ui)  # phone.service(Ui)
