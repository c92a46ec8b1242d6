"""Declarative view trees: what one window of the simulated phone shows.

A ``View`` carries the properties an ``AccessibilityNodeInfo`` exposes to uiautomator
(class, resource-id, text, content-desc, bounds and the boolean flags), plus an optional
``action`` name that ``Ui`` dispatches when the view is tapped. A ``Window`` is one root
view owned by a package (an activity, the status bar, the keyguard, a dialog).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

Rect = tuple[int, int, int, int]  # left, top, right, bottom (screen pixels)


@dataclass
class View:
    """One node of a window's hierarchy."""

    cls: str
    bounds: Rect
    resource_id: str = ""
    text: str = ""
    desc: str = ""
    hint: str = ""
    clickable: bool = False
    long_clickable: bool = False
    focusable: bool = False
    focused: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    password: bool = False
    enabled: bool = True
    selected: bool = False
    action: str | None = None  # what a tap does; dispatched by Ui (see model.py)
    # what the app uses the view for ("compose": its message field); never dumped, so a
    # reader of the hierarchy sees only what a phone shows (a Compose field has no id)
    role: str = ""
    children: list[View] = field(default_factory=list)

    @property
    def editable(self) -> bool:
        return self.cls == "android.widget.EditText"

    def contains(self, x: int, y: int) -> bool:
        left, top, right, bottom = self.bounds
        return left <= x < right and top <= y < bottom


@dataclass
class Window:
    """A top-level window: its owning package, activity (None for system windows), root."""

    package: str
    root: View
    activity: str | None = None
    title: str = ""  # WindowManager title, e.g. ``StatusBar`` or ``pkg/activity``


@dataclass(frozen=True)
class Located:
    """A view found in a window, with its index among its siblings and its depth."""

    view: View
    window: Window
    index: int
    depth: int
    parent: View | None


def walk(window: Window) -> Iterator[Located]:
    """Every view of ``window`` in document (pre-)order."""

    def rec(view: View, index: int, depth: int, parent: View | None) -> Iterator[Located]:
        yield Located(view, window, index, depth, parent)
        for i, child in enumerate(view.children):
            yield from rec(child, i, depth + 1, view)

    yield from rec(window.root, 0, 0, None)


def hit(windows: list[Window], x: int, y: int) -> Located | None:
    """The deepest clickable-or-editable view under (x, y), topmost window first.

    Windows are ordered bottom to top; a touch goes to the topmost window that covers the
    point, and inside it to the last-drawn (deepest) interactive view, like Android's
    ``ViewGroup.dispatchTouchEvent`` walking children in reverse drawing order.
    """
    for window in reversed(windows):
        if not window.root.contains(x, y):
            continue
        found: Located | None = None
        for loc in walk(window):
            if loc.view.contains(x, y) and (loc.view.clickable or loc.view.editable):
                found = loc
        return found
    return None


def find(windows: list[Window], wanted: Callable[[View], bool]) -> View | None:
    """The first view ``wanted`` accepts in any window, topmost window first."""
    for window in reversed(windows):
        for loc in walk(window):
            if wanted(loc.view):
                return loc.view
    return None


def find_by_id(windows: list[Window], resource_id: str) -> View | None:
    """The first view with this resource-id in any window, topmost window first."""
    for window in reversed(windows):
        for loc in walk(window):
            if loc.view.resource_id == resource_id:
                return loc.view
    return None
