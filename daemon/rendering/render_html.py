"""The HTML task report: one self-contained page, screenshots inlined as ``data:`` URIs.

Input is the stable JSON report of ``phoned.daemon.rendering.render.render_json``; a pending
approval comes first, as the card ``phoned show`` prints (``approval_section``). Every text
is escaped;
the page loads nothing from anywhere (inline CSS, no scripts), so it can be mailed or
attached to a CI run. An artifact may be a ``data:`` URI, base64 bytes, or a reference to a
file in the task's own artifact folder (``<artifacts root>/<task id>/``): its name, the
daemon's path of it, or the plane's ``/v1/tasks/<task id>/artifacts/<name>``. A file is
read only when it resolves inside that folder (no other task's folder, no absolute path
elsewhere, no ``..``, no symlink out): evidence is written by daemons, and a daemon naming
``/etc/passwd`` must not put that file into a report. Any other reference is shown as
refused, never read. Images (PNG, JPEG, GIF, WebP by their magic bytes) become ``<img>``,
text artifacts (hierarchy XML) a collapsed ``<pre>``, anything unreadable a note saying so.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from phoned.daemon.rendering.approval_view import recipient_text
from phoned.daemon.rendering.values import argv_text, iso

MAX_TEXT_ARTIFACT = 256 * 1024
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;
text-align:left;vertical-align:top}code,pre{font:12px ui-monospace,monospace}
.refused{color:#b00}.met{color:#070}.unmet{color:#b00}img{max-width:360px;border:1px solid #999}
pre{white-space:pre-wrap;max-height:30em;overflow:auto;background:#f6f6f6;padding:.5em}
"""


def image_mime(data: bytes) -> str | None:
    """The image type of ``data`` by its magic bytes, or None when it is no image."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


class RefusedReference(Exception):
    """An artifact reference that does not name a file inside the task's artifact folder."""


def artifact_file(value: str, folders: Sequence[Path], task_id: str) -> Path | None:
    """The file ``value`` names inside the task's folder (``<root>/<task id>`` for each root
    of ``folders``), or None when it names no file there that exists. Raises
    ``RefusedReference`` for a reference that leaves the folder (an absolute path elsewhere,
    ``..``, a symlink out, another task's plane URL)."""
    plane_prefix = f"/v1/tasks/{task_id}/artifacts/"
    if value.startswith(plane_prefix):
        value = value[len(plane_prefix) :]
    elif value.startswith("/v1/"):
        raise RefusedReference(value)
    missing = escaped = False
    for root in folders:
        folder = (Path(root) / task_id).resolve()
        candidate = Path(value) if Path(value).is_absolute() else folder / value
        try:
            resolved = candidate.resolve()
            inside = resolved.parent == folder
            if inside and resolved.is_file():
                return resolved
            missing = missing or inside
            escaped = escaped or (not inside and os.path.lexists(candidate))
        except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL in the name
            escaped = True
    if missing and not escaped:
        return None
    raise RefusedReference(value)


