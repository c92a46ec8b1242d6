"""Pure functions over a window-hierarchy XML dump: nodes, lookups, digests, dialogs.

Both producers on a phone write the same element and attribute names: ``uiautomator dump``
(frameworks/testing uiautomator AccessibilityNodeInfoDumper: ``<hierarchy rotation="N">``,
``<node index text resource-id class package content-desc ... focused ... bounds="[l,t][r,b]">``)
and the uiautomator2 server's ``dumpWindowHierarchy`` (openatx android-uiautomator-server
AccessibilityNodeInfoDumper, the same names plus ``visible-to-user``, ``editable``...). Text
attributes are XML-escaped (``&#10;`` for a newline, numeric references for emoji), so an
XML parser gives the exact text back.
"""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")

# Packages that draw the runtime-permission dialog: PackageInstaller (API 28) and the
# PermissionController (API 29+; Pixels ship it as com.google.android.permissioncontroller).
PERMISSION_DIALOG_PACKAGES = frozenset(
    {
        "com.android.packageinstaller",
        "com.google.android.packageinstaller",
        "com.android.permissioncontroller",
        "com.google.android.permissioncontroller",
    }
)
# Button ids of GrantPermissionsActivity (PermissionController res/layout grant_permissions.xml).
_PERMISSION_BUTTON = re.compile(r":id/(permission_(?:allow|deny)\w*)$")
# Packages whose nodes change by themselves (clock, battery): left out of the digest.
VOLATILE_PACKAGES = frozenset({"com.android.systemui"})


class HierarchyError(ValueError):
    """The text is not a window-hierarchy dump."""


# ``uiautomator dump`` (AOSP frameworks/testing DumpCommand.java, also in the Android 8.0
# build decompiled in dstmath/HWFramework P9-8.0) reports success only on stdout, with
# AOSP's own typo: ``UI hierchary dumped to: <path>``. Its failures print to stderr and the
# command still exits 0: ``ERROR: could not get idle state.`` when ``waitForIdle(1000,
# 10000)`` times out (an animating screen; TencentQQGYLab/AppAgent#39) and ``ERROR: null
# root node returned by UiTestAutomationBridge.`` when there is no active window. Neither
# writes the file. A dump killed by the system exits 137 and the shell says ``Killed``
# (dtmilano/AndroidViewClient#181, whose viewclient.py rejects such output), and while
# another UiAutomation client (a uiautomator2 server) is registered, connecting throws
# ``IllegalStateException: UiAutomationService ... already registered!`` (the message
# uiautomator2 core.py ``_wait_app_process_ready`` matches; openatx/uiautomator2#298).
DUMP_SUCCESS = "UI hierchary dumped to: "
_DUMP_FAILURES = (
    ("ERROR: could not get idle state", "could not get idle state"),
    ("ERROR: null root node returned by UiTestAutomationBridge", "null root node"),
    ("already registered", "another UiAutomation client is registered"),
    ("UiAutomation not connected", "UiAutomation not connected"),
    ("Killed", "killed"),
)
KILLED_EXIT = 137  # 128 + SIGKILL


def dump_failure(stdout: str, stderr: str, exit_code: int | None) -> str | None:
    """Why ``uiautomator dump`` did not write its file, or None when it says it did.

    Success needs all three: exit code 0, the success line on stdout, and none of the
    known failure messages on either stream. Anything else is a failure, named when the
    message is known (``"could not get idle state"``, ``"killed"``...).
    """
    text = f"{stdout}\n{stderr}"
    for marker, reason in _DUMP_FAILURES:
        if marker in text:
            return reason
    if exit_code == KILLED_EXIT:
        return "killed"
    if exit_code != 0:
        return f"exit status {exit_code}"
    if DUMP_SUCCESS not in stdout:
        return "no 'UI hierchary dumped to:' line"
    return None


@dataclass(frozen=True)
class Node:
    """One ``<node>`` of the dump, with the attributes phoned reads."""

    text: str
    resource_id: str
    cls: str
    package: str
    content_desc: str
    focused: bool
    bounds: tuple[int, int, int, int]  # left, top, right, bottom
    # the flags both dumpers write (AccessibilityNodeInfoDumper): what ``ui.find`` reports
    clickable: bool = False
    enabled: bool = True
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "resource_id": self.resource_id,
            "class": self.cls,
            "package": self.package,
            "content_desc": self.content_desc,
            "bounds": list(self.bounds),
        }


def _bounds(value: str) -> tuple[int, int, int, int]:
    match = _BOUNDS.fullmatch(value.strip())
    if match is None:
        return (0, 0, 0, 0)
    left, top, right, bottom = (int(g) for g in match.groups())
    return left, top, right, bottom


