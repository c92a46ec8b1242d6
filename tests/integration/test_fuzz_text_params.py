"""Hostile text parameters reach the phone as exactly one argv element, and nothing else runs.

One simulated phone (SDK 34) serves the whole module. For each generated value the device
action runs; the phone's command log (``phone.log.argvs()``, one entry per simple command
the shell executed) must equal, element for element, the commands the action's recorder
says it ran (with the redacted stand-ins put back): no quoting slip split a value, and no
value smuggled in a second command. Invalid values run nothing at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from phoned.device import phone_numbers
from phoned.device.actions import Status, execute
from phoned.device.actions.base import ActionContext
from phoned.device.actions.params import PACKAGE
from phoned.device.adb import AdbServer as DeviceAdbServer
from phoned.device.connection import Device
from phoned.device.contacts import phones_query
from phoned.device.evidence import Recorder, redact
from phoned.sim.adb.stream_services import default_shell_factory
from phoned.sim.server import Simulator

pytestmark = pytest.mark.integration

TO = "+15551234567"
# What the uiautomator2 client runs to start its server (md5 of u2.jar, app_process): the
# UI session's own start, not the action's commands.
U2_SERVER_START = {("toybox",), ("app_process",)}
FUZZ = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def phone(adb_server) -> Iterator[tuple[Simulator, Device]]:
    sim = Simulator(sdk=34, shell_factory=default_shell_factory)
    sim.start()
    try:
        adb_server.connect(sim)
        device = Device(sim.serial, DeviceAdbServer(port=adb_server.port))
        assert device.capabilities is not None  # probed once, as the daemon does
        yield sim, device
        device.close()
    finally:
        adb_server.adb("disconnect", sim.serial, timeout=10)
        sim.stop()


def run(phone: tuple[Simulator, Device], method: str, params: dict[str, Any]) -> Any:
    """Run the action on a clean log; (outcome, what the phone ran, what the action ran)."""
    sim, device = phone
    sim.phone.log.clear()
    ctx = ActionContext(recorder=Recorder(device, method), settle_timeout=2.0, poll_interval=0.05)
    out = execute(method, params, ctx)
    # every value the recorder kept secret: the params, and what the action added (a
    # number as a URI encodes it, a contact's name)
    secrets = {redact(v): v for v in ctx.recorder.sensitive}
    ran = [
        tuple(unredact(a, secrets) for a in c.argv)
        for c in ctx.recorder.commands
        if c.argv[:1] != ("uiautomator2",)  # JSON-RPC calls of the UI session, not shell
    ]
    phone_ran = [a for a in sim.phone.log.argvs() if a[:1] not in U2_SERVER_START]
    return out, phone_ran, ran


def unredact(element: str, secrets: dict[str, str]) -> str:
    """``element`` with every redacted stand-in (whole or embedded) replaced by its value."""
    for stand_in, value in secrets.items():
        element = element.replace(stand_in, value)
    return element


def one_element(value: str, argvs: list[tuple[str, ...]]) -> int:
    """How many argv elements anywhere are exactly ``value``."""
    return sum(a.count(value) for a in argvs)


bodies = st.text(min_size=1, max_size=200).filter(lambda s: "\x00" not in s)
hostile = st.sampled_from(["$(reboot)", "`id`", "a; rm -rf /", "'\"\\", "%s %d", "-e x y", "\n"])


@FUZZ
@given(body=bodies | hostile)
def test_sms_draft_body_is_one_argv_element_and_nothing_else_runs(phone, body: str) -> None:
    out, phone_ran, action_ran = run(phone, "sms.draft", {"to": TO, "body": body})
    assert phone_ran == action_ran
    # met, or not_met when the hierarchy dump cannot show the text as typed (XML-hostile
    # control characters): either way the intent carried it as one element, once
    assert out.status in (Status.MET, Status.NOT_MET), out.message
    reused = any("already shows this draft" in n for n in out.evidence.notes)
    assert one_element(body, phone_ran) == (0 if reused else 1)


numbers = st.from_regex(r"\+?[0-9]{2,15}", fullmatch=True) | st.text(max_size=20)


@FUZZ
@given(to=numbers)
@example(to="0000000000")  # a national number the phone's region rewrites in E.164
def test_sms_draft_number_is_one_argv_element_or_nothing_runs(phone, to: str) -> None:
    out, phone_ran, action_ran = run(phone, "sms.draft", {"to": to, "body": "hi there"})
    assert phone_ran == action_ran
    if out.status is Status.INVALID_PARAMS and out.detail.get("field") == "to" and phone_ran:
        # a contact name no contact has: the phone book was read, the name never sent
        assert phone_ran == [phones_query()]  # a fixed argv: nothing of the name in it
        return
    if out.status is Status.INVALID_PARAMS:
        assert phone_ran == []
        return
    assert out.status is Status.MET, out.message
    # an earlier example may have left this very draft on screen (a number written another
    # way, or the same one replayed while shrinking): then nothing is sent again
    reused = any("already shows this draft" in n for n in out.evidence.notes)
    # the intent carries the number as the phone's region reads it (``0000000000`` on a US
    # phone is ``smsto:+10000000000``), the way recipient.py resolves it
    number = phone_numbers.canonical(to, phone[1].identity.region)
    sent = sum(1 for a in phone_ran for e in a if e == f"smsto:{number}")
    assert sent == (0 if reused else 1)


packages = st.from_regex(PACKAGE, fullmatch=True).filter(lambda p: len(p) < 80) | st.text(
    max_size=30
)


@FUZZ
@given(package=packages)
def test_permission_package_is_one_argv_element_or_nothing_runs(phone, package: str) -> None:
    params = {"package": package, "permission": "android.permission.CAMERA"}
    out, phone_ran, action_ran = run(phone, "permission.check", params)
    assert phone_ran == action_ran
    if PACKAGE.fullmatch(package) is None:
        assert out.status is Status.INVALID_PARAMS and phone_ran == []
        return
    # a read-only check: `dumpsys package PKG` (an unknown package is invalid_params after it)
    assert phone_ran == [("dumpsys", "package", package)], out.message