def artifact_bytes(value: str, folders: Sequence[Path] = (), task_id: str = "") -> bytes | None:
    """The bytes an artifact names: a ``data:`` URI, base64 text, or a readable file inside
    the task's artifact folder (``artifact_file``; ``RefusedReference`` for one outside).
    A file name always has a dot (``.png``, ``.xml``), which base64 never has."""
    if value.startswith("data:") and "," in value:
        head, payload = value.split(",", 1)
        return _b64(payload) if head.endswith(";base64") else payload.encode()
    inline = _b64(value) if "." not in value else None
    if inline is not None or len(value) >= 4096:
        return inline
    path = artifact_file(value, folders, task_id)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def artifact_html(name: str, value: Any, folders: Sequence[Path] = (), task_id: str = "") -> str:
    """One artifact: an inlined image, a collapsed text, a note that it is unreadable, or a
    note that its reference was refused (it names a file outside the task's folder)."""
    label = escape(name)
    shown = escape(str(value)[:300])
    try:
        data = artifact_bytes(str(value), folders, task_id)
    except RefusedReference:
        return (
            f'<p class="refused">{label}: <code>{shown}</code> (refused: not a file of '
            "this task's artifact folder; not read)</p>"
        )
    if data is None:
        return f"<p>{label}: <code>{shown}</code> (not readable here)</p>"
    mime = image_mime(data)
    if mime is not None:
        uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        return f'<figure><img alt="{label}" src="{uri}"><figcaption>{label}</figcaption></figure>'
    text = data[:MAX_TEXT_ARTIFACT].decode("utf-8", "replace")
    return f"<details><summary>{label}</summary><pre>{escape(text)}</pre></details>"


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return escape("" if value is None else text)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _task_section(task: dict[str, Any]) -> str:
    keys = (
        "id", "method", "state", "conversation_id", "device", "source", "params",
        "state_version", "revision", "attempt", "max_attempts", "workflow_id", "step_id",
        "completion_target", "observed_target", "waiting_for", "failure", "stop_requested",
        "stop_summary", "approval_status", "approval_revision", "approval_digest",
        "rerun_of", "successor_of", "created", "updated",
    )  # fmt: skip
    rows = [[k, task.get(k)] for k in keys if task.get(k) not in (None, "", False)]
    return "<h2>Task</h2>" + _table(["field", "value"], rows)


def _observation_rows(items: list[dict[str, Any]]) -> list[list[Any]]:
    return [
        [o.get("phase"), o.get("name"), o.get("value"), argv_text(o.get("command") or []),
         o.get("at")]
        for o in items
    ]  # fmt: skip


def _evidence_section(view: dict[str, Any], folders: Sequence[Path], task_id: str) -> str:
    target = view["target"] or {}
    met = bool(target.get("met"))
    css = "met" if met else "unmet"
    parts = [
        f"<h2>Evidence {escape(str(view['ref']))} (attempt {view['attempt']}, "
        f"revision {view['revision']}, {escape(str(view['kind']))})</h2>",
        "<h3>Device</h3>",
        _table(["field", "value"], [[k, v] for k, v in sorted(view["device"].items())]),
    ]
    if view["status"]:
        parts.append(f"<p>status <b>{escape(str(view['status']))}</b> {_cell(view['message'])}</p>")
    if target:
        parts.append(
            f'<p class="{css}">target: expected <code>{_cell(target.get("expected"))}</code>, '
            f"observed <code>{_cell(target.get('observed'))}</code>, met: "
            f"{'yes' if met else 'no'}</p>"
        )
    heads = ["phase", "name", "value", "command", "at"]
    parts += ["<h3>Observations</h3>", _table(heads, _observation_rows(view["observations"]))]
    if view["polls"]:
        parts += ["<h3>Polls</h3>", _table(heads, _observation_rows(view["polls"]))]
    commands = [
        [argv_text(c.get("argv") or []), c.get("exit_code"), c.get("duration_ms"), c.get("at"),
         c.get("error") or ""]
        for c in view["commands"]
    ]  # fmt: skip
    parts += ["<h3>Commands</h3>", _table(["argv", "exit", "ms", "at", "error"], commands)]
    if view["artifacts"]:
        parts.append("<h3>Artifacts</h3>")
        parts += [artifact_html(n, v, folders, task_id) for n, v in view["artifacts"].items()]
    parts += [f"<p>note: {escape(str(n))}</p>" for n in view["notes"]]
    return "\n".join(parts)


def _row(cls: str, label: str, value: Any) -> str:
    """One line of the approval card: its class names the field (as the monitor's card
    does), its value is escaped text."""
    return f'<tr><th>{escape(label)}</th><td class="{cls}">{_cell(value)}</td></tr>'