def _root(xml: str) -> ET.Element:
    start = xml.find("<")
    if start < 0:
        raise HierarchyError("no XML in the dump output")
    end = xml.rfind(">")
    try:
        return ET.fromstring(xml[start : end + 1].encode("utf-8"))
    except ET.ParseError as exc:
        raise HierarchyError(f"unreadable hierarchy: {exc}") from exc


def parse_nodes(xml: str) -> list[Node]:
    """Every node of the dump in document order; raises ``HierarchyError`` on bad XML."""
    root = _root(xml)
    return [
        Node(
            text=el.get("text", ""),
            resource_id=el.get("resource-id", ""),
            cls=el.get("class", ""),
            package=el.get("package", ""),
            content_desc=el.get("content-desc", ""),
            focused=el.get("focused") == "true",
            bounds=_bounds(el.get("bounds", "")),
            clickable=el.get("clickable") == "true",
            enabled=el.get("enabled", "true") == "true",
            checkable=el.get("checkable") == "true",
            checked=el.get("checked") == "true",
            scrollable=el.get("scrollable") == "true",
        )
        for el in root.iter("node")
    ]


def rotation(xml: str) -> int | None:
    """The ``rotation`` attribute of ``<hierarchy>`` (0, 1, 2, 3), None when absent."""
    value = _root(xml).get("rotation")
    return int(value) if value is not None and value.isdigit() else None


def by_resource_id(nodes: list[Node], suffix: str) -> Node | None:
    """The first node whose resource id is ``suffix`` or ends in ``:id/suffix``."""
    for node in nodes:
        if node.resource_id == suffix or node.resource_id.endswith(f":id/{suffix}"):
            return node
    return None


def app_packages(nodes: list[Node]) -> list[str]:
    """Packages that own nodes, in order of first appearance, system UI left out."""
    seen: list[str] = []
    for node in nodes:
        if node.package and node.package not in VOLATILE_PACKAGES and node.package not in seen:
            seen.append(node.package)
    return seen


def digest(nodes: list[Node]) -> str:
    """sha256 over the stable content of the app windows (package, class, id, text,
    description, bounds); focus, selection and system-UI nodes (clock) are left out, so the
    same screen gives the same digest."""
    h = hashlib.sha256()
    for node in nodes:
        if node.package in VOLATILE_PACKAGES:
            continue
        fields = (node.package, node.cls, node.resource_id, node.text, node.content_desc)
        h.update("\x1f".join((*fields, repr(node.bounds))).encode("utf-8") + b"\x1e")
    return h.hexdigest()


def find_permission_dialog(hierarchy_xml: str) -> dict[str, Any] | None:
    """A runtime-permission dialog in the dump, or None.

    A dialog is a node of a permission-controller/package-installer package, or any node
    with a ``permission_allow_*`` / ``permission_deny_*`` id. Returns its package, message
    text (``permission_message``) and the button ids with their labels: evidence for the
    ``permission`` state. Never taps anything.
    """
    nodes = parse_nodes(hierarchy_xml)
    owners = [n for n in nodes if n.package in PERMISSION_DIALOG_PACKAGES]
    buttons = [n for n in nodes if _PERMISSION_BUTTON.search(n.resource_id)]
    if not owners and not buttons:
        return None
    message = by_resource_id(owners or nodes, "permission_message")
    package = (owners or buttons)[0].package
    return {
        "package": package,
        "message": message.text if message is not None else "",
        "buttons": {
            m[1]: n.text
            for n in buttons
            if (m := _PERMISSION_BUTTON.search(n.resource_id)) is not None
        },
    }


# A field a person types into: an ``EditText`` (or a subclass whose name says so, such as
# ``AppCompatEditText``/``TextInputEditText``) or any node the dump marks ``password="true"``.
# uiautomator's ``AccessibilityNodeInfoDumper`` writes ``password`` for every node
# (AccessibilityNodeInfo.isPassword; platform_frameworks_uiautomator's
# AccessibilityNodeInfoDumper.java, androidx.test.uiautomator's the same).
def is_input_field(cls: str, password: bool) -> bool:
    return password or cls.endswith("EditText")


def blank_inputs(xml: str) -> tuple[str, list[tuple[int, int, int, int]]]:
    """``xml`` with the text of every input field removed (``text=""``), and the bounds of
    those fields: what a step handed to a person keeps of the screen, never what they typed
    (``device/methods/ui_handoff.py``). Raises ``HierarchyError`` on bad XML."""
    root = _root(xml)
    blanked: list[tuple[int, int, int, int]] = []
    for el in root.iter("node"):
        if is_input_field(el.get("class", ""), el.get("password") == "true"):
            el.set("text", "")
            blanked.append(_bounds(el.get("bounds", "")))
    head = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    return head + ET.tostring(root, encoding="unicode"), blanked
