"""``ui.key``: press one key of a fixed set, then wait for the expectation.

The key is a name of a fixed enum mapped to its ``android.view.KeyEvent`` code
(KEYCODE_HOME 3, KEYCODE_BACK 4, KEYCODE_DPAD_UP..CENTER 19..23, KEYCODE_TAB 61,
KEYCODE_ENTER 66, KEYCODE_DEL 67, KEYCODE_SEARCH 84, KEYCODE_ESCAPE 111,
KEYCODE_APP_SWITCH 187: frameworks/base core/java/android/view/KeyEvent.java), pressed
through the session's JSON-RPC ``pressKeyCode`` (uiautomator2 ``press(int)``), never a
shell. Power, volume and the like are not in the set: they have methods of their own or no
place in an app's UI.
"""

from __future__ import annotations

from typing import Literal

from phoned.device.actions.base import ActionContext, Outcome
from phoned.device.actions.method import Method, fixed
from phoned.device.actions.ui_step import (
    EMULATOR_APP,
    EXPECT,
    STEP_READS,
    U2,
    Expect,
    StepParams,
    ask,
    prepare,
    reconcile,
    step_row,
    u2_effect,
    verify,
)
from pydantic import Field

# ---- params ------------------------------------------------------------------------------

KEYCODES: dict[str, int] = {
    "home": 3,
    "back": 4,
    "dpad_up": 19,
    "dpad_down": 20,
    "dpad_left": 21,
    "dpad_right": 22,
    "dpad_center": 23,
    "tab": 61,
    "enter": 66,
    "delete": 67,
    "search": 84,
    "escape": 111,
    "app_switch": 187,
}
Key = Literal[
    "home", "back", "dpad_up", "dpad_down", "dpad_left", "dpad_right", "dpad_center", "tab",
    "enter", "delete", "search", "escape", "app_switch",
]  # fmt: skip


class UiKey(StepParams):
    """The key, the app in front when it is pressed, and what must show after."""

    key: Key = Field(description="the key to press", examples=["back"])
    expect: Expect = Field(
        description=EXPECT, examples=[{"package": "com.google.android.apps.nexuslauncher"}]
    )


# ---- commands ----------------------------------------------------------------------------
# None: uiautomator2 JSON-RPC pressKeyCode (never `input keyevent`).

# ---- parsers -----------------------------------------------------------------------------
# None of its own: the screen is read by ui.dump.

# ---- actions -----------------------------------------------------------------------------


def press(ctx: ActionContext, params: UiKey) -> Outcome:
    """Press the key once, then met only when the expectation is observed."""
    ready = prepare(ctx, params.package, None)
    if isinstance(ready, Outcome):
        return ready
    asked = ask(ctx, params.package, ready, "key", {"key": params.key})
    if asked is not None:
        return asked
    code = KEYCODES[params.key]
    failed = u2_effect(
        ctx, params, f"{params.package} key {params.key}", (U2, "press_key_code", str(code)),
        lambda client: client.press(code), {"key": params.key, "code": code},
    )  # fmt: skip
    if failed is not None:
        return failed
    return verify(ctx, params.expect, f"pressed {params.key}")


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = step_row(  # docs/actions.md
    effect="uiautomator2 JSON-RPC `pressKeyCode(code)` (never `input keyevent`)",
    verified="the expectation, polled on the hierarchy",
)

DECLARED = (
    Method(
        "ui.key", UiKey, press, fixed("ui.key_pressed"), reconcile=reconcile, previews=True,
        idempotent=False, screen=True,
        emulator_params={"package": EMULATOR_APP, "key": "back", "expect": {"package": EMULATOR_APP}},
        summary="Press a key (back, home, enter, ...) in the app in front; completes only when "
        "its expectation is observed. Asks a person first by default.",
        reads=STEP_READS,
        changes="whatever the key does (back: the previous screen, home: the launcher)",
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
