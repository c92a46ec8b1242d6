"""An app's label as the phone shows it, in the phone's language: the title of its window in
the accessibility window list (``dumpsys accessibility``).

Why this source (issue #27 item 5, ``docs/apps.md``): no shell command prints a resolved
label. ``dumpsys package`` has none; ``cmd package query-activities`` without
``--components`` dumps ``ResolveInfo`` with ``labelRes=0x..`` / ``nonLocalizedLabel=`` only
(PackageManagerShellCommand.printResolveInfo, ResolveInfo.dump); uiautomator2 3.7's
``app_info`` returns ``versionName``/``versionCode`` only (adbutils reads ``dumpsys
package``) and its JSON-RPC has no app call. Peers agree: mobile-mcp's ``listApps`` sets
``appName`` to the package name (mobile-next/mobile-mcp ``src/android.ts``); droidrun reads
labels from its own on-phone app's provider (``content://com.droidrun.portal/packages``,
PackageManager inside the app); atx-agent (uiautomator2 2.x) parsed each APK's resource
table. A label is resolved only inside an app's process, from its resources, in the
locale. One such process already does it for the app in front: the app itself.

Facts, all aosp-mirror/platform_frameworks_base:

* ``ActivityThread.performLaunchActivity`` hands the activity ``activityInfo.loadLabel(pm)``
  as its title (the activity's label, else the application's: the launcher's text for the
  launcher activity), resolved in the app's configuration, i.e. the phone's (or the app's
  own, Android 13+) locale; ``Activity.setTitle`` may change it later.
* ``PhoneWindow.setTitle(title, updateAccessibilityTitle)`` copies it to
  ``LayoutParams.accessibilityTitle``, which the accessibility window list reports as the
  window's title (the window manager's own title stays ``pkg/Activity``).
* ``AccessibilityWindowInfo.toString`` (core/java/android/view/accessibility/
  AccessibilityWindowInfo.java @5f4a4795): ``AccessibilityWindowInfo[title=T, displayId=D,
  id=N, taskId=K, type=TYPE_APPLICATION, layer=L, region=.., bounds=.., focused=B,
  active=B, pictureInPicture=B, transitionTime=.., hasParent=B, isAnchored=B,
  hasChildren=B]``; older releases print ``title=T, id=N, type=.., layer=.., bounds=..,
  focused=.., active=.., ...`` (no display). ``title`` is first on every release; an
  untitled window prints ``title=null``.
* ``AccessibilityWindowManager.DisplayWindowsObserver.dumpLocked`` (services/accessibility
  .../AccessibilityWindowManager.java @105f79ba) prints ``Display[D] : `` and then one
  ``A11yWindow[<toString>]`` per window (followed by a ``WindowInfo[..]`` line); earlier
  releases print ``Window[<toString>]`` lines, joined by ``,``. The list exists only
  while a client tracks windows: uiautomator's ``UiDevice`` subscribes
  (``FLAG_RETRIEVE_INTERACTIVE_WINDOWS``), so the warm uiautomator2 session makes it
  print; with no such client there are no window lines, and the label cannot be told.

The title is the active application window's (``type=TYPE_APPLICATION``, ``active=true``):
the app in front, read beside the foreground (``dumpsys window``), which names the package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from phoned.device import commands, parsers

LABEL_COMMAND = commands.DUMPSYS_ACCESSIBILITY

# ``A11yWindow[AccessibilityWindowInfo[title=T, displayId=..`` or ``Window[...[title=T, id=..``
_WINDOW = re.compile(
    r"^\s*,?\s*(?:A11y)?Window\[AccessibilityWindowInfo\[title=(?P<title>.*?), "
    r"(?:displayId|id)=(?P<rest>.*)$",
    re.MULTILINE,
)
_FIELD = re.compile(r"(?:^|, )(type|focused|active)=([A-Za-z_<>:0-9]+)")


@dataclass(frozen=True)
class A11yWindow:
    """One window of the accessibility window list: its title (None for ``null``), type and
    whether it is active and focused."""

    title: str | None
    type: str
    active: bool
    focused: bool


def parse_a11y_windows(text: str) -> list[A11yWindow]:
    """``dumpsys accessibility``: every window line, in the order printed (top first); []
    when no client tracks windows (no window lines)."""
    found = []
    for match in _WINDOW.finditer(text):
        fields = dict(_FIELD.findall(match["rest"]))
        title = match["title"]
        found.append(
            A11yWindow(
                title=None if title in ("", "null") else title,
                type=fields.get("type", ""),
                active=fields.get("active") == "true",
                focused=fields.get("focused") == "true",
            )
        )
    return found


def front_label(windows: list[A11yWindow]) -> str | None:
    """The title of the active application window (the app in front), or None when there
    is none or it has no title."""
    for window in windows:
        if window.type == "TYPE_APPLICATION" and window.active and window.title:
            return window.title
    return None


def no_label_reason(text: str) -> str:
    """Why ``dumpsys accessibility`` gave no label (quoting what it showed)."""
    if parsers.service_missing(text):
        return "dumpsys accessibility: the service is not registered"
    if not parse_a11y_windows(text):
        return (
            "dumpsys accessibility lists no windows: no accessibility client tracks them now "
            "(the uiautomator2 session does while it runs)"
        )
    return "the accessibility window list has no active application window with a title"
