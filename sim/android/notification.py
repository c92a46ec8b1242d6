"""Notification manager model: zen mode (DND), listeners, DND access, the notifications apps
posted; ``cmd notification``, ``dumpsys notification [--noredact]`` (the posted records in
each release's layout: ``notification_dump``).

Sources (AOSP frameworks/base, services/core/java/com/android/server/notification/):

* ``NotificationShellCmd.java``: the sub-commands, their words and the USAGE text per release
  (Android 9 revision without ``set_dnd``: aosp-mirror/platform_frameworks_base @0172a23b;
  Android 11: Ankits-lab/frameworks_base; Android 15: yaap/frameworks_base). Every failure
  inside the ``try`` prints ``Error occurred. Check logcat for details. <message>`` and still
  exits 0; unknown sub-commands go to ``ShellCommand.handleDefaultCommands`` (``Unknown
  command: X``, exit -1 = 255).
* ``NotificationManagerService.setInterruptionFilter``: ``zenModeFromInterruptionFilter(f, -1)``
  and ``Invalid filter: N`` for an unknown filter; so ``set_dnd bogus`` (filter UNKNOWN = 0)
  prints that error, exits 0 and leaves zen unchanged.
* ``ZenModeHelper.SettingsObserver``: a write of ``global zen_mode`` from outside is put back
  to the helper's own ``mZenMode``. Modelled lazily: the hook records when the revert happens
  (``REVERT_DELAY_S`` after the write, per ``phone.now()``) and ``settle()`` applies it; every
  read path (``zen_mode``, ``settings get``, ``dumpsys``) calls ``settle()`` first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoned.sim.android.notification_dump import list_section
from phoned.sim.shell.registry import SimService, ToolIO, service

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

# Settings.Global.ZEN_MODE_* values.
ZEN_OFF = 0  # ZEN_MODE_OFF
ZEN_IMPORTANT = 1  # ZEN_MODE_IMPORTANT_INTERRUPTIONS (priority only)
ZEN_NONE = 2  # ZEN_MODE_NO_INTERRUPTIONS (total silence)
ZEN_ALARMS = 3  # ZEN_MODE_ALARMS

ZEN_NAMES = {
    ZEN_OFF: "ZEN_MODE_OFF",
    ZEN_IMPORTANT: "ZEN_MODE_IMPORTANT_INTERRUPTIONS",
    ZEN_NONE: "ZEN_MODE_NO_INTERRUPTIONS",
    ZEN_ALARMS: "ZEN_MODE_ALARMS",
}

# NotificationShellCmd set_dnd words -> INTERRUPTION_FILTER_* -> zen mode
# (NotificationManager.zenModeFromInterruptionFilter). Anything else is filter 0 (UNKNOWN).
SET_DND_WORDS = {
    "none": (3, ZEN_NONE),
    "on": (3, ZEN_NONE),
    "priority": (2, ZEN_IMPORTANT),
    "alarms": (4, ZEN_ALARMS),
    "all": (1, ZEN_OFF),
    "off": (1, ZEN_OFF),
}

SET_DND_SINCE_SDK = 29
LISTENERS_KEY = "enabled_notification_listeners"
POLICY_ACCESS_KEY = "enabled_notification_policy_access_packages"
ERROR_PREFIX = "Error occurred. Check logcat for details. "
EXIT_DEFAULT_COMMAND = 255  # ShellCommand.handleDefaultCommands returns -1


@dataclass(frozen=True)
class PostedNotification:
    """One notification an app posted, as NotificationRecord holds it (``StatusBarNotification``
    fields): its key is ``user|package|id|tag|uid`` (``StatusBarNotification.groupKey``'s
    sibling ``key()``), its title and text the ``android.title`` / ``android.text`` extras."""

    package: str
    id: int
    tag: str | None
    uid: int
    title: str
    text: str
    post_time_ms: int  # System.currentTimeMillis() when posted (``StatusBarNotification.postTime``)
    channel: str = "default"
    user: int = 0

    @property
    def key(self) -> str:
        """``StatusBarNotification.key()``: ``user|pkg|id|tag|uid`` (Java's string concatenation
        of a null tag: ``null``)."""
        tag = "null" if self.tag is None else self.tag
        return f"{self.user}|{self.package}|{self.id}|{tag}|{self.uid}"


class NotificationService:
    """Zen mode as ZenModeHelper holds it, plus the approved listeners and DND-access packages,
    and the notifications apps have posted (newest last; ``post`` replaces one of the same key,
    as ``NotificationManager.notify`` with the same id and tag does).

    ``zen_mode`` is the helper's own value; ``global zen_mode`` mirrors it except for the short
    window after an outside write, which the helper then reverts.
    """

    REVERT_DELAY_S = 0.2  # how long an outside write of zen_mode stays visible

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self._zen = int(phone.settings.get("global", "zen_mode") or 0)
        self._revert_at: float | None = None
        self.posted: list[PostedNotification] = []
        phone.settings.on_put("global", "zen_mode", self._on_zen_written)
        phone.settings.add_read_hook(self.settle)  # a due restore lands before any read

    # ---- zen -------------------------------------------------------------------------------

    def _on_zen_written(self, key: str, value: str | None) -> None:
        """Observer of outside writes: schedule ZenModeHelper's restore of its own value."""
        with self.phone.lock:
            if value != str(self._zen):
                self._revert_at = self.phone.now() + self.REVERT_DELAY_S

    def settle(self) -> None:
        """Apply a due revert of ``global zen_mode``; call before reading it."""
        with self.phone.lock:
            if self._revert_at is not None and self.phone.now() >= self._revert_at:
                self._revert_at = None
                self.phone.settings.put("global", "zen_mode", str(self._zen), notify=False)

    @property
    def zen_mode(self) -> int:
        """The zen mode in force (0 off, 1 priority, 2 total silence, 3 alarms)."""
        self.settle()
        return self._zen

    def set_zen(self, mode: int) -> None:
        """Change zen as the system does: helper state and ``global zen_mode`` together."""
        with self.phone.lock:
            self._zen = mode
            self._revert_at = None
            self.phone.settings.put("global", "zen_mode", str(mode), notify=False)

    # ---- approved lists --------------------------------------------------------------------

    def _secure_list(self, key: str) -> list[str]:
        raw = self.phone.settings.get("secure", key) or ""
        return [item for item in raw.split(":") if item]

    def _edit_secure_list(self, key: str, item: str, present: bool) -> None:
        with self.phone.lock:
            items = [i for i in self._secure_list(key) if i != item]
            if present:
                items.append(item)
            self.phone.settings.put("secure", key, ":".join(items), notify=False)

    def listeners(self) -> list[str]:
        """Approved notification listeners, flattened ComponentNames."""
        return self._secure_list(LISTENERS_KEY)

    def dnd_access_packages(self) -> list[str]:
        """Packages granted Do-Not-Disturb (notification policy) access."""
        return self._secure_list(POLICY_ACCESS_KEY)

    def set_listener(self, component: str, allowed: bool) -> None:
        self._edit_secure_list(LISTENERS_KEY, component, allowed)

    def set_dnd_access(self, package: str, allowed: bool) -> None:
        self._edit_secure_list(POLICY_ACCESS_KEY, package, allowed)

    # ---- posted notifications ----------------------------------------------------------------

    def post(
        self, package: str, title: str, text: str, *, id: int = 1, tag: str | None = None,
        uid: int = 10_100, channel: str = "default", post_time_ms: int | None = None,
    ) -> PostedNotification:  # fmt: skip
        """An app posts (or updates) a notification; what ``dumpsys notification`` then lists."""
        when = post_time_ms if post_time_ms is not None else int(time.time() * 1000)
        posted = PostedNotification(package, id, tag, uid, title, text, when, channel)
        with self.phone.lock:
            self.posted = [n for n in self.posted if n.key != posted.key] + [posted]
        return posted

    def cancel(self, key: str) -> bool:
        """The notification of ``key`` is removed (the app cancelled it or it was dismissed)."""
        with self.phone.lock:
            kept = [n for n in self.posted if n.key != key]
            removed, self.posted = len(kept) != len(self.posted), kept
        return removed


