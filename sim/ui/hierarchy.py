"""Window hierarchy XML, byte for byte as the two real dumpers write it.

Two producers exist on a real phone:

* ``uiautomator dump`` (AOSP frameworks/testing ``uiautomator/cmds/uiautomator`` DumpCommand +
  AccessibilityNodeInfoDumper): the active window only, no indentation, attributes
  ``index text resource-id class package content-desc checkable checked clickable enabled
  focusable focused scrollable long-clickable password selected bounds`` (``NAF="true"``
  first for not-accessibility-friendly clickables).
* the uiautomator2 server's ``dumpWindowHierarchy`` (openatx/android-uiautomator-server
  ``AccessibilityNodeInfoDumper.java``; the installed ``u2.jar`` 0.4.1 carries the same
  strings: ``indent-output``, ``stripInvalidXMLChars``, ``visible-to-user``, ``editable``,
  ``drawing-order``, ``display-id``): every window root, indented, plus ``visible-to-user``,
  ``editable``, ``drawing-order`` (API 24+), ``hint`` (API 26+), ``display-id`` (API 30+).
  Its ``stripInvalidXMLChars`` turns every UTF-16 surrogate into ``.``: an emoji reads
  as ``..`` in a u2 dump (a real quirk; ``getText`` over JSON-RPC keeps it).

Both serialise with libcore's KXmlSerializer: ``<?xml version='1.0' encoding='UTF-8'
standalone='yes' ?>``, empty elements as `` />``, indentation as ``\\r\\n`` plus two spaces
per level, attribute escaping of ``& < > "`` and of tab/newline/CR as ``&#9;``/``&#10;``/
``&#13;``, and a surrogate pair as a numeric reference (``&#128512;``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from phoned.sim.ui.views import View, Window

XML_DECL = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
NAF_EXCLUDED = (
    "android.widget.GridView",
    "android.widget.GridLayout",
    "android.widget.ListView",
    "android.widget.TableLayout",
)
_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "\t": "&#9;",
    "\n": "&#10;",
    "\r": "&#13;",
}


@dataclass(frozen=True)
class DumpStyle:
    """Which dumper to imitate."""

    u2: bool  # uiautomator2 server (extra attributes, indented) vs ``uiautomator dump``
    sdk: int
    width: int = 1080
    height: int = 2400


def _invalid_char(ch: str, u2: bool) -> bool:
    """The dumper's ``stripInvalidXMLChars`` ranges (the u2 one includes surrogates)."""
    c = ord(ch)
    if 0x1 <= c <= 0x8 or 0xB <= c <= 0xC or 0xE <= c <= 0x1F or 0x7F <= c <= 0x84:
        return True
    if 0x86 <= c <= 0x9F or 0xFDD0 <= c <= 0xFDDF or c in (0xFFFE, 0xFFFF):
        return True
    return u2 and (c == 0 or 0xD800 <= c <= 0xDFFF)


def _utf16_units(text: str) -> list[str]:
    """Java ``charAt`` view of a string: astral characters become surrogate pairs."""
    units: list[str] = []
    for ch in text:
        c = ord(ch)
        if c > 0xFFFF:
            c -= 0x10000
            units += [chr(0xD800 + (c >> 10)), chr(0xDC00 + (c & 0x3FF))]
        else:
            units.append(ch)
    return units


def safe_text(text: str, u2: bool) -> str:
    """The dumper's ``safeCharSeqToString``: invalid UTF-16 units replaced by ``.``."""
    units = ["." if _invalid_char(u, u2) else u for u in _utf16_units(text)]
    return "".join(units).encode("utf-16", "surrogatepass").decode("utf-16")


def escape_attr(value: str) -> str:
    """KXmlSerializer attribute escaping (astral characters as numeric references)."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) > 0xFFFF:
            out.append(f"&#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _naf(view: View) -> bool:
    """True when a clickable, enabled view has no text/description in itself or below."""
    if view.cls.endswith(NAF_EXCLUDED) or not (view.clickable and view.enabled):
        return False
    if view.text or view.desc:
        return False
    return not _has_labelled_descendant(view)


def _has_labelled_descendant(view: View) -> bool:
    return any(c.text or c.desc or _has_labelled_descendant(c) for c in view.children)


def _clip(view: View, style: DumpStyle) -> str:
    left, top, right, bottom = view.bounds
    left, right = max(0, min(left, style.width)), max(0, min(right, style.width))
    top, bottom = max(0, min(top, style.height)), max(0, min(bottom, style.height))
    return f"[{left},{top}][{right},{bottom}]"


def node_attributes(
    view: View, package: str, index: int, order: int, style: DumpStyle
) -> list[tuple[str, str]]:
    """The attributes of one ``<node>``, in the dumper's order."""
    attrs: list[tuple[str, str]] = [("NAF", "true")] if _naf(view) else []
    attrs += [
        ("index", str(index)),
        ("text", safe_text(view.text, style.u2)),
        ("resource-id", view.resource_id),
        ("class", view.cls),
        ("package", package),
        ("content-desc", safe_text(view.desc, style.u2)),
        ("checkable", _bool(view.checkable)),
        ("checked", _bool(view.checked)),
        ("clickable", _bool(view.clickable)),
        ("enabled", _bool(view.enabled)),
        ("focusable", _bool(view.focusable)),
        ("focused", _bool(view.focused)),
        ("scrollable", _bool(view.scrollable)),
        ("long-clickable", _bool(view.long_clickable)),
        ("password", _bool(view.password)),
        ("selected", _bool(view.selected)),
    ]
    if not style.u2:
        return [*attrs, ("bounds", _clip(view, style))]
    attrs += [
        ("visible-to-user", "true"),
        ("bounds", _clip(view, style)),
        ("editable", _bool(view.editable)),
        ("drawing-order", str(order)),
    ]
    if style.sdk >= 26:
        attrs.append(("hint", safe_text(view.hint, style.u2)))
    if style.sdk >= 30:
        attrs.append(("display-id", "0"))
    return attrs


class _Writer:
    """A tiny KXmlSerializer: start/end tags with optional indentation."""

    def __init__(self, indent: bool) -> None:
        self.indent = indent
        self.parts: list[str] = [XML_DECL]

    def newline(self, depth: int) -> None:
        if self.indent:
            self.parts.append("\r\n" + "  " * depth)

    def element(
        self,
        name: str,
        attrs: list[tuple[str, str]],
        depth: int,
        children: Callable[[], None] | None,
    ) -> None:
        self.newline(depth)
        rendered = "".join(f' {k}="{escape_attr(v)}"' for k, v in attrs)
        if children is None:
            self.parts.append(f"<{name}{rendered} />")
            return
        self.parts.append(f"<{name}{rendered}>")
        children()
        self.newline(depth)
        self.parts.append(f"</{name}>")


def _write_node(
    w: _Writer, view: View, package: str, index: int, order: int, depth: int, style: DumpStyle
) -> None:
    attrs = node_attributes(view, package, index, order, style)

    def children() -> None:
        for i, child in enumerate(view.children):
            _write_node(w, child, package, i, i + 1, depth + 1, style)

    w.element("node", attrs, depth, children if view.children else None)


def dump(windows: list[Window], rotation: int, style: DumpStyle) -> str:
    """The XML document for these window roots (bottom to top)."""
    w = _Writer(indent=style.u2)

    def roots() -> None:
        for window in windows:
            _write_node(w, window.root, window.package, 0, 0, 1, style)

    w.element("hierarchy", [("rotation", str(rotation))], 0, roots if windows else None)
    return "".join(w.parts)
