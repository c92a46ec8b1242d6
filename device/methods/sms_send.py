"""``sms.send``: the draft, an approval bound to its preview, one tap on send, the sent box.

1. A contact's name as ``to`` is resolved on the daemon (``recipient``: one number goes on,
   several wait for a choice, none is ``invalid_params``); ``sms.draft``'s steps bring up a
   verified draft (``sms.prepare``).
2. The preview ``{effect, target: recipient, data: {text, app}, snapshot_digest}`` (the
   shape the task store binds approvals to) and its digest
   (``base.digest``) are returned as ``needs_approval`` unless ``ctx.approval_digest`` equals
   that digest; an approval of any other preview is void and a fresh preview is returned.
3. With a matching approval: the send control is recognised by the layout around the
   compose field (``phoned.device.send_control``: the last control past the field on its row, ids
   and words only cross-checks; "cannot tell the send button" ends ``unsupported`` before
   any tap, the candidates in the detail), the sent box's highest ``_id`` is read as a
   baseline, and that control is tapped once (a uiautomator2 ``click`` on the warm session,
   ``input tap X Y`` on the shell path; either is a journaled effect), and the sent box
   (``content query --uri content://sms/sent``; the shell holds READ_SMS) is polled for a
   row newer than the baseline with this address and exactly this body. A chat (RCS) message
   never reaches the SMS provider (KieronQuinn/Smartspacer#264, tmo1/sms-ie#291): when no row
   appears, the conversation on screen decides (``phoned.device.conversation``): a new bubble with
   exactly this body whose status says sent is ``met`` (``proved_by: conversation``), "Not
   sent" is ``not_met``, a status still sending or unreadable is ``cannot_tell``, final and
   never repeated. The evidence says which read proved it.
4. A transport lost during or after the tap, or a uiautomator2 click that failed (it may have
   landed), ends ``unknown`` with the baseline; ``reconcile`` answers from the sent box, the
   conversation (a new bubble beyond the journaled count) and the composer, and never taps
   again. A tap the phone refused (``InputRefused``) did nothing: ``unsupported``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from phoned.device import conversation, parsers, phone_numbers, send_control, ui_hierarchy
from phoned.device.actions import composer, recipient, ui
from phoned.device.actions.base import (
    ActionContext,
    Outcome,
    Status,
    approval_holds,
    digest,
    outcome,
)
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import EMULATOR_NUMBER
from phoned.device.actions.reads import read, target
from phoned.device.actions.recipient import Recipient
from phoned.device.commands import Argv
from phoned.device.errors import InputRefused, TransportLost, UiAutomatorError, UiDumpFailed
from phoned.device.methods import sms
from phoned.device.methods.sms import Sms

# ---- params: ``sms.Sms`` (the draft's) ---------------------------------------------------

# ---- commands ----------------------------------------------------------------------------
# ``content query``: cmds/content/src/com/android/commands/content/Content.java (AOSP
# platform_frameworks_base); its rows are parsed by ``parsers.parse_content_rows``.

# body last: it may hold ", x="; sub_id (Telephony.TextBasedSmsColumns.SUBSCRIPTION_ID) names
# the SIM's subscription that sent it
SMS_SENT_PROJECTION = ("_id", "address", "date", "sub_id", "body")


def sms_sent_query() -> Argv:
    """Rows of the sent box: ``Row: N _id=.., address=.., date=.., body=..``."""
    return (
        "content", "query", "--uri", "content://sms/sent",
        "--projection", ":".join(SMS_SENT_PROJECTION),
    )  # fmt: skip


# Samsung Messages keeps chat (RCS) messages out of ``content://sms``, in ``content://im/chat``
# served by com.android.providers.telephony (Samsung Messages 16.2
# ``RemoteMessageContentContract`` and its ``$Chat`` columns; Samsung's IMS service
# ``TelephonyDbHelper.MSGAPP_CHATCONTENT_URI``). ``type`` counts as in the sms table, plus
# FAILED 5, QUEUE 6 and UNDELIVERED 9 (``$RcsBoxType``); ``body`` may be JSON with a ``text``
# key (hsh7097/MoneyTalk SmsReaderV2.kt). Public scripts read it with ``content query``.
IM_CHAT_PROJECTION = ("_id", "address", "date", "type", "sub_id", "body")
IM_CHAT_SENT, IM_CHAT_FAILED, IM_CHAT_UNDELIVERED = "2", "5", "9"
# A chat store row's type as the state of its message (IM_CHAT_UNDELIVERED: no state).
_CHAT_STORE_STATES = {
    IM_CHAT_SENT: conversation.SendState.SENT,
    IM_CHAT_FAILED: conversation.SendState.FAILED,
}
CHAT_STORES = {conversation.SAMSUNG_MESSAGES: "content://im/chat"}


def chat_store_query(uri: str) -> Argv:
    """Rows of an app's chat store: ``Row: N _id=.., address=.., ..., body=..``."""
    return ("content", "query", "--uri", uri, "--projection", ":".join(IM_CHAT_PROJECTION))


