"""``ui.type``: set a field's text, through uiautomator2's own input only.

The text (any unicode: Cyrillic, Hangul, emoji) is set with the session's JSON-RPC
``setText`` on the element (uiautomator2 ``UiObject.set_text``), never with a shell
``input text`` (which cannot type outside ASCII: InputShellCommand's virtual keyboard map,
``sim/ui/input_tools.py``), so nothing of it becomes shell syntax. It is verified by
reading the field back exactly (the dump's text, or ``getText`` where a uiautomator2 dump
writes surrogates as ``.``: ``ui_step.read_text``). The text is sensitive: redacted in
evidence and logs, shown in clear only to the approver.
"""

from __future__ import annotations

from typing import Any

from phoned.device.actions import ui
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import Params
from phoned.device.actions.ui_step import (
    _PACKAGE_FIELD,
    EMULATOR_APP,
    EMULATOR_ROW,
    U2,
    Expect,
    Selector,
    ask,
    field_text,
    get_text_argv,
    matching,
    prepare,
    read_text,
    u2_effect,
    verify,
    wanted,
)
from pydantic import Field, field_validator

# ---- params ------------------------------------------------------------------------------

MAX_TYPED = 5000


class UiType(Params):
    """The field, the text it must hold, the app it is in; ``expect`` adds more to observe
    (the field reading back exactly ``text`` is always checked)."""

    package: str = _PACKAGE_FIELD
    selector: Selector = Field(
        description="the field", examples=[{"resource_id": "com.example.notes:id/note_text"}]
    )
    text: str = Field(
        min_length=1, max_length=MAX_TYPED, description="the text the field must hold "
        "(any unicode); redacted in evidence", examples=["Привет, 세계"],
    )  # fmt: skip
    expect: Expect | None = Field(
        default=None, description="more to observe after typing (appears, disappears, package)"
    )

    @field_validator("text")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("must not contain NUL")
        return value

    @field_validator("expect")
    @classmethod
    def _no_field(cls, value: Expect | None) -> Expect | None:
        if value is not None and value.field is not None:
            raise ValueError("the typed field is always read back; expect takes no field")
        return value


# ---- commands ----------------------------------------------------------------------------
# None: uiautomator2 JSON-RPC setText / getText (never a shell command).

# ---- parsers -----------------------------------------------------------------------------
# None of its own: the screen is read by ui.dump.

# ---- actions -----------------------------------------------------------------------------


def type_text(ctx: ActionContext, params: UiType) -> Outcome:
    """Set the field's text, then met only when it reads back exactly (and ``expect``)."""
    ready = prepare(ctx, params.package, params.selector)
    if isinstance(ready, Outcome):
        return ready
    node = ready.element
    asked = ask(ctx, params.package, ready, "type", {"text": params.text})
    if asked is not None:
        return asked
    # the field read back by what does not change when its text does: its id and class
    again = Selector(resource_id=node.resource_id or None, class_name=node.cls)
    same = matching(ready.screen, again)
    back = again.model_copy(update={"index": same.index(node) if node in same else 0})
    kwargs = params.selector.u2(params.package, ready.index)
    argv = (U2, "set_text", *(f"{k}={v}" for k, v in kwargs.items() if k != "text"))
    # JSON-RPC setText on the selector: the server finds the element itself (uiautomator2's
    # ``UiObject.set_text`` first asks ``waitForExists``, a round trip for an element the
    # dump just showed); a missing element is UiObjectNotFoundException either way
    failed = u2_effect(
        ctx, params, f"{params.package} {node.resource_id or node.cls}", argv,
        lambda client: client.jsonrpc.setText(client(**kwargs).selector, params.text),
        {"selector": params.selector.model_dump(exclude_none=True), "length": len(params.text)},
    )  # fmt: skip
    if failed is not None:
        return failed
    extra = params.expect.model_dump(exclude_none=True) if params.expect else {}
    expect = Expect.model_validate({**extra, "field": back.model_dump(exclude_none=True),
                                    "text": params.text})  # fmt: skip
    done = f"set the text of {node.resource_id or node.cls}"
    if params.expect is None and ctx.artifacts_dir is None:
        read = _read_back(ctx, params, expect, done)
        if read is not None:
            return read
    return verify(ctx, expect, done)


def _read_back(ctx: ActionContext, params: UiType, expect: Expect, done: str) -> Outcome | None:
    """Met when the field reads back exactly the text, read by ``getText`` alone: with
    nothing more to observe and no screen to keep, a hierarchy dump would only find the
    field again. None when it does not read back within the settle bound: ``verify`` then
    reads the whole screen, so a miss is reported with what the screen showed."""
    field = expect.field
    assert field is not None  # the typed field is always read back
    index = field.index or 0
    text, ok = ctx.poll(
        "expectation",
        lambda: field_text(ctx, params.package, field, index, "after"),
        lambda text: text == params.text,
        timeout=min(ctx.settle_timeout, 5.0),
    )
    if not ok:
        return None
    observed = {"text": text}
    argv = get_text_argv(params.package, field, index)
    ctx.recorder.observe("expectation", {"observed": observed, "met": True}, "after", argv)
    target = {"expected": wanted(expect), "observed": observed, "met": True}
    return outcome(ctx, Status.MET, target, f"{done}; expectation observed")


def reconcile(ctx: ActionContext, params: UiType, hint: dict[str, Any]) -> str:
    """Did an interrupted ``ui.type`` land? The field read now: exactly the text, it did;
    another text, it did not (setting it again is safe); no such field, cannot tell."""
    screen = ui.dump(ctx, "read")
    found = matching(screen, params.selector)
    index = params.selector.index or 0
    if index >= len(found):
        return "cannot_tell"
    text = read_text(ctx, params.package, params.selector, index, found[index], "read")
    return "happened" if text == params.text else "did_not_happen"


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads="`dumpsys window` (the app in front, keyguard), the hierarchy and `getText` through "
    "uiautomator2",
    effect="uiautomator2 JSON-RPC `setText(selector, text)` on the element (never `input text`)",
    verified="the field read back: exactly the text (plus any `expect`)",
)

DECLARED = (
    Method(
        "ui.type", UiType, type_text, fixed("ui.typed"), reconcile=reconcile, previews=True,
        screen=True, sensitive=("text",),
        emulator_params={"package": EMULATOR_APP, "selector": EMULATOR_ROW, "text": "phoned CI"},
        summary="Set a field's text (any unicode) through uiautomator2's own input; completes "
        "only when the field reads back exactly. Asks a person first by default.",
        reads="the app in front, the keyguard, the hierarchy and the field's text (uiautomator2)",
        changes="the text of a field in the app",
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
