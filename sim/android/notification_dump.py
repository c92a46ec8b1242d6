"""The ``Notification List:`` section of the simulated ``dumpsys notification``: one record per
posted notification, in the layout of that release's ``NotificationRecord.dump``.

Sources (AOSP frameworks/base, services/core/java/com/android/server/notification/
NotificationRecord.java; rows C45/V140-V146 of ``docs/android-variants.md``):

* Android 9 (StagOS/android_frameworks_base_p @e57f169b): fields flat at the record's prefix
  plus two; no ``opPkg``/``when``; ``toString`` glues ``appImportanceLocked=false`` to the key;
  ``color=`` is printed without a newline, so ``timeout=`` follows on the same line.
* Android 11 (Ankits-lab/frameworks_base @150a9240): as 9 plus ``opPkg=``, ``number=``,
  ``groupAlertBehavior=``, ``when=``; ``toString`` without ``appImportanceLocked``.
* Android 12+ (ArrowOS-T/android_frameworks_base @ccd08433, Android 13): ``originalFlags=``,
  the notification's fields nested under ``notification=`` at twice the prefix (twelve
  spaces), then ``publicNotification=`` / ``None``; a redacted CharSequence extra prints
  ``String [length=N]`` (9-11: the type alone). ``mProposedImportance=`` from 13;
  ``vis=`` and ``mSensitiveContent=`` from 14 (LOS21-pre-QPR2/android_frameworks_base
  @be7a85af, Android 14; still in aosp-mirror/platform_frameworks_base @008911c3); real
  captures: ``tests/fixtures/android/real/dumpsys_notification-*``.
* A CharSequence extra prints ``key=`` + its class's simple name + `` (`` + the text + ``)``;
  the text as it is (a newline in it breaks the line). The simulator's apps post plain
  ``String`` titles and texts.
* ``mCreationTimeMs`` / ``mUpdateTimeMs`` are the post time (``sbn.getPostTime()``).

* ``Notification.toString``: ``Notification(channel=C pri=N contentView=...`` on Android 9
  (a OnePlus 3T's record line, quoted verbatim in a public script: code index id
  68360239130), ``shortcut=`` in place of ``pri=`` from Android 10 (the Android 12 capture).

Simplified: no actions, no public version, a fixed channel description, and of the ranking
lines after the notification only those a reader may want (importance, times).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class PostedNotification(Protocol):
    """What a record shows of a posted notification (``notification.PostedNotification``)."""

    @property
    def package(self) -> str: ...
    @property
    def id(self) -> int: ...
    @property
    def tag(self) -> str | None: ...
    @property
    def uid(self) -> int: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def post_time_ms(self) -> int: ...
    @property
    def channel(self) -> str: ...
    @property
    def user(self) -> int: ...
    @property
    def key(self) -> str: ...


NESTED_SINCE_SDK = 31  # Android 12: notification= / publicNotification= sections
WHEN_SINCE_SDK = 30  # Android 11 here (opPkg, number, groupAlertBehavior, when)
PROPOSED_SINCE_SDK = 33
VIS_SINCE_SDK = 34  # vis= in dumpNotification, mSensitiveContent=
FLAGS = 0x10  # FLAG_AUTO_CANCEL, what a tapped-to-open app notification sets


def _extra(key: str, value: str | None, redact: bool, sdk: int) -> str:
    if value is None:
        return f"{key}=null"
    if not redact:
        return f"{key}=String ({value})"
    return f"{key}=String [length={len(value)}]" if sdk >= NESTED_SINCE_SDK else f"{key}=String"


def _notification_fields(n: PostedNotification, sdk: int, prefix: str, redact: bool) -> list[str]:
    """``dumpNotification`` (12+) or the same fields inline (9-11)."""
    lines = [
        f"{prefix}fullscreenIntent=null",
        f"{prefix}contentIntent=PendingIntent{{4c1d2e1: PendingIntentRecord{{9a3f0b2 {n.package} "
        "startActivity}}",
        f"{prefix}deleteIntent=null",
    ]
    if sdk >= WHEN_SINCE_SDK:
        lines += [
            f"{prefix}number=0",
            f"{prefix}groupAlertBehavior=0",
            f"{prefix}when={n.post_time_ms}",
        ]
    lines.append(f"{prefix}tickerText=null")
    if sdk >= VIS_SINCE_SDK:
        lines.append(f"{prefix}vis=0")
    lines += [f"{prefix}contentView=null", f"{prefix}bigContentView=null",
              f"{prefix}headsUpContentView=null"]  # fmt: skip
    if sdk >= NESTED_SINCE_SDK:
        lines += [f"{prefix}color=0x00000000", f"{prefix}timeout=unknown"]
    else:  # pw.print(color) then pw.println(prefix + timeout): one line
        lines.append(f"{prefix}color=0x00000000{prefix}timeout=unknown")
    lines += [
        f"{prefix}extras={{",
        f"{prefix}    {_extra('android.title', n.title, redact, sdk)}",
        f"{prefix}    android.reduced.images=Boolean (true)",
        f"{prefix}    {_extra('android.text', n.text, redact, sdk)}",
        f"{prefix}    android.appInfo=ApplicationInfo (ApplicationInfo{{5e2c1a7 {n.package}}})",
        f"{prefix}    android.showWhen=Boolean (true)",
        f"{prefix}}}",
    ]
    return lines


def _tag(tag: str | None) -> str:
    return "null" if tag is None else tag


def _header(n: PostedNotification, sdk: int, index: int) -> str:
    locked = "appImportanceLocked=false" if sdk < WHEN_SINCE_SDK else ""
    return (
        f"    NotificationRecord(0x{0x0A11CE00 + index:08x}: pkg={n.package} "
        f"user=UserHandle{{{n.user}}} id={n.id} tag={_tag(n.tag)} importance=3 key={n.key}{locked}: "
        f"Notification(channel={n.channel} {'pri=0' if sdk < 29 else 'shortcut=null'} "
        "contentView=null vibrate=null sound=null "
        f"defaults=0x0 flags=0x{FLAGS:x} color=0x00000000 vis=PRIVATE))"
    )


def record_lines(n: PostedNotification, sdk: int, index: int, redact: bool) -> list[str]:
    """One record as ``NotificationRecord.dump(pw, "    ", ..., redact)`` prints it."""
    p = "      "
    lines = [_header(n, sdk, index), f"{p}uid={n.uid} userId={n.user}"]
    if sdk >= WHEN_SINCE_SDK:
        lines.append(f"{p}opPkg={n.package}")
    lines += [f"{p}icon=Icon(typ=RESOURCE pkg={n.package} id=0x7f080001)", f"{p}flags=0x{FLAGS:x}"]
    if sdk >= NESTED_SINCE_SDK:
        lines.append(f"{p}originalFlags=0x{FLAGS:x}")
    lines += [f"{p}pri=0", f"{p}key={n.key}", f"{p}seen=false", f"{p}groupKey={n.key}"]
    if sdk >= NESTED_SINCE_SDK:
        lines.append(f"{p}notification=")
        lines += _notification_fields(n, sdk, p + p, redact)
        lines += [f"{p}publicNotification=", f"{p}{p}None"]
    else:
        lines += _notification_fields(n, sdk, p, redact)
    lines += [
        f"{p}mImportance=DEFAULT",
        f"{p}mImportanceExplanation=app",
    ]
    if sdk >= PROPOSED_SINCE_SDK:
        lines.append(f"{p}mProposedImportance=UNSPECIFIED")
    lines.append(f"{p}mIsAppImportanceLocked=false")
    if sdk >= VIS_SINCE_SDK:
        lines.append(f"{p}mSensitiveContent=false")
    lines += [
        f"{p}mIntercept=false",
        f"{p}mHidden==false",
        f"{p}mRankingTimeMs={n.post_time_ms}",
        f"{p}mCreationTimeMs={n.post_time_ms}",
        f"{p}mVisibleSinceMs=0",
        f"{p}mUpdateTimeMs={n.post_time_ms}",
        f"{p}mSuppressedVisualEffects= 0",
        f"{p}effectiveNotificationChannel=NotificationChannel{{mId='{n.channel}', mName={n.channel}, "
        "mDescription=, mImportance=3}",
        f"{p}mAdjustments=[]",
    ]
    return lines


def list_section(posted: Sequence[PostedNotification], sdk: int, redact: bool) -> list[str]:
    """``  Notification List:``, the records, and the ``  `` line that closes it; nothing at
    all when no notification is posted (dumpImpl prints the list only when N > 0)."""
    if not posted:
        return []
    lines = ["  Notification List:"]
    for index, n in enumerate(posted):
        lines += record_lines(n, sdk, index, redact)
    return [*lines, "  "]