# ---- cmd notification ---------------------------------------------------------------------

_UID = "[user_id (current user if not specified)]"
_SET_DND_USAGE = "  set_dnd [on|none (same as on)|priority|alarms|all|off (same as all)]"
_HEAD = (
    "usage: cmd notification SUBCMD [args]\n\n"
    "SUBCMDs:\n"
    f"  allow_listener COMPONENT {_UID}\n"
    f"  disallow_listener COMPONENT {_UID}\n"
    f"  allow_assistant COMPONENT {_UID}\n"
    f"  remove_assistant COMPONENT {_UID}\n"
)
_DND_ACCESS = f"  allow_dnd PACKAGE {_UID}\n  disallow_dnd PACKAGE {_UID}\n"
_SUSPEND = "  suspend_package PACKAGE\n  unsuspend_package PACKAGE\n"
_ASSISTANT = f"  reset_assistant_user_set {_UID}\n  get_approved_assistant {_UID}\n"
_TAIL_R = (
    "  post [--help | flags] TAG TEXT\n"
    f"  set_bubbles PACKAGE PREFERENCE (0=none 1=all 2=selected) {_UID}\n"
    f"  set_bubbles_channel PACKAGE CHANNEL_ID ALLOW {_UID}\n"
    "  list\n  get <notification-key>\n"
    "  snooze --for <msec> <notification-key>\n  unsnooze <notification-key>\n"
)


