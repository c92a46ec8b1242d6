"""``sms.send``: the draft, an approval bound to its preview, one tap on send, the sent box.

1. ``sms.draft``'s steps bring up a verified draft (``sms.prepare``).
2. The preview ``{effect, target: recipient, data: {text, app}, snapshot_digest}`` (the
   shape the task store binds approvals to) and its digest
   (``base.digest``) are returned as ``needs_approval`` unless ``ctx.approval_digest`` equals
   that digest; an approval of any other preview is void and a fresh preview is returned.
3. With a matching approval: the sent box's highest ``_id`` is read as a baseline, the send
   button found in the hierarchy is tapped once (a uiautomator2 ``click`` on the warm session,
   ``input tap X Y`` on the shell path; either is a journaled effect), and the sent box
   (``content query --uri content://sms/sent``; the shell holds READ_SMS) is polled for a
   row newer than the baseline with this address and exactly this body.
4. A transport lost during or after the tap, or a uiautomator2 click that failed (it may have
   landed), ends ``unknown`` with the baseline; ``reconcile``
   answers from the sent box (and the composer) and never taps again.
"""

from __future__ import annotations

import re
from typing import Any

from device import commands, parsers, ui_hierarchy
from device.actions import sms, ui
from device.actions.base import ActionContext, Outcome, Status, digest, outcome
from device.actions.reads import read, target
from device.errors import TransportLost, UiAutomatorError

SEND_IDS = ("send_message_button_icon", "send_message_button")
# The journal target of a send names the sent box's highest ``_id`` before the tap, so a
# later attempt (after a crash) can reconcile against the same baseline.
BASELINE_KEY = "sent-box baseline _id="


def journal_baseline(journal: Any) -> int | None:
    """The baseline ``_id`` a send's journal entry recorded, if any."""
    target = journal.get("target") if isinstance(journal, dict) else None
    match = re.search(re.escape(BASELINE_KEY) + r"(\d+)", target or "")
    return int(match[1]) if match else None


SEND_DESCRIPTIONS = ("Send SMS", "Send message", "Send")


def preview(to: str, body: str, app: str, snapshot_digest: str) -> dict[str, Any]:
    """What the approver is shown; its digest binds the approval.

    Same fields as the task store's ``Preview`` so both compute the same digest.
    """
    return {
        "effect": "sms.send",
        "target": to,
        "data": {"text": body, "app": app},
        "snapshot_digest": snapshot_digest,
    }


def sent_rows(ctx: ActionContext, phase: str) -> list[dict[str, str]]:
    """The sent box rows (``_id``, ``address``, ``date``, ``body``), observed as evidence."""
    cols = commands.SMS_SENT_PROJECTION
    return read(
        ctx,
        "sms_sent",
        commands.sms_sent_query(),
        lambda text: parsers.parse_content_rows(text, cols),
        phase,
    )


def max_id(rows: list[dict[str, str]]) -> int:
    return max((int(r["_id"]) for r in rows if r.get("_id", "").isdigit()), default=0)


def _same_number(a: str, b: str) -> bool:
    return re.sub(r"\D", "", a) == re.sub(r"\D", "", b)


def find_sent(
    rows: list[dict[str, str]], to: str, body: str, after_id: int
) -> dict[str, str] | None:
    """The row newer than ``after_id`` with this address and exactly this body."""
    for row in rows:
        newer = row.get("_id", "").isdigit() and int(row["_id"]) > after_id
        if newer and _same_number(row.get("address", ""), to) and row.get("body") == body:
            return row
    return None


def send_button(nodes: list[ui_hierarchy.Node]) -> ui_hierarchy.Node | None:
    """The composer's send button, by id, else by its content description."""
    for rid in SEND_IDS:
        node = ui_hierarchy.by_resource_id(nodes, rid)
        if node is not None:
            return node
    return next((n for n in nodes if n.content_desc in SEND_DESCRIPTIONS), None)


def _want(to: str, body: str) -> dict[str, Any]:
    return {"sent_box": {"address": to, "body": body}}


