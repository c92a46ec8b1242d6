"""The one redacted form of numbers and texts (``phoned.device.private``), the 0600/0700 helpers
(``phoned.foundation.private_files``) and the terminal sanitizer (``phoned.daemon.rendering.terminal``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from phoned.daemon.rendering.terminal import terminal_lines, terminal_text
from phoned.device import private
from phoned.foundation.digest import digest
from phoned.foundation.private_files import private_dir, sqlite_file, write_private

TO, BODY = "+15551234567", "Running late, start without me"


def test_forms_of_a_number_and_a_text() -> None:
    assert private.redact(TO) == "<number •••4567>"
    assert private.redact("(555) 123-4567") == "<number •••4567>"
    text = private.redact(BODY)
    assert text.startswith(f"<text {len(BODY)} chars sha256:") and BODY not in text
    assert private.redact(BODY) == text  # equal texts, equal forms
    assert private.redact(BODY + "!") != text
    assert private.redact(text) == text and private.stand_in(text)  # idempotent
    assert private.redact("1234") != "<number •••1234>"  # too few digits for a number


def test_scrub_redacts_secrets_anywhere_and_private_keys_whatever_they_hold() -> None:
    doc = {
        "argv": ["am", "start", "-d", f"smsto:{TO}", "--es", "sms_body", BODY],
        "sent_box": [{"_id": "7", "address": "+4915112345678", "body": "someone else's text"}],
        "conversation": [{"text": "an older message", "status": "Sent"}],
        "compose_text": "what the user typed",
        "preview": {
            "target": TO,
            "data": {"text": BODY, "app": "com.google.android.apps.messaging"},
        },
        "count": 3,
        "none": None,
    }
    out = private.scrub(doc, [TO, BODY])
    flat = repr(out)
    for clear in (TO, BODY, "+4915112345678", "someone else", "older message", "user typed"):
        assert clear not in flat, clear
    assert out["argv"][3] == "smsto:<number •••4567>"
    assert out["sent_box"][0]["address"] == "<number •••5678>"
    assert out["preview"]["data"]["app"] == "com.google.android.apps.messaging"
    assert (out["count"], out["none"], out["sent_box"][0]["_id"]) == (3, None, "7")
    assert private.scrub(out, [TO, BODY]) == out  # scrubbing again changes nothing


def test_a_secret_never_rewrites_a_stand_in() -> None:
    form = private.redact_text("hello")  # "<text 5 chars sha256:...>"
    out = private.replace_secrets(f"{form} and chars", ["chars"])  # a body of "chars"
    assert out == f"{form} and {private.redact_text('chars')}"


def test_restore_rebuilds_the_preview_its_digest_binds() -> None:
    clear = {"effect": "sms.send", "target": TO, "data": {"text": BODY, "app": "a"},
             "snapshot_digest": "sha256:screen"}  # fmt: skip
    stored = private.scrub(clear, [TO, BODY])
    assert stored != clear
    back = private.restore(stored, [TO, BODY])
    assert back == clear and digest(back) == digest(clear)
    assert digest(private.restore(stored, [TO, "another body"])) != digest(clear)


def test_scrub_markup_redacts_hierarchy_texts() -> None:
    xml = f'<node text="{BODY}" resource-id="x:id/compose" content-desc="{TO}" hint="" />'
    out = private.scrub_markup(xml)
    assert BODY not in out and TO not in out and 'resource-id="x:id/compose"' in out
    assert 'hint=""' in out


def test_private_files_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o002)
    try:
        folder = private_dir(tmp_path / "a" / "b")
        made = sqlite_file(folder / "queue.db", create=True)
        written = write_private(folder / "x.xml", "<hierarchy/>")
    finally:
        os.umask(old)
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "a", folder, made, written)}
    assert modes == {tmp_path / "a": 0o700, folder: 0o700, made: 0o600, written: 0o600}
    assert written.read_text() == "<hierarchy/>" and list(folder.glob(".*tmp")) == []


def test_terminal_text_escapes_controls_and_keeps_layout_lines() -> None:
    assert terminal_text("a\x1b]0;pwned\x07b") == "a\\x1b]0;pwned\\x07b"
    assert terminal_text("x\ny\rz\t\u202e\x9b") == "x\\ny\\rz\\t\\u202e\\x9b"
    assert terminal_text("Привет, 안녕 ✓") == "Привет, 안녕 ✓"  # printable text stays
    assert terminal_lines("one\x1b[2J\r\ntwo", indent="  ") == "one\\x1b[2J\n  two"


def test_the_store_keeps_evidence_redacted_whoever_wrote_it(tmp_path: Path) -> None:
    """A report posted with the number and body in clear (an old daemon, a hand-made POST
    to the plane) is kept redacted: the store scrubs with the task's own secrets."""
    import time

    from phoned.daemon.lifecycle.ingress import parse_ingress
    from phoned.daemon.store.sqlite_store import SqliteStore

    store = SqliteStore(str(tmp_path / "queue.db"))
    try:
        spec = parse_ingress({"method": "sms.send", "params": {"to": TO, "body": BODY},
                              "conversation_id": "c1"})  # fmt: skip
        task = store.submit(spec, time.time())  # type: ignore[arg-type]
        claimed = store.claim("d1/w0", "emulator-5554", time.time())
        assert claimed is not None and claimed.id == task.id
        raw = {"detail": {"preview": {"target": TO, "data": {"text": BODY}}},
               "note": f"sent {BODY!r} to {TO}"}  # fmt: skip
        store.put_evidence(claimed.ticket, "outcome", raw, time.time())
        [doc] = store.evidence(task.id)
        assert TO not in repr(doc) and BODY not in repr(doc)
        assert doc["body"]["detail"]["preview"]["target"] == "<number •••4567>"
        assert store.get(task.id).params == {"to": TO, "body": BODY}  # the one place in clear
    finally:
        store.close()
