"""``sms.draft``: the default SMS app's composer with the recipient and the exact body.

Steps: validate (never trust ingress), resolve a contact's name as ``to`` to one number on
the daemon (``recipient``: several fitting numbers wait for a choice, none is
``invalid_params``), find the default SMS app (``cmd role
get-role-holders android.app.role.SMS`` from API 31, secure ``sms_default_application``
below), wake the screen, wait for unlock if the keyguard shows, open the composer with an
argv-built ``SENDTO smsto:`` intent, wait for the app's window (a uiautomator2 selector
wait on the warm session), then verify in the hierarchy that the SMS app is in front, the
recipient is shown and the compose field holds exactly the body. Send is never touched here.
A runtime-permission dialog over the app ends ``needs_permission``. A screen that cannot be
read (``UiDumpFailed``: a failed ``uiautomator dump``, an unparsable hierarchy) ends
``not_met`` with the raw output in the evidence; reconcile answers ``cannot_tell``.

If the composer already shows exactly this draft, no intent is sent again. When the owner's
approval policy asks for it (``Method.previews``), the draft waits first for an approval of
its preview (recipient, with the contact's name when a name gave it, text, app: ``preview``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from phoned.device import commands, contacts, parsers, phone_numbers, ui_hierarchy
from phoned.device.actions import recipient, ui
from phoned.device.actions.base import (
    ActionContext,
    Outcome,
    Status,
    approval_holds,
    digest,
    outcome,
)
from phoned.device.actions.composer import (
    compose_field,
    observed_draft,
    shown_number,
)
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import (
    EMULATOR_NUMBER,
    MAX_CONTACT_NAME,
    NumberOrName,
    Params,
    contact_name,
    is_phone_number,
)
from phoned.device.actions.reads import read, target
from phoned.device.errors import InputRefused, UiDumpFailed
from phoned.device.ui_session import UiPath
from pydantic import Field, StrictInt, field_validator, model_validator

# ---- params (``sms.send`` takes the same) ------------------------------------------------

MAX_BODY = 10_000  # characters of an SMS body


class Sms(Params):
    """Recipient as a number people write (read in the phone's region, sent as E.164), or a
    contact's name resolved on the daemon (``recipient``); body 1..10000 chars."""

    to: NumberOrName = Field(
        description="recipient: a phone number as people write it (+1 (555) 123-4567, "
        "8 916 123-45-67, 010-1234-5678: digits of any script with spaces, dashes, dots or "
        "brackets, a leading + or trunk prefix), read in the phone's region (its SIM's "
        "country) and sent as E.164; or a contact's name (1..100 characters, not a number) "
        "looked up in the phone book on the daemon, never sent to the phone; several fitting "
        "numbers pause the task for a choice (waiting_for choice:to)",
        examples=["+15551234567"],
    )
    contact: str | None = Field(
        default=None,
        max_length=MAX_CONTACT_NAME,
        description="with a number as to: the contact's name it was chosen for (the answer to "
        "a choice); checked against the phone book and shown with the number",
    )
    body: str = Field(
        min_length=1, max_length=MAX_BODY, description="message text", examples=["See you at 8"]
    )
    sim: StrictInt | None = Field(
        default=None,
        ge=1,
        le=2,
        description="SIM slot to send from (1 or 2) where the SMS app draws a send button per "
        "SIM; omitted: the app's own choice (the default SMS subscription)",
    )

    @field_validator("body")
    @classmethod
    def _one_argv_element(cls, value: str) -> str:
        # a NUL ends a C string on the phone; an unpaired surrogate has no UTF-8 form
        if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise ValueError("body holds a NUL or an unpaired surrogate")
        return value

    @field_validator("contact")
    @classmethod
    def _a_name(cls, value: str | None) -> str | None:
        return None if value is None else contact_name(value)

    @model_validator(mode="after")
    def _contact_with_a_number(self) -> Sms:
        if self.contact is not None and not is_phone_number(self.to):
            raise ValueError("contact goes with a phone number as to (the chosen one)")
        return self


# ---- commands and parsers ----------------------------------------------------------------
# The default SMS app (``commands.sms_default_app``) and the compose intent
# (``commands.sms_compose``) are shared with the device context and the benchmarks; the
# hierarchy is read through ``device.actions.ui``. This method has none of its own.

# ---- actions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft:
    """A verified draft: which app shows it, the screen it was seen on, what was read."""

    app: str
    screen: ui.Screen
    seen: dict[str, Any]  # read_draft() of that screen
    recipient_shown_as: str | None = None  # "number" or "contact name" (shown_as)
    # how a shown number is written (``phone_numbers.shown_format``: "national", "e164"...)
    recipient_format: str | None = None


def default_sms_app(ctx: ActionContext) -> str | None:
    """The default SMS package (role holder from API 31, secure setting below)."""
    argv = commands.sms_default_app(ctx.device.sdk)
    if argv == commands.SMS_ROLE_HOLDERS:
        holders = read(ctx, "sms_role_holders", argv, parsers.parse_role_holders, "read")
        return holders[0] if holders else None
    return read(ctx, "sms_default_application", argv, parsers.parse_settings_value, "read")


def contact_names(ctx: ActionContext, to: str, phase: str) -> tuple[str, ...]:
    """The names the phone's contacts give ``to`` (``content query`` of PhoneLookup; the
    shell holds READ_CONTACTS, docs/android-variants.md C38); () when none or unreadable.
    The names and the encoded number are secrets of the evidence like ``to`` itself."""
    argv = contacts.phone_lookup_query(to)
    ctx.recorder.add_sensitive(argv[3].rsplit("/", 1)[-1])

    def parse(text: str) -> tuple[str, ...]:
        found = contacts.parse_lookup(text)
        names = contacts.names_for(to, found or (), recipient.regions(ctx))
        ctx.recorder.add_sensitive(*names)
        return names

    return read(ctx, "contact_names", argv, parse, phase, with_stderr=True)


def read_draft(
    ctx: ActionContext, screen: ui.Screen, app: str, to: str, phase: str
) -> dict[str, Any]:
    """``observed_draft``, with the compose text read exactly on the uiautomator2 path
    (``ui.exact_text``: its dump turns an emoji into dots); a screen that does not show the
    number is checked again against the phone's contact names for it (a saved contact's
    conversation shows the name)."""
    where = recipient.regions(ctx)
    seen = observed_draft(screen, app, to, region=where)
    if not seen["recipient_shown"] and seen["app_in_front"] and seen["compose_text"]:
        seen = observed_draft(screen, app, to, contact_names(ctx, to, phase), where)
    field = compose_field(screen.nodes, app)
    if field is not None and screen.path is UiPath.U2:
        seen["compose_text"] = ui.exact_text(ctx, field, phase)
    return seen


def _matches(seen: dict[str, Any], body: str) -> bool:
    return bool(seen["app_in_front"] and seen["recipient_shown"] and seen["compose_text"] == body)


def _want(to: str, body: str, app: str) -> dict[str, Any]:
    return {
        "app_in_front": True,
        "recipient_shown": True,
        "compose_text": body,
        "app": app,
        "to": to,
    }


def unreadable(ctx: ActionContext, want: Any, error: UiDumpFailed) -> Outcome:
    """``not_met``: the screen could not be read; the raw output is in the detail."""
    return outcome(
        ctx, Status.NOT_MET, target(want, None), str(error), screen_unreadable=error.to_json()
    )


# (the default SMS app) -> the outcome that stops before any effect (an approval to ask), or None
Ask = Callable[[str], Outcome | None]


def prepare(ctx: ActionContext, to: str, body: str, ask: Ask | None = None) -> Draft | Outcome:
    """Bring up a verified draft, or the outcome that stops it (waiting, permission, a screen
    that cannot be read, ...). ``ask`` runs once the SMS app is known, before any effect."""
    want = {"app_in_front": True, "recipient_shown": True, "compose_text": body}
    try:
        return _prepare(ctx, to, body, want, ask)
    except UiDumpFailed as exc:
        return unreadable(ctx, want, exc)


def _prepare(
    ctx: ActionContext, to: str, body: str, want: dict[str, Any], ask: Ask | None
) -> Draft | Outcome:
    app = default_sms_app(ctx)
    if not app:
        return outcome(ctx, Status.UNSUPPORTED, target(want, None), "no default SMS app is set")
    asked = ask(app) if ask is not None else None
    if asked is not None:
        return asked
    if not ui.screen_on(ctx, "before"):
        try:
            ui.wake(ctx)
        except InputRefused as exc:
            return outcome(ctx, Status.UNSUPPORTED, target(want, None), str(exc))
    if ui.keyguard_showing(ctx, "before"):
        return outcome(
            ctx,
            Status.WAITING,
            target(want, None),
            "the phone is locked: unlock it",
            condition="unlock",
        )
    screen = ui.dump(ctx, "before")
    seen = read_draft(ctx, screen, app, to, "before")
    if _matches(seen, body):
        ctx.recorder.note("the composer already shows this draft: no intent sent")
        return _draft(app, screen, seen, to, recipient.regions(ctx))
    argv = commands.sms_compose(to, body, app)
    result = ctx.effect("sms.draft", f"composer {app}", argv, {"to": to, "body": body})
    error = parsers.am_start_failed(result.stdout + result.stderr)
    if error is None:
        ui.wait_for_package(ctx, app, ctx.settle_timeout, "after")
    screen = ui.dump(ctx, "after", artifact="draft_hierarchy")
    dialog = ui_hierarchy.find_permission_dialog(screen.xml)
    if dialog is not None:
        return outcome(
            ctx,
            Status.NEEDS_PERMISSION,
            target(want, None),
            "a runtime-permission dialog is showing",
            dialog=dialog,
            app=app,
        )
    seen = read_draft(ctx, screen, app, to, "after")
    if error is not None or not _matches(seen, body):
        return outcome(
            ctx,
            Status.NOT_MET,
            target(want, seen),
            error or "the composer does not show the draft",
            app=app,
        )
    return _draft(app, screen, seen, to, recipient.regions(ctx))


def _draft(
    app: str, screen: ui.Screen, seen: dict[str, Any], to: str, region: phone_numbers.Regions
) -> Draft:
    number = shown_number(screen.nodes, app, to, region)
    if number is None:  # verified shown: by number or by a contact's name
        return Draft(app, screen, seen, "contact name")
    return Draft(app, screen, seen, "number", phone_numbers.shown_format(number, to, region))


def preview(who: recipient.Recipient, body: str, app: str) -> dict[str, Any]:
    """What an approver of a draft is shown, when the owner's policy asks for one (the task
    store's ``Preview`` fields, as ``sms.send``'s): the recipient (the contact's name and
    number when a name gave it), the text and the app; bound to the app and recipient."""
    return {
        "effect": "sms.draft",
        "target": who.shown,
        "data": {"text": body, "app": app, **who.preview_data()},
        "snapshot_digest": digest({"app": app, "recipient": who.shown, "contact": who.name}),
    }


def _ask(ctx: ActionContext, who: recipient.Recipient, body: str, app: str) -> Outcome | None:
    """``needs_approval`` with the draft's preview when the owner's policy asks for one and
    no approval of this very preview was given; None: go on and draft."""
    if not ctx.approval_required:
        return None
    shown = preview(who, body, app)
    shown_digest = digest(shown)
    if approval_holds(ctx, shown_digest):
        return None
    void = ctx.approval_digest is not None
    want = {"app_in_front": True, "recipient_shown": True, "compose_text": body}
    return outcome(
        ctx, Status.NEEDS_APPROVAL, target(want, None),
        "the approval does not match the current preview: approve again" if void
        else "drafting needs approval", preview=shown, preview_digest=shown_digest,
        approval_void=void,
    )  # fmt: skip


def draft(ctx: ActionContext, params: Sms) -> Outcome:
    """Resolve the recipient (a name: on the daemon), then open the composer with the draft;
    met when the hierarchy shows it exactly."""
    who = recipient.resolve(ctx, params.to, params.contact)
    if isinstance(who, Outcome):
        return who
    to, body = who.number, params.body
    result = prepare(ctx, to, body, lambda app: _ask(ctx, who, body, app))
    if isinstance(result, Outcome):
        return result
    seen = result.seen
    return outcome(
        ctx,
        Status.MET,
        target(_want(to, body, result.app), {**seen, "app": result.app, "to": to}),
        "draft shown",
        app=result.app,
        snapshot_digest=result.screen.digest,
        recipient_shown_as=result.recipient_shown_as,
        recipient_format=result.recipient_format,
        region=recipient.region(ctx),
        **who.detail(),
    )


def reconcile(ctx: ActionContext, params: Sms, hint: dict[str, Any]) -> str:
    """Does the composer show this draft now? (a draft is safe to open again either way)"""
    if ui.keyguard_showing(ctx, "read"):
        return "cannot_tell"
    to, body = recipient.number_for(ctx, params.to, params.contact), params.body
    if to is None:
        return "cannot_tell"
    app = default_sms_app(ctx) or ""
    try:
        screen = ui.dump(ctx, "read")
    except UiDumpFailed:
        return "cannot_tell"  # observed with the raw output; never judged from an old screen
    seen = read_draft(ctx, screen, app, to, "read")
    return "happened" if _matches(seen, body) else "did_not_happen"


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads=(
        "a name as `to`: the phone book (`content query --uri content://com.android.contacts/"
        "data/phones`, matched on the daemon); default SMS app (role holders API 29+, "
        "`sms_default_application` below), `dumpsys power`,"
        " `dumpsys window policy`, `uiautomator dump`"
    ),
    effect=(
        "`input keyevent KEYCODE_WAKEUP` when the screen is off; `am start -W -a "
        "android.intent.action.SENDTO -d smsto:N --es sms_body BODY -p PKG`"
    ),
    verified="hierarchy: app in front, recipient shown, compose field == body",
)

DECLARED = (
    Method(
        "sms.draft", Sms, draft, fixed("sms.drafted"), reconcile=reconcile, screen=True,
        previews=True, sensitive=("to", "body", "contact"),
        summary="Open a draft SMS to a number or a contact's name in the default SMS app "
        "(nothing is sent); a name fitting several numbers waits for a choice.",
        reads="the screen (UI hierarchy) of the SMS app", changes="the SMS app's draft",
        emulator_params={"to": EMULATOR_NUMBER, "body": "phoned CI draft"},
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
