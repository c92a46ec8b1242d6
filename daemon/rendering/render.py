"""The task report: one task with its transitions, journal and evidence, as text, JSON or HTML.

``render_text``, ``render_json`` and ``render_html`` take the same four inputs: the
``TaskRecord``, the evidence documents of ``Store.evidence(task_id)`` (``{ref, attempt,
revision, kind, created_at, body}``), the journal entries and the task's events (its
transitions). An evidence ``body`` is either an action outcome (``{status, message, value,
detail, evidence: {...}}``, ``phoned.device.actions.base.Outcome.to_json``) or bare evidence
(``phoned.device.evidence.Evidence.to_json``); both are read the same way. Argv in evidence is
already redacted by the device layer; the report prints it as stored.

The JSON form is stable: the same inputs give the same document (keys sorted on output),
so ``phoned run --once --json`` and ``phoned show --json`` can be diffed and parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle.records import Event, JournalEntry, TaskRecord
from phoned.daemon.rendering.approval_view import approval_lines, pending_approval
from phoned.daemon.rendering.choice_view import choice_lines, pending_choice
from phoned.daemon.rendering.person_view import pending_person, person_lines
from phoned.daemon.rendering.render_html import html_report
from phoned.daemon.rendering.terminal import terminal_text
from phoned.daemon.rendering.values import argv_text, iso
from phoned.device import private
from phoned.device.actions.registry import task_secrets
from phoned.foundation.digest import digest

REPORT_VERSION = 1


def _plain(value: Any) -> Any:
    """A JSON-ready copy: enums by value, tuples as lists, dataclasses as dicts."""
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        items = [_plain(v) for v in value]
        return sorted(items, key=str) if isinstance(value, frozenset | set) else items
    return value


def task_json(record: TaskRecord) -> dict[str, Any]:
    """The task record as JSON, with ``failure.retryable`` and ISO times beside POSIX ones."""
    data: dict[str, Any] = _plain(record)
    data.pop("spec", None)
    if record.failure is not None:
        data["failure"] = {
            "reason": record.failure.reason.value,
            "retryable": record.failure.retryable,
            "message": record.failure.message,
        }
    data["terminal"] = record.terminal
    data["created"] = iso(record.created_at)
    data["updated"] = iso(record.updated_at)
    return data


def event_json(event: Event) -> dict[str, Any]:
    """One outbox event as JSON (``ts`` in POSIX seconds, ``at`` in ISO)."""
    data: dict[str, Any] = _plain(event)
    data["at"] = iso(event.ts)
    return data


def journal_json(entry: JournalEntry) -> dict[str, Any]:
    """One journal entry as JSON."""
    data: dict[str, Any] = _plain(entry)
    data["started"] = iso(entry.started_at)
    data["finished"] = iso(entry.finished_at)
    data["open"] = entry.open
    return data


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def evidence_view(doc: dict[str, Any]) -> dict[str, Any]:
    """One stored evidence document flattened to the fields the report shows."""
    body = _mapping(doc.get("body"))
    inner = _mapping(body.get("evidence")) or body
    observations = list(inner.get("observations") or [])
    return {
        "ref": doc.get("ref"),
        "attempt": doc.get("attempt"),
        "revision": doc.get("revision"),
        "kind": doc.get("kind"),
        "created": iso(doc["created_at"]) if isinstance(doc.get("created_at"), float) else None,
        "status": body.get("status"),
        "message": body.get("message", ""),
        "value": body.get("value"),
        "method": inner.get("method") or body.get("method"),
        "device": inner.get("device") or {},
        "target": inner.get("target") or {},
        "commands": list(inner.get("commands") or []),
        "observations": [o for o in observations if o.get("phase") != "poll"],
        "polls": [o for o in observations if o.get("phase") == "poll"],
        "artifacts": dict(inner.get("artifacts") or {}),
        "notes": list(inner.get("notes") or []),
        "proof": _proof(_mapping(body.get("detail"))),
        "approval": str(
            _mapping(_mapping(body.get("detail")).get("approval_held")).get("message") or ""
        ),
    }


# The outcome details that say which read proved a verdict (sms.send, sms.draft).
PROOF_KEYS = ("proved_by", "conversation_proof", "store", "sub_id", "recipient_shown_as")


def _proof(detail: dict[str, Any]) -> str:
    """``proved_by conversation, conversation_proof word ...``: what proved the verdict."""
    return ", ".join(f"{k} {detail[k]}" for k in PROOF_KEYS if detail.get(k) not in (None, ""))


def approval_preview(
    record: TaskRecord, evidence: Sequence[dict[str, Any]]
) -> dict[str, Any] | None:
    """The preview a pending approval is bound to, in clear, for the approver; else None.

    Evidence keeps the preview with the number and text redacted (``phoned.device.private``); it
    is rebuilt here, at display time, from the task's own params (the one place they are
    in clear), and shown only when its digest is the approval digest the task is bound to:
    what the approver reads is exactly what an approval quoting that digest approves.
    """
    if record.approval_status != "pending" or not record.approval_digest:
        return None
    secrets = task_secrets(record.method, record.params)
    for doc in reversed(evidence):
        detail = _mapping(_mapping(doc.get("body")).get("detail"))
        shown = detail.get("preview")
        if not isinstance(shown, dict):
            continue
        clear = private.restore(shown, secrets)
        if digest(clear) == record.approval_digest:
            return {**clear, "digest": record.approval_digest,
                    "revision": record.approval_revision}  # fmt: skip
    return None


def state_line(task: TaskRecord) -> str:
    """``TASK STATE revision N`` (plus the failure reason when ended, ``stop requested``
    when pending): what a decision verb prints."""
    note = "  stop requested" if task.stop_requested and not task.terminal else ""
    reason = f"  {task.failure.reason.value}" if task.failure is not None and task.terminal else ""
    return f"{task.id} {task.state.value} revision {task.revision}{reason}{note}"


def transitions(record: TaskRecord, events: Sequence[Event]) -> list[Event]:
    """The task's own events (its transitions and announced changes), by state version."""
    own = [e for e in events if e.kind == "task" and e.task_id == record.id]
    return sorted(own, key=lambda e: (e.state_version, e.cursor))