# ---- actions -----------------------------------------------------------------------------

# Send buttons by id and Compose tag, and the English descriptions public scripts address:
# ``device.send_control`` (docs/android-variants.md V66, V67, V113, V155-V163). Older Samsung
# Messages builds draw one button per SIM, ``send_button1`` / ``send_button2`` (V120).
SEND_IDS, SEND_TAGS = send_control.SEND_IDS, send_control.SEND_TAGS
PER_SIM_SEND = re.compile(r":id/send_button([12])$")
# The journal target of a send names the sent box's highest ``_id`` before the tap, so a
# later attempt (after a crash) can reconcile against the same baseline.
BASELINE_KEY = "sent-box baseline _id="
BUBBLES_KEY = "conversation bubbles="
CHAT_KEY = "chat-store baseline _id="


@dataclass(frozen=True)
class Baseline:
    """What the phone showed of this message before the tap: the sent box's highest ``_id``
    and how many bubbles in the conversation already held exactly this body."""

    sent_id: int
    bubbles: int
    chat_id: int | None = None  # the app's chat store's highest ``_id``; None: no store read

    def journal_words(self) -> str:
        words = f"{BASELINE_KEY}{self.sent_id} {BUBBLES_KEY}{self.bubbles}"
        return words if self.chat_id is None else f"{words} {CHAT_KEY}{self.chat_id}"


def journal_baseline(journal: Any, key: str = BASELINE_KEY) -> int | None:
    """The baseline (``_id``, or with ``BUBBLES_KEY`` the bubble count) a send's journal
    entry recorded, if any."""
    target = journal.get("target") if isinstance(journal, dict) else None
    match = re.search(re.escape(key) + r"(\d+)", target or "")
    return int(match[1]) if match else None


SEND_DESCRIPTIONS = send_control.SEND_DESCRIPTIONS


def preview(
    to: str, body: str, app: str, snapshot_digest: str, who: Recipient | None = None
) -> dict[str, Any]:
    """What the approver is shown; its digest binds the approval. With a contact's name as
    the recipient (``who``), the number as ``Recipient.shown`` and the name and number type
    in ``data``; a plain number exactly as before.

    Same fields as the task store's ``Preview`` so both compute the same digest.
    """
    shown_to = who.shown if who is not None else to
    extra = who.preview_data() if who is not None else {}
    return {
        "effect": "sms.send",
        "target": shown_to,
        "data": {"text": body, "app": app, **extra},
        "snapshot_digest": snapshot_digest,
    }