def notification_usage(sdk: int) -> str:
    """The USAGE constant of that release's NotificationShellCmd (before ``println``)."""
    if sdk < SET_DND_SINCE_SDK:
        return _HEAD + _DND_ACCESS + _SUSPEND + _ASSISTANT + "  post [--help | flags] TAG TEXT"
    if sdk <= 30:  # Android 11: set_dnd line without its "\n", suspend_package still listed
        return _HEAD + _SET_DND_USAGE + _DND_ACCESS + _SUSPEND + _ASSISTANT + _TAIL_R
    if sdk < 35:  # Android 12-14: suspend_package dropped, newline still missing
        return _HEAD + _SET_DND_USAGE + _DND_ACCESS + _ASSISTANT + _TAIL_R
    return _HEAD + _SET_DND_USAGE + "\n" + _DND_ACCESS + _ASSISTANT + _TAIL_R


class _ArgError(Exception):
    """ShellCommand.getNextArgRequired: ``Argument expected after "PREV"``."""


def _required(argv: list[str], index: int) -> str:
    if index >= len(argv):
        raise _ArgError(f'Argument expected after "{argv[index - 1]}"')
    return argv[index]


def _unflatten(text: str) -> str | None:
    """ComponentName.unflattenFromString then flattenToString; None when there is no '/'."""
    pkg, sep, cls = text.partition("/")
    if not sep:
        return None
    return f"{pkg}/{pkg}{cls}" if cls.startswith(".") else f"{pkg}/{cls}"


def _set_dnd(io: ToolIO, argv: list[str]) -> int:
    word = _required(argv, 2)
    filt, zen = SET_DND_WORDS.get(word, (0, None))
    if zen is None:
        io.out(f"{ERROR_PREFIX}Invalid filter: {filt}\n")
        return 0
    if not io.phone.faults.dnd_noop:
        io.phone.service(NotificationService).set_zen(zen)
    return 0


def _listener(allowed: bool) -> Callable[[ToolIO, list[str]], int]:
    def run(io: ToolIO, argv: list[str]) -> int:
        component = _unflatten(_required(argv, 2))
        if component is None:
            io.out("Invalid listener - must be a ComponentName\n")
            return EXIT_DEFAULT_COMMAND
        io.phone.service(NotificationService).set_listener(component, allowed)
        return 0

    return run


def _dnd_access(allowed: bool) -> Callable[[ToolIO, list[str]], int]:
    def run(io: ToolIO, argv: list[str]) -> int:
        io.phone.service(NotificationService).set_dnd_access(_required(argv, 2), allowed)
        return 0

    return run


_SUBCOMMANDS: dict[str, Callable[[ToolIO, list[str]], int]] = {
    "set_dnd": _set_dnd,
    "allow_listener": _listener(True),
    "disallow_listener": _listener(False),
    "allow_dnd": _dnd_access(True),
    "disallow_dnd": _dnd_access(False),
}