def render_json(
    record: TaskRecord,
    evidence: Sequence[dict[str, Any]],
    journal: Sequence[JournalEntry],
    events: Sequence[Event],
    queue: str | None = None,
) -> dict[str, Any]:
    """The whole report as one stable JSON document (``queue``: the ``--queue`` the
    printed approve/deny commands carry)."""
    preview = approval_preview(record, evidence)
    return {
        "report_version": REPORT_VERSION,
        "task": task_json(record),
        "transitions": [event_json(e) for e in transitions(record, events)],
        "journal": [journal_json(j) for j in journal],
        "evidence": [evidence_view(d) for d in evidence],
        "approval_preview": preview,
        "pending_approval": pending_approval(record, preview, evidence, queue),
        "pending_choice": pending_choice(record, evidence, queue),
        "pending_person": pending_person(record, evidence),
    }


# ---- text ------------------------------------------------------------------------------


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


VALUE_SHOWN = 2_000  # characters of a method's value in the text report; --json has it all


def _shortened(text: str) -> str:
    if len(text) <= VALUE_SHOWN:
        return text
    return f"{text[:VALUE_SHOWN]}... ({len(text)} characters; --json shows all)"


def _header(record: TaskRecord) -> list[str]:
    lines = [
        f"task {record.id}  {record.method}  {record.state.value}",
        f"  conversation {record.conversation_id}  device {record.device or '(any)'}  "
        f"source {record.source}",
        f"  state_version {record.state_version}  revision {record.revision}  "
        f"attempt {record.attempt}/{record.max_attempts}",
        f"  params {_value(record.params)}",
        f"  created {iso(record.created_at)}  updated {iso(record.updated_at)}",
    ]
    optional = {
        "workflow": record.workflow_id
        and f"{record.workflow_id} step {record.step_id or record.step_index}",
        "completion target": record.completion_target,
        "observed target": record.observed_target,
        "waiting for": record.waiting_for,
        "rerun of": record.rerun_of,
        "successor of": record.successor_of,
        "lease": record.lease_owner and f"{record.lease_owner} until {iso(record.lease_until)}",
    }
    lines += [f"  {name}: {text}" for name, text in optional.items() if text]
    if record.failure is not None:
        kind = "retryable" if record.failure.retryable else "final"
        head = f"  failure: {record.failure.reason.value} ({kind}) "
        lines += _multiline(head, record.failure.message, "    ")
    if record.stop_requested:
        lines.append("  stop requested: yes (not yet confirmed stopped)")
    if record.stop_summary is not None:
        lines.append(f"  done: {', '.join(record.stop_summary.done) or '-'}")
        lines.append(f"  not done: {', '.join(record.stop_summary.not_done) or '-'}")
    if record.approval_status:
        lines.append(
            f"  approval: {record.approval_status} revision {record.approval_revision} "
            f"digest {record.approval_digest or '-'}"
        )
    return lines