def sent_rows(ctx: ActionContext, phase: str) -> list[dict[str, str]] | None:
    """The sent box rows (``_id``, ``address``, ``date``, ``body``), observed as evidence;
    None when ``content query`` answered with an error (it exits 0 then), whose text is
    noted in the evidence: an unreadable sent box is not an empty one."""
    cols = SMS_SENT_PROJECTION

    def parse(text: str) -> list[dict[str, str]] | None:
        error = parsers.content_query_error(text)
        if error is not None:
            ctx.recorder.note(f"content query failed: {text[:500]}")
            return None
        return parsers.parse_content_rows(text, cols)

    return read(ctx, "sms_sent", sms_sent_query(), parse, phase, with_stderr=True)


def chat_rows(ctx: ActionContext, app: str, phase: str) -> list[dict[str, str]] | None:
    """The chat store's rows of ``app`` (None: the app has none, or it could not be read)."""
    uri = CHAT_STORES.get(app)
    if uri is None:
        return None
    cols = IM_CHAT_PROJECTION

    def parse(text: str) -> list[dict[str, str]] | None:
        if parsers.content_query_error(text) is not None:
            ctx.recorder.note(f"chat store query failed: {text[:500]}")
            return None
        return parsers.parse_content_rows(text, cols)

    return read(ctx, "chat_store", chat_store_query(uri), parse, phase, with_stderr=True)


def chat_text(body: str) -> str:
    """A chat store's ``body``: plain text, or JSON whose ``text`` (or ``body``) holds it."""
    if body.startswith("{"):
        try:
            value = json.loads(body)
        except ValueError:
            return body
        if isinstance(value, dict):
            for key in ("text", "body", "message"):
                if isinstance(value.get(key), str):
                    return str(value[key])
    return body


def _new_rows_to(
    rows: list[dict[str, str]] | None, to: str, after_id: int, region: phone_numbers.Regions
) -> Iterator[dict[str, str]]:
    """The rows newer than ``after_id`` with this address (the same number in ``region``,
    ``phone_numbers.same_number``), in the order read."""
    for row in rows or []:
        newer = row.get("_id", "").isdigit() and int(row["_id"]) > after_id
        if newer and phone_numbers.same_number(row.get("address", ""), to, region):
            yield row


def find_chat(
    rows: list[dict[str, str]] | None,
    to: str,
    body: str,
    after_id: int,
    region: phone_numbers.Regions = "",
) -> dict[str, str] | None:
    """The newest chat-store row newer than ``after_id`` with this address (the same number
    in ``region``, ``phone_numbers.same_number``) and body."""
    found = None
    for row in _new_rows_to(rows, to, after_id, region):
        if chat_text(row.get("body", "")) == body:
            found = row
    return found


def max_id(rows: list[dict[str, str]]) -> int:
    return max((int(r["_id"]) for r in rows if r.get("_id", "").isdigit()), default=0)


def find_sent(
    rows: list[dict[str, str]] | None,
    to: str,
    body: str,
    after_id: int,
    region: phone_numbers.Regions = "",
) -> dict[str, str] | None:
    """The row newer than ``after_id`` with this address (the same number in ``region``,
    ``phone_numbers.same_number``) and exactly this body."""
    rows_to = _new_rows_to(rows, to, after_id, region)
    return next((row for row in rows_to if row.get("body") == body), None)


def per_sim_buttons(nodes: list[ui_hierarchy.Node]) -> dict[int, ui_hierarchy.Node]:
    """The composer's send button of each SIM slot, where the app draws one per SIM."""
    found: dict[int, ui_hierarchy.Node] = {}
    for node in nodes:
        match = PER_SIM_SEND.search(node.resource_id)
        if match is not None:
            found.setdefault(int(match[1]), node)
    return found


