"""The JSON-RPC methods of the uiautomator2 on-device server, over the simulated screen.

Method names and parameter shapes are what the installed uiautomator2 client (3.7.1) sends
(``__init__.py``, ``_selector.py``, ``base.py``): ``deviceInfo``, ``dumpWindowHierarchy
(compressed, maxDepth[, rootInActive])``, ``click(x, y[, ms])``, ``waitForExists(sel, ms)``,
``waitUntilGone``, ``exist``, ``objInfo``, ``objInfoOfAllInstances``, ``count``,
``getText``, ``setText``, ``clearTextField``, ``takeScreenshot(scale, quality)`` (base64
JPEG), ``pressKey(name)``, ``pressKeyCode(code[, meta])``, ``wakeUp``, ``sleep``, ``swipe``,
``setClipboard(label, text)``, ``getClipboard``, ``getLastToast``, ``makeToast``.
Errors follow jsonrpc4j (bundled in ``u2.jar``): ``-32601 "method not found"`` for an unknown
method; a missing object is ``UiObjectNotFoundException`` (the client matches the class name
in the message).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from phoned.sim.shell.registry import BufferSink, ToolIO
from phoned.sim.ui import render, selectors
from phoned.sim.ui.input_tools import keycode, press_key
from phoned.sim.ui.model import Ui

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

METHOD_NOT_FOUND = (-32601, "method not found")
NOT_FOUND_CODE = -32002
# a waitForExists checks every 100 ms: UiDevice.wait -> WaitMixin.wait(condition, timeout),
# which passes 100 as the interval in the u2.jar (0.4.1) the client starts (automation.py)
POLL_SECONDS = 0.1
KEY_NAMES = {
    "home": 3,
    "back": 4,
    "menu": 82,
    "search": 84,
    "enter": 66,
    "delete": 67,
    "del": 67,
    "recent": 187,
    "volume_up": 24,
    "volume_down": 25,
    "volume_mute": 164,
    "camera": 27,
    "power": 26,
    "left": 21,
    "right": 22,
    "up": 19,
    "down": 20,
    "center": 23,
}


class InjectDenied(Exception):
    """The phone refuses injected input (MIUI without "USB debugging (Security settings)";
    uiautomator2 clicks fail the same way: openatx/uiautomator2#520, Mi 8 MIUI 11)."""


class ObjectNotFound(Exception):
    """A selector matched nothing (``UiObjectNotFoundException`` on the phone)."""


class Rpc:
    """Dispatches one JSON-RPC call against a phone."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self.methods: dict[str, Callable[..., Any]] = {
            "deviceInfo": self.device_info,
            "dumpWindowHierarchy": self.dump,
            "click": self.click,
            "waitForExists": self.wait_for_exists,
            "waitUntilGone": self.wait_until_gone,
            "exist": self.exist,
            "objInfo": self.obj_info,
            "objInfoOfAllInstances": self.obj_info_all,
            "count": self.count,
            "getText": self.get_text,
            "setText": self.set_text,
            "clearTextField": self.clear_text,
            "takeScreenshot": self.screenshot,
            "pressKey": self.press_key,
            "pressKeyCode": self.press_key_code,
            "wakeUp": self.wake_up,
            "sleep": self.sleep,
            "swipe": self.swipe,
            "setClipboard": self.set_clipboard,
            "getClipboard": self.get_clipboard,
            "getLastToast": self.last_toast,
            "clearLastToast": self.clear_toast,
            "makeToast": self.make_toast,
        }

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC 2.0 response object for ``request``."""
        rid = request.get("id")
        method = self.methods.get(str(request.get("method")))
        if method is None:
            return _error(rid, *METHOD_NOT_FOUND)
        params = request.get("params") or []
        try:
            result = method(*params) if isinstance(params, list) else method(**params)
        except ObjectNotFound as exc:
            message = f"androidx.test.uiautomator.UiObjectNotFoundException: {exc}"
            return _error(rid, NOT_FOUND_CODE, message)
        except (TypeError, ValueError) as exc:
            return _error(rid, -32602, f"java.lang.IllegalArgumentException: {exc}")
        except InjectDenied as exc:  # the client reads only the message (core.py _jsonrpc_call)
            return _error(rid, -32001, f"java.lang.SecurityException: {exc}")
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    # ---- device ------------------------------------------------------------------------

    def device_info(self) -> dict[str, Any]:
        ui = self.phone.service(Ui)
        scale = ui.density / 160
        with self.phone.lock:
            current = ui.focused_window().package
        return {
            "currentPackageName": current,
            "displayHeight": ui.size[1],
            "displayWidth": ui.size[0],
            "displayRotation": ui.rotation,
            "displaySizeDpX": round(ui.size[0] / scale),
            "displaySizeDpY": round(ui.size[1] / scale),
            "productName": self.phone.props["ro.product.name"],
            "screenOn": ui.screen_on,
            "sdkInt": self.phone.sdk,
            "naturalOrientation": ui.rotation in (0, 2),
        }

    def dump(
        self, compressed: bool = False, max_depth: int = 50, root_in_active: bool | None = None
    ) -> str:
        ui = self.phone.service(Ui)
        ui.automation.read_tree(ui.automation.costs.u2_dump_s)  # automation.py: 5-100 ms warm
        return ui.hierarchy_xml(u2=True, active_only=bool(root_in_active))

    def screenshot(self, scale: float = 1, quality: int = 80) -> str:
        image = self.phone.service(Ui).screenshot()
        if scale and scale != 1:
            image = image.resize(
                (max(1, int(image.width * scale)), max(1, int(image.height * scale)))
            )
        return base64.b64encode(render.jpeg_bytes(image, int(quality))).decode("ascii")

    # ---- input -------------------------------------------------------------------------

    def click(self, x: float, y: float, duration_ms: int | None = None) -> bool:
        if self.phone.faults.inject_denied:
            raise InjectDenied("Injecting to another application requires INJECT_EVENTS permission")
        self.phone.service(Ui).tap(int(x), int(y))
        return True

    def swipe(self, fx: float, fy: float, tx: float, ty: float, steps: int = 55) -> bool:
        self.phone.service(Ui).swipe(int(fx), int(fy), int(tx), int(ty))
        return True

    def _key(self, code: int) -> bool:
        press_key(ToolIO(self.phone, BufferSink(), BufferSink()), code)
        return code != 0

    def press_key(self, name: str) -> bool:
        return self._key(KEY_NAMES.get(str(name).lower(), keycode(str(name).upper())))

    def press_key_code(self, code: int, meta: int = 0) -> bool:
        return self._key(int(code))

    def wake_up(self) -> None:
        self._key(224)

    def sleep(self) -> None:
        self._key(223)

    def set_clipboard(self, label: str | None, text: str) -> None:
        self.phone.service(Ui).clipboard = text

    def get_clipboard(self) -> str | None:
        return self.phone.service(Ui).clipboard

    def last_toast(self) -> str | None:
        return self.phone.service(Ui).last_toast

    def clear_toast(self) -> None:
        self.phone.service(Ui).last_toast = None

    def make_toast(self, text: str, duration: float = 1000) -> bool:
        self.phone.service(Ui).last_toast = text
        return True

    # ---- selectors ---------------------------------------------------------------------
    # What each lookup costs, and how many a method makes, is in automation.py (u2_query_s).

    def _lookups(self, n: int) -> None:
        automation = self.phone.service(Ui).automation
        for _ in range(n):
            automation.read_tree(automation.costs.u2_query_s)

    def _located(self, selector: dict[str, Any]) -> selectors.Located | None:
        self._lookups(1)
        with self.phone.lock:
            return selectors.find(self.phone.service(Ui).windows(), selector)

    def _find(self, selector: dict[str, Any], lookups: int = 1) -> selectors.Located:
        """The element, paid with ``lookups`` lookups; not found, with two (the server's
        first lookup finds nothing, its fallback ``UiDevice.findObject(UiSelector)`` throws
        at its first)."""
        loc = self._located(selector)
        if loc is None:
            self._lookups(1)
            raise ObjectNotFound(selectors.describe(selector))
        self._lookups(lookups - 1)
        return loc

    def exist(self, selector: dict[str, Any]) -> bool:
        return self._located(selector) is not None

    def _wait(self, selector: dict[str, Any], timeout_ms: int, present: bool) -> bool:
        deadline = time.monotonic() + max(0, int(timeout_ms)) / 1000
        while True:
            if self.exist(selector) == present:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)

    def wait_for_exists(self, selector: dict[str, Any], timeout_ms: int = 0) -> bool:
        return self._wait(selector, timeout_ms, True)

    def wait_until_gone(self, selector: dict[str, Any], timeout_ms: int = 0) -> bool:
        return self._wait(selector, timeout_ms, False)

    def obj_info(self, selector: dict[str, Any]) -> dict[str, Any]:
        return selectors.info(self._find(selector))

    def obj_info_all(self, selector: dict[str, Any]) -> list[dict[str, Any]]:
        found = self._count(selector)
        # an objInfo of each instance: charged one lookup, though each of UiObject's getters
        # looks the instance up again (a floor)
        self._lookups(len(found))
        return [selectors.info(loc) for loc in found]

    def _count(self, selector: dict[str, Any]) -> list[selectors.Located]:
        """Every match, paid as the server counts them: one lookup with an ``instance``;
        else one, then doubling the instance asked for until one is missing, then halving
        the gap (``count`` in the jar's ``AutomatorServiceImpl``)."""
        with self.phone.lock:
            found = selectors.find_all(self.phone.service(Ui).windows(), selector)
        self._lookups(1 if "instance" in selector else count_lookups(len(found)))
        return found

    def count(self, selector: dict[str, Any]) -> int:
        return len(self._count(selector))

    def get_text(self, selector: dict[str, Any]) -> str:
        return self._find(selector, lookups=2).view.text

    def set_text(self, selector: dict[str, Any], text: str) -> bool:
        return self.phone.service(Ui).set_text(self._find(selector, lookups=2).view, text)

    def clear_text(self, selector: dict[str, Any]) -> None:
        self.phone.service(Ui).set_text(self._find(selector).view, "")


def count_lookups(n: int) -> int:
    """How many lookups the server's ``count`` makes for ``n`` matches: is there one, then
    is there an instance 2**k - 1 while there is, then a binary search of the last gap."""
    if n == 0:
        return 1
    asked, low, high = 2, 1, 2
    while high <= n:
        asked, low, high = asked + 1, high, high * 2
    while high > low + 1:
        mid = (low + high) // 2
        asked += 1
        low, high = (mid, high) if mid <= n else (low, mid)
    return asked


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