def _transition_lines(record: TaskRecord, events: Sequence[Event]) -> list[str]:
    lines = ["", "transitions"]
    for e in transitions(record, events):
        extra = f"  reason {e.reason}" if e.reason else ""
        flags = "  decision" if e.requires_decision else ""
        stop = "  stop-requested" if e.stop_requested else ""
        lines.append(
            f"  {iso(e.ts)}  v{e.state_version}  {e.state:<10}  rev {e.revision}  "
            f"attempt {e.attempt}{extra}{flags}{stop}"
        )
    return lines if len(lines) > 2 else [*lines, "  (none)"]


def _journal_lines(journal: Sequence[JournalEntry]) -> list[str]:
    lines = ["", "journal"]
    for j in journal:
        outcome = j.outcome.value if j.outcome is not None else "open"
        lines.append(
            f"  {iso(j.started_at)}  op {j.op_id}  {j.action} {j.target}  attempt {j.attempt} "
            f"rev {j.revision}  -> {outcome}" + (f" ({j.detail})" if j.detail else "")
        )
    return lines if len(lines) > 2 else [*lines, "  (none)"]


def _device_lines(device: dict[str, Any]) -> list[str]:
    if not device:
        return ["    device: (unknown)"]
    if device.get("error"):
        return [f"    device: {device.get('serial')} (identity unreadable: {device['error']})"]
    return [
        f"    device: {device.get('serial')}  {device.get('manufacturer', '')} "
        f"{device.get('model', '')}  SDK {device.get('sdk')} (Android {device.get('release')})"
        + (f"  locale {device['locale']}" if device.get("locale") else ""),
        f"    fingerprint: {device.get('fingerprint', '')}",
    ]


def _multiline(head: str, text: Any, indent: str) -> list[str]:
    """A field that may span lines: its first line after ``head``, the others indented (each
    line is escaped for the terminal later, so none can pose as a line of the report)."""
    first, *rest = str(text).replace("\r\n", "\n").split("\n")
    return [f"{head}{first}".rstrip(), *(indent + line for line in rest)]


def _observation_line(o: dict[str, Any]) -> str:
    return (
        f"    {o.get('phase', ''):<6}  {o.get('name')} = {_value(o.get('value'))}"
        f"  via `{argv_text(o.get('command') or [])}` at {o.get('at')}"
    )


def _command_line(c: dict[str, Any]) -> str:
    code = c.get("exit_code")
    status = f"exit {code}" if code is not None else f"no exit code ({c.get('error', '')})"
    return (
        f"    `{argv_text(c.get('argv') or [])}`  {status}  "
        f"{c.get('duration_ms', 0):.1f} ms  at {c.get('at')}"
    )