def choose_send(
    nodes: list[ui_hierarchy.Node],
    locale: str | None,
    sim: int | None,
    field: ui_hierarchy.Node | None = None,
) -> tuple[ui_hierarchy.Node | None, str]:
    """The button to tap for ``sim`` (None: the app's own choice), or None and why not.

    An app with a button per SIM (older Samsung Messages) gets the one of ``sim``; with one
    SIM's button only, that one. With two and no ``sim``, nothing is tapped: the task must
    say which SIM sends. Otherwise the send control is recognised by the layout around the
    compose ``field`` (``send_control.recognise``); when it cannot be told, the reason starts
    "cannot tell the send button". An app with a single send button sends through the SIM
    the app has selected (the default SMS subscription, ``multi_sim_sms``); phoned cannot
    tell which one before the tap, so a task naming a ``sim`` is refused there."""
    per_sim = per_sim_buttons(nodes)
    if per_sim:
        if sim is None and len(per_sim) == 1:
            return next(iter(per_sim.values())), ""
        if sim is None:
            slots = ", ".join(map(str, sorted(per_sim)))
            return None, f"the composer has a send button per SIM ({slots}): set params.sim"
        if sim not in per_sim:
            slots = ", ".join(map(str, sorted(per_sim)))
            return None, f"the composer has no send button for SIM {sim} (only {slots})"
        return per_sim[sim], ""
    found = send_control.recognise(nodes, field, locale)
    if found.node is None:
        return None, found.reason
    if sim is not None:
        return None, (
            f"this app's send button does not choose a SIM (it sends through the SIM selected "
            f"in the app): cannot send from SIM {sim} for certain; omit params.sim"
        )
    return found.node, ""


def _want(to: str, body: str) -> dict[str, Any]:
    return {"sent_box": {"address": to, "body": body}}


def send(ctx: ActionContext, params: Sms) -> Outcome:
    """Recipient (a name: resolved on the daemon), draft, approval, one tap, verified in
    the sent box."""
    who = recipient.resolve(ctx, params.to, params.contact)
    if isinstance(who, Outcome):
        return who
    to, body = who.number, params.body
    ready = sms.prepare(ctx, to, body)
    if isinstance(ready, Outcome):
        return ready
    shown = preview(to, body, ready.app, ready.screen.digest, who)
    shown_digest = digest(shown)
    if not approval_holds(ctx, shown_digest):
        void = ctx.approval_digest is not None
        return outcome(
            ctx, Status.NEEDS_APPROVAL, target(_want(to, body), None),
            "the approval does not match the current preview: approve again" if void
            else "sending needs approval", preview=shown, preview_digest=shown_digest,
            approval_void=void, **who.detail(),
        )  # fmt: skip
    nodes, locale = ready.screen.nodes, ctx.device.identity.locale
    field = composer.compose_field(nodes, ready.app)
    recognition = send_control.recognise(nodes, field, locale)
    ctx.recorder.observe("send_control", recognition.evidence(), "before", ready.screen.read_by)
    button, why = choose_send(nodes, locale, params.sim, field)
    if button is None:  # nothing tapped: the screen or the SIM cannot be told apart
        return outcome(
            ctx, Status.UNSUPPORTED, target(_want(to, body), None), why,
            send_control=recognition.evidence(), tapped=False,
        )  # fmt: skip
    before = sent_rows(ctx, "before")
    if before is None:
        return outcome(
            ctx, Status.NOT_MET, target(_want(to, body), None),
            "the sent box cannot be read (content query failed), so a send could not be "
            "verified: nothing was sent",
        )  # fmt: skip
    chats = chat_rows(ctx, ready.app, "before")
    baseline = Baseline(
        max_id(before),
        len(conversation.with_text(ready.screen.nodes, ready.app, body)),
        None if chats is None else max_id(chats),
    )
    try:  # one tap: uiautomator2 click on the warm session, else input tap (ui.tap)
        ui.tap(
            ctx,
            "sms.send",
            f"send via {ready.app} {baseline.journal_words()}",
            button.center,
            {"preview_digest": shown_digest},
        )
    except InputRefused as exc:  # the phone said no: the tap did nothing
        return outcome(ctx, Status.UNSUPPORTED, target(_want(to, body), None), str(exc))
    except (TransportLost, UiAutomatorError) as exc:  # the tap may have landed
        return unknown(ctx, to, body, baseline.sent_id, str(exc))
    try:
        done = _verify(ctx, to, body, baseline, ready.app)
    except TransportLost as exc:
        return unknown(ctx, to, body, baseline.sent_id, str(exc))
    shown = {"recipient_shown_as": ready.recipient_shown_as,
             "recipient_format": ready.recipient_format, "region": recipient.region(ctx)}  # fmt: skip
    return replace(done, detail={**done.detail, **who.detail(), **shown})


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


