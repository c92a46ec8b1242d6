"""uiautomator ``UiSelector`` matching over the simulated windows.

The uiautomator2 client sends a selector as a dict of fields plus a ``mask`` of which
fields are set (uiautomator2 ``_selector.py`` ``Selector.__fields``); the server builds a
``UiSelector`` from it. ``*Matches`` fields are Java regexes matched against the whole
value (``Pattern.matches``); ``instance`` picks the n-th match in document order;
``childOrSibling`` chains narrow the search to children/siblings of the match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from phoned.sim.ui.views import Located, View, Window, walk

Predicate = Callable[[Located, Any], bool]


def _text(loc: Located) -> str:
    return loc.view.text


def _full(pattern: Any, value: str) -> bool:
    try:
        return re.fullmatch(str(pattern), value, re.DOTALL) is not None
    except re.error:
        return False


def _flag(name: str) -> Predicate:
    return lambda loc, want: bool(getattr(loc.view, name)) == bool(want)


FIELDS: dict[str, Predicate] = {
    "text": lambda loc, v: loc.view.text == v,
    "textContains": lambda loc, v: str(v) in loc.view.text,
    "textMatches": lambda loc, v: _full(v, loc.view.text),
    "textStartsWith": lambda loc, v: loc.view.text.startswith(str(v)),
    "className": lambda loc, v: loc.view.cls == v,
    "classNameMatches": lambda loc, v: _full(v, loc.view.cls),
    "description": lambda loc, v: loc.view.desc == v,
    "descriptionContains": lambda loc, v: str(v) in loc.view.desc,
    "descriptionMatches": lambda loc, v: _full(v, loc.view.desc),
    "descriptionStartsWith": lambda loc, v: loc.view.desc.startswith(str(v)),
    "checkable": _flag("checkable"),
    "checked": _flag("checked"),
    "clickable": _flag("clickable"),
    "longClickable": _flag("long_clickable"),
    "scrollable": _flag("scrollable"),
    "enabled": _flag("enabled"),
    "focusable": _flag("focusable"),
    "focused": _flag("focused"),
    "selected": _flag("selected"),
    "packageName": lambda loc, v: loc.window.package == v,
    "packageNameMatches": lambda loc, v: _full(v, loc.window.package),
    "resourceId": lambda loc, v: loc.view.resource_id == v,
    "resourceIdMatches": lambda loc, v: _full(v, loc.view.resource_id),
    "index": lambda loc, v: loc.index == int(v),
}


def _matches(loc: Located, selector: dict[str, Any]) -> bool:
    return all(FIELDS[k](loc, v) for k, v in selector.items() if k in FIELDS)


def _candidates(windows: list[Window]) -> list[Located]:
    """Every view, active (topmost) window first, as UiAutomation searches."""
    return [loc for window in reversed(windows) for loc in walk(window)]


def _within(scope: list[Located], windows: list[Window], relation: str) -> list[Located]:
    """The views a chained selector searches: children or siblings of ``scope``."""
    everything = _candidates(windows)
    if relation == "child":
        roots = {id(loc.view) for loc in scope}
        return [loc for loc in everything if _has_ancestor(loc, roots, everything)]
    parents = {id(loc.parent) for loc in scope if loc.parent is not None}
    return [loc for loc in everything if loc.parent is not None and id(loc.parent) in parents]


def _has_ancestor(loc: Located, roots: set[int], everything: list[Located]) -> bool:
    by_view = {id(item.view): item for item in everything}
    parent = loc.parent
    while parent is not None:
        if id(parent) in roots:
            return True
        parent = by_view[id(parent)].parent
    return False


def find_all(windows: list[Window], selector: dict[str, Any]) -> list[Located]:
    """Every view matching ``selector`` (ignoring ``instance``), in search order."""
    found = [loc for loc in _candidates(windows) if _matches(loc, selector)]
    relations = selector.get("childOrSibling") or []
    subs = selector.get("childOrSiblingSelector") or []
    for relation, sub in zip(relations, subs, strict=False):
        pool = _within(found, windows, relation)
        found = [loc for loc in pool if _matches(loc, sub)]
        found = _pick(found, sub)
    return found


def _pick(found: list[Located], selector: dict[str, Any]) -> list[Located]:
    if "instance" not in selector:
        return found
    n = int(selector["instance"])
    return found[n : n + 1]


def find(windows: list[Window], selector: dict[str, Any]) -> Located | None:
    """The view ``UiObject(selector)`` refers to, or None."""
    found = _pick(find_all(windows, selector), selector)
    return found[0] if found else None


def describe(selector: dict[str, Any]) -> str:
    """``UiSelector.toString``-like text for error messages."""
    names = {
        "text": "TEXT",
        "resourceId": "RESOURCE_ID",
        "className": "CLASS",
        "description": "DESCRIPTION",
        "packageName": "PACKAGE_NAME",
        "index": "INDEX",
        "instance": "INSTANCE",
        "textContains": "CONTAINS_TEXT",
    }
    parts = [
        f"{names.get(k, k.upper())}={v}"
        for k, v in selector.items()
        if k not in ("mask", "childOrSibling", "childOrSiblingSelector")
    ]
    return "UiSelector[" + ", ".join(parts) + "]"


def info(loc: Located) -> dict[str, Any]:
    """``objInfo``: the ObjInfo JSON the uiautomator2 server returns."""
    view: View = loc.view
    left, top, right, bottom = view.bounds
    box = {"bottom": bottom, "left": left, "right": right, "top": top}
    return {
        "bounds": box,
        "checkable": view.checkable,
        "checked": view.checked,
        "childCount": len(view.children),
        "className": view.cls,
        "clickable": view.clickable,
        "contentDescription": view.desc or None,
        "enabled": view.enabled,
        "focusable": view.focusable,
        "focused": view.focused,
        "longClickable": view.long_clickable,
        "packageName": loc.window.package,
        "resourceName": view.resource_id or None,
        "scrollable": view.scrollable,
        "selected": view.selected,
        "text": view.text,
        "visibleBounds": dict(box),
    }