def approval_section(pending: dict[str, Any], folders: Sequence[Path], task_id: str) -> str:
    """The pending approval card (the text card's content, ``approval_view.approval_lines``):
    what will be done (effect, target, the change from what to what, the data), where the
    request came from (conversation, source, the planner's rationale as escaped text in a
    ``<pre>``: HTML in it is shown, never parsed), what a denial means, the deadline, the
    void/stale marks, the screenshot the preview was taken from and the decision commands."""
    data = pending.get("data") if isinstance(pending.get("data"), dict) else {}
    rows = [_row("preview-effect", "effect", pending.get("effect"))]
    if pending.get("change") is not None:
        rows += [
            _row("preview-target", "target", pending.get("target")),
            _row("preview-change", "change", pending.get("change")),
        ]
    else:
        rows += [
            _row("preview-target", "recipient", recipient_text(pending)),
            _row("preview-text", "text", pending.get("text")),
            _row("preview-app", "app", pending.get("app")),
        ]
    rows += [
        _row(f"preview-data-{escape(str(key))}", f"data {key}", value)
        for key, value in sorted((data or {}).items())
    ]
    rows += [
        _row("origin-conversation", "conversation", pending.get("conversation_id")),
        _row("origin-source", "source", pending.get("source")),
        _row("revision", "revision", pending.get("revision")),
        _row("digest", "digest", pending.get("digest")),
        _row("after-denial", "if denied", pending.get("after_denial")),
        _row("deadline", "decide before", iso(pending.get("deadline"))),
    ]
    parts = ['<section id="pending-approval">', "<h2>Pending approval</h2>",
             f"<table>{''.join(rows)}</table>"]  # fmt: skip
    rationale = pending.get("rationale")
    if isinstance(rationale, str):
        parts.append(f'<p>rationale</p><pre class="origin-rationale">{escape(rationale)}</pre>')
    parts += [
        f'<p class="refused mark">{escape(str(mark["message"]))}</p>'
        for mark in (pending.get("void"), pending.get("stale"))
        if isinstance(mark, dict)
    ]
    if pending.get("screenshot"):
        parts.append(artifact_html("screenshot", pending["screenshot"], folders, task_id))
    parts += [
        f'<p>to approve:</p><pre class="approve-command">{escape(str(pending["approve_command"]))}</pre>',
        f'<p>to deny:</p><pre class="deny-command">{escape(str(pending["deny_command"]))}</pre>',
        "</section>",
    ]
    return "\n".join(parts)


def html_report(report: dict[str, Any], artifact_roots: Sequence[Path] = ()) -> str:
    """The page for one ``render_json`` report; artifact files are read only from the task's
    folder under one of ``artifact_roots`` (none given: no file is read)."""
    task = report["task"]
    transitions = [
        [e.get("at"), e.get("state_version"), e.get("state"), e.get("revision"),
         e.get("attempt"), e.get("reason"), e.get("requires_decision")]
        for e in report["transitions"]
    ]  # fmt: skip
    journal = [
        [j.get("started"), j.get("op_id"), j.get("action"), j.get("target"), j.get("attempt"),
         j.get("revision"), j.get("outcome") or "open", j.get("detail")]
        for j in report["journal"]
    ]  # fmt: skip
    title = escape(f"phoned task {task['id']} ({task['method']}, {task['state']})")
    pending = report.get("pending_approval")
    card = approval_section(pending, artifact_roots, str(task["id"])) if pending else ""
    body = [
        f"<h1>{title}</h1>",
        *([card] if card else []),
        _task_section(task),
        "<h2>Transitions</h2>",
        _table(["at", "v", "state", "rev", "attempt", "reason", "decision"], transitions),
        "<h2>Journal</h2>",
        _table(["started", "op", "action", "target", "attempt", "rev", "outcome", "detail"],
               journal),
    ]  # fmt: skip
    sections = [_evidence_section(v, artifact_roots, str(task["id"])) for v in report["evidence"]]
    body += sections or ["<h2>Evidence</h2><p>(none)</p>"]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