def _verify(ctx: ActionContext, to: str, body: str, baseline: Baseline, app: str) -> Outcome:
    """Poll the sent box; while it has no row, the app's chat store (Samsung Messages) and
    the conversation too (a chat message never reaches the sent box). Done at a row, a chat
    row whose type is final, or a new bubble whose status is final."""
    found: dict[str, Any] = {}
    chat_final = (IM_CHAT_SENT, IM_CHAT_FAILED, IM_CHAT_UNDELIVERED)

    def sample() -> dict[str, Any]:
        rows = sent_rows(ctx, "after")
        row = find_sent(rows, to, body, baseline.sent_id, recipient.regions(ctx))
        chat, bubble, screen_read = None, None, True
        if row is None:  # the screen first: an app writes its store before it redraws
            try:
                bubble = _new_bubble(ctx, app, body, baseline.bubbles)
            except UiDumpFailed as exc:  # the conversation is no witness this time
                ctx.recorder.note(f"the conversation could not be read: {exc}")
                screen_read = False
        if row is None and baseline.chat_id is not None:
            chat = find_chat(
                chat_rows(ctx, app, "after"), to, body, baseline.chat_id, recipient.regions(ctx)
            )
        found.update(row=row, chat=chat, bubble=bubble, all_read=rows is not None and screen_read)
        return found

    def final(seen: dict[str, Any]) -> bool:
        chat, bubble = seen["chat"], seen["bubble"]
        return (
            seen["row"] is not None
            or (chat is not None and chat.get("type") in chat_final)
            or (
                bubble is not None
                and _reading(ctx, app, bubble).state
                in (conversation.SendState.SENT, conversation.SendState.FAILED)
            )
        )

    ctx.poll("sms_sent", sample, final)
    row, chat, bubble = found.get("row"), found.get("chat"), found.get("bubble")
    want = _want(to, body)
    if row is not None:
        return outcome(
            ctx, Status.MET, target(want, {"sent_box": {"address": row["address"], "body": row["body"]}}),
            "sent", sent_id=row["_id"], baseline_id=baseline.sent_id, proved_by="sent_box",
            sub_id=row.get("sub_id"),
        )  # fmt: skip
    if chat is not None and chat.get("type") in chat_final:
        return _judge_chat_store(ctx, want, app, chat, baseline)
    return _judge_conversation(ctx, want, app, bubble, baseline, found["all_read"])


def _judge_chat_store(
    ctx: ActionContext, want: dict[str, Any], app: str, chat: dict[str, str], baseline: Baseline
) -> Outcome:
    """The verdict from the app's chat store row (its ``type``), words on screen unneeded."""
    observed = {"chat_store": {"address": chat.get("address"), "body": chat_text(chat["body"])}}
    detail = {
        "baseline_id": baseline.sent_id, "chat_id": chat.get("_id"), "chat_type": chat.get("type"),
        "sub_id": chat.get("sub_id"), "proved_by": "chat_store", "store": CHAT_STORES[app],
    }  # fmt: skip
    expected = {
        "chat_store": {"address": want["sent_box"]["address"], "body": want["sent_box"]["body"]}
    }
    return _chat_verdict(
        ctx, _CHAT_STORE_STATES.get(chat.get("type", "")), want, observed, expected, detail,
        sent=f"sent as a chat message: {CHAT_STORES[app]} holds it as sent (type 2)",
        failed=f"the messaging app stored the chat message as failed (type 5 in {CHAT_STORES[app]})",
        unsure=f"cannot tell whether the message reached the recipient: {CHAT_STORES[app]} stores "
        f"it as undelivered (type 9); do not send it again before checking the phone",
    )  # fmt: skip