@service("cmd", "notification")
def cmd_notification(io: ToolIO, argv: list[str]) -> int:
    """``cmd notification SUBCMD``: prints and exits like that SDK's NotificationShellCmd."""
    sdk = io.phone.sdk
    sub = argv[1] if len(argv) > 1 else None
    handler = _SUBCOMMANDS.get(sub.replace("-", "_")) if sub is not None else None
    if sub is not None and sub.replace("-", "_") == "set_dnd" and sdk < SET_DND_SINCE_SDK:
        handler = None
    if handler is None:
        if sub is None or sub in ("help", "-h"):
            io.out(notification_usage(sdk) + "\n")
        else:
            io.out(f"Unknown command: {sub}\n")
        return EXIT_DEFAULT_COMMAND
    with io.phone.lock:
        try:
            return handler(io, argv)
        except _ArgError as exc:
            io.out(f"{ERROR_PREFIX}{exc}\n")
            return 0


# ---- dumpsys notification -----------------------------------------------------------------


def _managed_services(caption: str, approved: list[str], components: list[str]) -> list[str]:
    """ManagedServices.dump: approved list, enabled components, live bindings (none)."""
    lines = [f"    Allowed {caption}s:"]
    if approved:
        lines.append(f"      {':'.join(approved)} (user: 0 isPrimary: true)")
    lines.append(f"    All {caption}s ({len(components)}) enabled for current profiles:")
    lines += [f"      ComponentInfo{{{c}}}" for c in components]
    lines.append(f"    Live {caption}s (0):")
    return lines


def _zen_section(sdk: int, zen: int) -> list[str]:
    """ZenModeHelper.dump with prefix four spaces (mConsolidatedPolicy from API 29)."""
    lines = ["  Zen Mode:", f"    mZenMode={ZEN_NAMES.get(zen, 'ZEN_MODE_OFF')}"]
    if sdk >= SET_DND_SINCE_SDK:
        lines.append(
            "    mConsolidatedPolicy=NotificationManager.Policy[priorityCategories=PRIORITY_"
            "CATEGORY_ALARMS,PRIORITY_CATEGORY_MEDIA,priorityCallSenders=PRIORITY_SENDERS_"
            "STARRED,priorityMessageSenders=PRIORITY_SENDERS_STARRED,suppressedVisualEffects="
            "SUPPRESSED_EFFECTS_UNSET]"
        )
    lines += ["    mUser=0", "    mSuppressedEffects=0"]
    return lines


def dump_notification(phone: PhoneState, redact: bool = True) -> str:
    """A trimmed ``dumpsys notification`` in NotificationManagerService.dumpImpl's layout: the
    posted notifications' records (``notification_dump``; extras redacted unless
    ``--noredact``), then the zen, listener and policy-access sections."""
    model = phone.service(NotificationService)
    zen = model.zen_mode
    listeners = model.listeners()
    lines = [
        "Current Notification Manager state:",
        *list_section(list(model.posted), phone.sdk, redact),
        "  mSoundNotificationKey=null",
        "  mVibrateNotificationKey=null",
        "  mDisableNotificationEffects=false",
        "  mCallState=CALL_STATE_IDLE",
        "  mSystemReady=true",
        "",
        *_zen_section(phone.sdk, zen),
        "",
        "  Notification listeners:",
        *_managed_services("notification listener", listeners, listeners),
        "",
        "  Policy access:",
        f"    mPolicyAccess: {':'.join(model.dnd_access_packages())}",
        "",
    ]
    return "\n".join(lines) + "\n"


@service("dumpsys", "notification")
def dumpsys_notification(io: ToolIO, argv: list[str]) -> int:
    """``dumpsys notification [--noredact|--reveal]``: the posted notifications, zen section and
    listener sections (DumpFilter.parseFromArguments: ``--noredact`` / ``--reveal`` turn the
    extras' redaction off)."""
    reveal = any(a in ("--noredact", "--reveal") for a in argv[1:])
    with io.phone.lock:
        io.out(dump_notification(io.phone, redact=not reveal))
    return 0


SIM_SERVICE = SimService("notification", NotificationService)  # phone.service(NotificationService)