def send(ctx: ActionContext, params: dict[str, Any]) -> Outcome:
    """Draft, approval, one tap, verified in the sent box."""
    checked = sms.validate(ctx, params)
    if isinstance(checked, Outcome):
        return checked
    to, body = checked
    ready = sms.prepare(ctx, to, body)
    if isinstance(ready, Outcome):
        return ready
    shown = preview(to, body, ready.app, ready.screen.digest)
    shown_digest = digest(shown)
    if ctx.approval_digest != shown_digest:
        void = ctx.approval_digest is not None
        return outcome(
            ctx, Status.NEEDS_APPROVAL, target(_want(to, body), None),
            "the approval does not match the current preview: approve again" if void
            else "sending needs approval", preview=shown, preview_digest=shown_digest,
            approval_void=void,
        )  # fmt: skip
    button = send_button(ready.screen.nodes)
    if button is None:
        return outcome(
            ctx, Status.NOT_MET, target(_want(to, body), None), "no send button in the composer"
        )
    baseline = max_id(sent_rows(ctx, "before"))
    try:  # one tap: uiautomator2 click on the warm session, else input tap (ui.tap)
        ui.tap(
            ctx,
            "sms.send",
            f"send via {ready.app} {BASELINE_KEY}{baseline}",
            button.center,
            {"preview_digest": shown_digest},
        )
    except (TransportLost, UiAutomatorError) as exc:  # the tap may have landed
        return unknown(ctx, to, body, baseline, str(exc))
    try:
        return _verify(ctx, to, body, baseline)
    except TransportLost as exc:
        return unknown(ctx, to, body, baseline, str(exc))


def unknown(ctx: ActionContext, to: str, body: str, baseline: int, why: str) -> Outcome:
    """The tap may have sent the message: outcome unknown until reconciled."""
    hint = {
        "method": "sms.send",
        "params": {"to": to, "body": body, "baseline_id": baseline},
        "how": "look for a sent-box row newer than baseline_id with this address and body",
    }
    return outcome(
        ctx,
        Status.UNKNOWN,
        target(_want(to, body), None),
        f"connection lost after the send tap: {why}",
        reconcile=hint,
    )


def _verify(ctx: ActionContext, to: str, body: str, baseline: int) -> Outcome:
    rows, ok = ctx.poll(
        "sms_sent",
        lambda: sent_rows(ctx, "after"),
        lambda r: find_sent(r, to, body, baseline) is not None,
    )
    row = find_sent(rows, to, body, baseline)
    observed = {"address": row["address"], "body": row["body"]} if row else None
    if not ok or row is None:
        return outcome(
            ctx,
            Status.NOT_MET,
            {"expected": _want(to, body), "observed": None, "met": False},
            "the message did not appear in the sent box",
            baseline_id=baseline,
        )
    return outcome(
        ctx,
        Status.MET,
        target(_want(to, body), {"sent_box": observed}),
        "sent",
        sent_id=row["_id"],
        baseline_id=baseline,
    )


def reconcile(ctx: ActionContext, params: dict[str, Any]) -> str:
    """Was the message sent? Reads only: the sent box, then the composer. Never taps."""
    to, body = params.get("to"), params.get("body")
    if not isinstance(to, str) or not isinstance(body, str):
        return "cannot_tell"
    ctx.recorder.add_sensitive(to, body)
    baseline = params.get("baseline_id")
    if not isinstance(baseline, int):
        baseline = journal_baseline(params.get("journal"))
    if baseline is None:
        return "cannot_tell"  # without a baseline an older identical message would mislead
    if find_sent(sent_rows(ctx, "read"), to, body, baseline) is not None:
        return "happened"
    from device.actions import ui

    if ui.keyguard_showing(ctx, "read"):
        return "cannot_tell"
    app = sms.default_sms_app(ctx) or ""
    seen = sms.observed_draft(ui.dump(ctx, "read"), app, to)
    return "did_not_happen" if seen["compose_text"] == body else "cannot_tell"