def _chat_verdict(
    ctx: ActionContext,
    state: conversation.SendState | None,
    want: dict[str, Any],
    observed: dict[str, Any],
    expected: dict[str, Any],
    detail: dict[str, Any],
    *,
    sent: str,
    failed: str,
    unsure: str,
) -> Outcome:
    """The verdict on a message the SMS provider does not hold (a chat message), from the
    state what proves it shows: sent is met (``expected`` names that proof), failed is not
    met, anything else cannot tell."""
    if state is conversation.SendState.SENT:
        met = {"expected": expected, "observed": observed, "met": True}
        return outcome(ctx, Status.MET, met, sent, **detail)
    if state is conversation.SendState.FAILED:
        return outcome(ctx, Status.NOT_MET, target(want, observed), failed, **detail)
    return outcome(ctx, Status.CANNOT_TELL, target(want, observed), unsure, **detail)


def _reading(ctx: ActionContext, app: str, bubble: conversation.Bubble) -> conversation.Reading:
    """The bubble's state in the phone's language and ``app``'s layout."""
    return bubble.reading(ctx.device.identity.locale, conversation.layout_of(app))


def _new_bubble(ctx: ActionContext, app: str, body: str, before: int) -> conversation.Bubble | None:
    """The newest bubble with exactly ``body`` when there are more than ``before``; raises
    ``UiDumpFailed`` when the screen cannot be read."""
    screen = ui.dump(ctx, "after")
    same = conversation.with_text(screen.nodes, app, body)
    ctx.recorder.observe(
        "conversation",
        [{"text": b.text, "status": b.status, "indicators": sorted(b.indicators)} for b in same],
        "after",
        screen.read_by,
    )
    return same[-1] if len(same) > before else None


def _judge_conversation(
    ctx: ActionContext,
    want: dict[str, Any],
    app: str,
    bubble: conversation.Bubble | None,
    baseline: Baseline,
    all_read: bool,
) -> Outcome:
    """The verdict when the SMS provider has no row: what the conversation shows decides."""
    detail: dict[str, Any] = {"baseline_id": baseline.sent_id, "proved_by": "conversation"}
    if bubble is None and not all_read:
        return outcome(
            ctx, Status.CANNOT_TELL, target(want, None),
            "cannot tell whether the message was sent: the sent box or the conversation could "
            "not be read, and neither shows it; do not send it again before checking the phone",
            **{**detail, "proved_by": None},
        )  # fmt: skip
    if bubble is None:
        return outcome(
            ctx, Status.NOT_MET, target(want, None),
            "the message did not appear in the sent box, and the conversation shows no new "
            "message with this text", **{**detail, "proved_by": None},
        )  # fmt: skip
    observed = {"conversation": {"body": bubble.text, "status": bubble.status}}
    reading = _reading(ctx, app, bubble)
    detail["conversation_proof"] = reading.proof
    detail["locale"] = ctx.device.identity.locale
    detail["conversation_status"] = bubble.status
    expected = {"conversation": {"body": bubble.text, "status": "sent"}}
    return _chat_verdict(
        ctx, reading.state, want, observed, expected, detail,
        sent=f"sent as a chat message: not in the SMS provider; the conversation shows it "
        f"({bubble.status!r})",
        failed=f"the messaging app shows the message as not sent ({bubble.status!r})",
        unsure=f"cannot tell whether the message was sent: it is not in the sent box (a chat "
        f"message never is) and the conversation shows {bubble.status!r} within "
        f"{ctx.settle_timeout:g}s; do not send it again before checking the phone",
    )  # fmt: skip