def _evidence_lines(view: dict[str, Any]) -> list[str]:
    target = view["target"]
    lines = [
        "",
        f"evidence {view['ref']}  attempt {view['attempt']}  revision {view['revision']}  "
        f"kind {view['kind']}  {view['created'] or ''}".rstrip(),
        *_device_lines(view["device"]),
    ]
    if view["status"]:
        lines += _multiline(f"    status: {view['status']}  ", view["message"], "      ")
    if view.get("proof"):
        lines += _multiline("    proof: ", view["proof"], "      ")
    if view.get("approval"):  # the approval held for a fresh preview (issue 34)
        lines += _multiline("    approval: ", view["approval"], "      ")
    if target:
        met = "yes" if target.get("met") else "no"
        lines.append(
            f"    target: expected {_value(target.get('expected'))}, "
            f"observed {_value(target.get('observed'))}, met: {met}"
        )
    if view.get("value") is not None:  # what a read answered (app.list, notifications.list)
        lines += _multiline("    value: ", _shortened(_value(view["value"])), "      ")
    sections = (
        ("observations", view["observations"], _observation_line),
        ("polls", view["polls"], _observation_line),
        ("commands", view["commands"], _command_line),
    )
    for title, items, line in sections:
        if items:
            lines.append(f"  {title}")
            lines += [line(i) for i in items]
    if view["artifacts"]:
        lines.append("  artifacts")
        lines += [f"    {name}: {_artifact_label(v)}" for name, v in view["artifacts"].items()]
    for note in view["notes"]:
        lines += _multiline("  note: ", note, "        ")
    return lines


_BASE64 = re.compile(r"[A-Za-z0-9+/]{32,}={0,2}")


def _artifact_label(value: Any) -> str:
    """A path or reference as is; inline bytes (``data:`` URI, base64) by their size."""
    text = str(value)
    if text.startswith("data:") or _BASE64.fullmatch(text) or len(text) > 1024:
        return f"(inline data, {len(text)} characters)"
    return text


def render_text(
    record: TaskRecord,
    evidence: Sequence[dict[str, Any]],
    journal: Sequence[JournalEntry],
    events: Sequence[Event],
    queue: str | None = None,
) -> str:
    """The report for a terminal: header, transitions, journal, then each evidence document.

    Every line is escaped for the terminal (``phoned.daemon.rendering.terminal``): a control character in
    a task field, a daemon message or the evidence is shown, never obeyed, and a newline
    inside a field never starts a report line of its own (multi-line messages and notes are
    continued, indented, under their field).
    """
    lines = _header(record)
    pending = pending_approval(record, approval_preview(record, evidence), evidence, queue)
    lines += approval_lines(pending) if pending is not None else []
    choice = pending_choice(record, evidence, queue)
    lines += choice_lines(choice) if choice is not None else []
    person = pending_person(record, evidence)
    lines += person_lines(person) if person is not None else []
    lines += _transition_lines(record, events)
    lines += _journal_lines(journal)
    if not evidence:
        lines += ["", "evidence", "  (none)"]
    for doc in evidence:
        lines += _evidence_lines(evidence_view(doc))
    return "\n".join(terminal_text(line) for line in lines) + "\n"


def render_html(
    record: TaskRecord,
    evidence: Sequence[dict[str, Any]],
    journal: Sequence[JournalEntry],
    events: Sequence[Event],
    artifact_roots: Sequence[Path] = (),
    queue: str | None = None,
) -> str:
    """A self-contained HTML page (no external resources) with screenshots inlined; artifact
    files are read only from the task's own folder ``<root>/<task id>/`` under one of
    ``artifact_roots`` (``phoned.daemon.rendering.render_html``); ``queue`` as for the text card's
    decision commands."""
    return html_report(render_json(record, evidence, journal, events, queue), artifact_roots)
