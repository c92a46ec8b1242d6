"""Every text parameter reaches the phone as exactly one argument, and nothing else runs.

Proved through the simulated phone's command log (one entry per simple command with its
exact argv): a hostile body shows up once, whole, as the ``sms_body`` value of one ``am``
command; hostile numbers, packages, permissions and streams are refused before anything is
sent (a hostile ``to`` that is no number is a contact's name, matched on the daemon against
the phone book read with a fixed argv: it never reaches the phone).
"""

from __future__ import annotations

import pytest

from phoned.device import contacts
from phoned.device.actions import Status

pytestmark = [pytest.mark.integration, pytest.mark.sim_only]

TO = "+15551234567"
CORPUS = [
    "it's \"quoted\" 'twice'",
    "$(reboot) and ${HOME}",
    "`id` backticks",
    "a; touch /sdcard/pwned",
    "a && am force-stop com.android.settings",
    "a | cat /proc/version",
    "line one\nline two\r\nline three",
    "100% sure %s %d",
    "# not a comment",
    "back\\slash \\n \\",
    "emoji 😀👍🏽 and ZWJ 👩‍👩‍👧",
    "مرحبا بالعالم — עברית",
    "*?[a-z] ~ !! > /sdcard/x < /dev/null 2>&1 &",
    "x" * 9_990 + "$(id);`id`",
]
DRAFT_PROGRAMS = {"cmd", "settings", "dumpsys", "input", "uiautomator", "cat", "am", "rm"}
# The uiautomator2 client's own start of its server: md5 check of u2.jar, then app_process.
U2_START_PROGRAMS = {"toybox", "app_process"}
U2_START_ENV = {"CLASSPATH": "/data/local/tmp/u2.jar"}


@pytest.mark.sdks(28, 34)
@pytest.mark.parametrize("body", CORPUS, ids=[f"body{i}" for i in range(len(CORPUS))])
def test_hostile_body_is_one_argument_and_nothing_else_runs(dut, body) -> None:
    out = dut.run("sms.draft", {"to": TO, "body": body})
    assert out.status is Status.MET, out.message  # the composer holds exactly the body
    execs = dut.execs()
    assert {argv[0] for argv in execs} <= DRAFT_PROGRAMS | U2_START_PROGRAMS
    am = [argv for argv in execs if argv[0] == "am"]
    assert len(am) == 1
    assert am[0] == (
        "am", "start", "-W", "-a", "android.intent.action.SENDTO", "-d", f"smsto:{TO}",
        "--es", "sms_body", body, "-p", "com.google.android.apps.messaging",
    )  # fmt: skip
    assert not [e for e in dut.phone.log.entries("exec") if e.env and e.env != U2_START_ENV]
    assert not dut.phone.fs.exists("/sdcard/pwned") and not dut.phone.fs.exists("/sdcard/x")


@pytest.mark.sdks(34)
@pytest.mark.parametrize("value", CORPUS[:13], ids=[f"value{i}" for i in range(13)])
def test_hostile_identifiers_are_refused_before_anything_runs(dut, value) -> None:
    cases = [
        ("sms.draft", {"to": value, "body": "hi"}, "to"),
        ("sms.send", {"to": value, "body": "hi"}, "to"),
        (
            "permission.check",
            {"package": value, "permission": "android.permission.CAMERA"},
            "package",
        ),
        ("permission.request", {"package": "com.example.notes", "permission": value}, "permission"),
        (
            "permission.request",
            {
                "package": "com.example.notes",
                "special": "notification_listener",
                "component": value,
            },
            "component",
        ),
        ("volume.set", {"stream": value, "level": 1}, "stream"),
        ("dnd.set", {"mode": value}, "mode"),
    ]
    for method, params, field in cases:
        out = dut.run(method, params)
        assert out.status is Status.INVALID_PARAMS, (method, out.message)
        assert out.detail["field"] == field
    # A hostile ``to`` that is no number may be a contact's name: then the phone book is read
    # with its fixed argv and matched on the daemon (no contact has it: invalid_params naming
    # ``to``). The value itself reaches the phone in no command; nothing else runs.
    execs = dut.execs()
    assert set(execs) <= {contacts.phones_query()}, execs
    assert not any(value in arg for argv in execs for arg in argv)


@pytest.mark.sdks(34)
def test_hostile_body_is_sent_verbatim_after_approval(dut) -> None:
    body = CORPUS[6] + CORPUS[1] + CORPUS[10]
    first = dut.run("sms.send", {"to": TO, "body": body})
    out = dut.run(
        "sms.send", {"to": TO, "body": body}, approval_digest=first.detail["preview_digest"]
    )
    assert out.status is Status.MET, out.message
    assert [r["body"] for r in dut.phone.sms.rows if r["type"] == 2] == [body]
    assert body not in str(out.to_json()["evidence"])