def reconcile(ctx: ActionContext, params: Sms, hint: dict[str, Any]) -> str:
    """Was the message sent? Reads only: the sent box, the app's chat store, the conversation,
    then the composer. Never taps.

    The sent box's highest ``_id`` before the tap comes from the hint (``baseline_id``) or
    the journal entry's target."""
    to, body = recipient.number_for(ctx, params.to, params.contact), params.body
    if to is None:
        return "cannot_tell"  # the name no longer means one number: never guess
    baseline = hint.get("baseline_id")
    if not isinstance(baseline, int):
        baseline = journal_baseline(hint.get("journal"))
    if baseline is None:
        return "cannot_tell"  # without a baseline an older identical message would mislead
    if find_sent(sent_rows(ctx, "read"), to, body, baseline, recipient.regions(ctx)) is not None:
        return "happened"
    app = sms.default_sms_app(ctx) or ""
    stored = _reconcile_chat_store(ctx, app, to, params, hint)
    if stored is not None:
        return stored
    if ui.keyguard_showing(ctx, "read"):
        return "cannot_tell"
    try:
        screen = ui.dump(ctx, "read")
    except UiDumpFailed:
        return "cannot_tell"
    bubbles_before = journal_baseline(hint.get("journal"), BUBBLES_KEY)
    same = conversation.with_text(screen.nodes, app, body)
    if bubbles_before is not None and len(same) > bubbles_before:
        state = _reading(ctx, app, same[-1]).state  # a chat message: the conversation decides
        if state is conversation.SendState.SENT:
            return "happened"
        if state is conversation.SendState.FAILED:
            return "did_not_happen"
        return "cannot_tell"
    seen = composer.observed_draft(screen, app, to, region=recipient.regions(ctx))
    return "did_not_happen" if seen["compose_text"] == body else "cannot_tell"


def _reconcile_chat_store(
    ctx: ActionContext, app: str, to: str, params: Sms, hint: dict[str, Any]
) -> str | None:
    """The chat store's answer (read as the send read it), None when it holds no row."""
    chat_before = journal_baseline(hint.get("journal"), CHAT_KEY)
    if chat_before is None:
        return None
    chat = find_chat(
        chat_rows(ctx, app, "read"), to, params.body, chat_before, recipient.regions(ctx)
    )
    kind = None if chat is None else chat.get("type")
    if kind == IM_CHAT_SENT:
        return "happened"
    if kind == IM_CHAT_FAILED:
        return "did_not_happen"
    return None if chat is None else "cannot_tell"  # stored, not sent nor failed: never resent


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads=(
        "as draft, then `content query --uri content://sms/sent --projection "
        "_id:address:date:sub_id:body` (and Samsung Messages' `content://im/chat`)"
    ),
    effect=(
        "`input tap X Y` on the send control told by the layout (the last control past the "
        "compose field on its row; the one of `params.sim` where the app has one per SIM), "
        "only with a matching approval; nothing when it cannot be told"
    ),
    verified=(
        "a sent-box row newer than the baseline `_id` with this address and exactly this body (its"
        " `sub_id` in the evidence); else a chat-store row of type 2; else the conversation's new "
        "bubble read in the phone's language (docs/android-variants.md V113-V118, V155-V163)"
    ),
)

DECLARED = (
    Method(
        "sms.send", Sms, send, fixed("sms.sent"), reconcile=reconcile, approval=True,
        idempotent=False, screen=True, sensitive=("to", "body", "contact"),
        summary="Send an SMS to a number or a contact's name: drafts it, pauses for a person's approval of the preview, "
        "then taps send once and checks the sent box.",
        reads="the screen of the SMS app, the sent messages",
        changes="sends a message to the recipient (cannot be undone)",
        emulator_params={"to": EMULATOR_NUMBER, "body": "phoned CI send"},
        actions_row=_ACTIONS_ROW,
    ),
)  # fmt: skip
