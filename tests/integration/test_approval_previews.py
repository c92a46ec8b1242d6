"""The previews of bluetooth.set, app.open, app.close and permission.request through the
real ``phoned run`` on a simulated phone (issue #26 items 3 and 4): the policy or a task's
``require_approval`` asks, the card shows the change from what to what read from the
phone, approve completes, deny stops, a changed phone voids the approval; and
``phoned show --html`` renders the pending card with the rationale shown as text.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from phoned.daemon.lifecycle.states import FailureReason, TaskState
from phoned.daemon.rendering.approval_view import AFTER_DENIAL
from phoned_process import Daemon
from test_approval_policy import CONV, RATIONALE, decide, pending_of, phoned, voice_policy_daemon

pytestmark = pytest.mark.integration

NOTES = "com.example.notes"
LAUNCHER = "com.google.android.apps.nexuslauncher"


@pytest.fixture
def voice_daemon(adb_server: Any, tmp_path: Path) -> Iterator[Daemon]:
    """The voice policy, with every ``app.close`` asking too."""
    with voice_policy_daemon(adb_server, tmp_path, "app.close") as made:
        yield made


def _settled(daemon: Daemon, task_id: str, after: int) -> Any:
    """The task once it rests again after state version ``after`` (not queued or running)."""
    busy = (TaskState.QUEUED, TaskState.DISPATCHED, TaskState.RUNNING)
    return daemon.wait_for(task_id, lambda t: t.state_version > after and t.state not in busy)


def test_app_open_with_require_approval_previews_the_front_and_approve_completes(
    daemon: Daemon, sim_factory: Any, tmp_path: Path
) -> None:
    sim = sim_factory(sdk=34)
    daemon.start()
    task_id = daemon.submit(
        {"method": "app.open", "params": {"package": NOTES}, "require_approval": True,
         "rationale": RATIONALE}
    )  # fmt: skip
    paused = daemon.state(task_id, TaskState.APPROVAL)
    assert sim.phone.ui.top().package == LAUNCHER  # nothing started yet
    assert daemon.using(lambda store: store.journal(task_id)) == []

    pending = pending_of(daemon, task_id)
    assert (pending["effect"], pending["target"]) == ("app.open", NOTES)
    assert pending["change"] == f"app in front {LAUNCHER} -> {NOTES}"
    assert pending["data"]["package"] == NOTES
    assert pending["after_denial"] == AFTER_DENIAL and pending["rationale"] == RATIONALE

    # phoned show --html: the same card, the rationale's HTML shown as text
    report = tmp_path / "report.html"
    shown = phoned(daemon, "show", task_id, "--html", str(report))
    assert shown.exit_code == 0, shown.output
    card = card_of(report.read_text())
    assert card["preview-change"] == f"app in front {LAUNCHER} -> {NOTES}"
    assert card["preview-effect"] == "app.open" and card["preview-target"] == NOTES
    assert card["origin-source"] == "cli" and card["origin-conversation"] == CONV
    assert card["origin-rationale"] == RATIONALE  # the text itself, not parsed markup
    assert card["after-denial"] == AFTER_DENIAL
    assert card["approve-command"].startswith(f"phoned approve {task_id} --revision ")
    assert card["elements"] == []  # no <script> element came from the rationale

    decide(daemon, "approve", paused)
    done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED, TaskState.APPROVAL)
    assert done.state is TaskState.COMPLETED, done.failure
    assert sim.phone.ui.top().package == NOTES
    # the card is gone once decided
    again = phoned(daemon, "show", task_id, "--html", str(report), "--force")
    assert again.exit_code == 0 and 'id="pending-approval"' not in report.read_text()


def test_bluetooth_from_voice_previews_the_adapter_and_deny_stops_it(
    voice_daemon: Daemon, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=33)
    daemon = voice_daemon.start()
    task_id = daemon.submit(
        {"method": "bluetooth.set", "params": {"enabled": True}, "source": "voice"}
    )
    paused = daemon.state(task_id, TaskState.APPROVAL)
    pending = pending_of(daemon, task_id)
    assert pending["change"] == "bluetooth adapter OFF -> ON"
    assert pending["target"] == "bluetooth adapter" and pending["source"] == "voice"
    decide(daemon, "deny", paused)
    stopped = daemon.state(task_id, TaskState.STOPPED)
    assert stopped.failure is not None
    assert stopped.failure.reason is FailureReason.APPROVAL_DENIED
    assert sim.phone.settings.get("global", "bluetooth_on") == "0"
    assert not [a for a in sim.phone.log.argvs() if a[:2] == ("cmd", "bluetooth_manager")]


def test_app_close_by_the_method_policy_is_voided_by_a_changed_front(
    voice_daemon: Daemon, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon = voice_daemon.start()
    opened = daemon.submit({"method": "app.open", "params": {"package": NOTES}})
    assert daemon.state(opened, TaskState.COMPLETED, TaskState.FAILED).state is (
        TaskState.COMPLETED
    )
    task_id = daemon.submit({"method": "app.close", "params": {"package": NOTES}})
    paused = daemon.state(task_id, TaskState.APPROVAL)
    assert pending_of(daemon, task_id)["change"] == f"app {NOTES} in front -> force-stopped"

    sim.phone.ui.go_home()  # the person left the app before approving
    decide(daemon, "approve", paused)
    again = _settled(daemon, task_id, paused.state_version + 1)
    assert again.state is TaskState.APPROVAL, again.failure
    assert again.approval_digest != paused.approval_digest
    assert not [a for a in sim.phone.log.argvs() if a[:2] == ("am", "force-stop")]
    fresh = pending_of(daemon, task_id)
    assert fresh["change"] == f"app {NOTES} not in front (front: {LAUNCHER}) -> force-stopped"
    assert fresh["void"] is not None

    decide(daemon, "approve", again)
    done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED)
    assert done.state is TaskState.COMPLETED, done.failure
    assert ("am", "force-stop", NOTES) in sim.phone.log.argvs()


def test_permission_request_from_voice_asks_before_opening_the_screen(
    voice_daemon: Daemon, sim_factory: Any
) -> None:
    sim = sim_factory(sdk=34)
    daemon = voice_daemon.start()
    screen = "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS"
    task_id = daemon.submit(
        {"method": "permission.request", "source": "voice",
         "params": {"package": NOTES, "special": "dnd_access"}}
    )  # fmt: skip
    paused = daemon.state(task_id, TaskState.APPROVAL)
    pending = pending_of(daemon, task_id)
    assert pending["change"] == (
        f"access:dnd_access of {NOTES} not granted -> settings screen {screen} opened"
    )
    assert (pending["data"]["access"], pending["data"]["screen"]) == ("dnd_access", screen)
    assert not [a for a in sim.phone.log.argvs() if a[:2] == ("am", "start")]

    decide(daemon, "approve", paused)
    waiting = daemon.state(task_id, TaskState.PERMISSION, TaskState.FAILED, TaskState.COMPLETED)
    assert waiting.state is TaskState.PERMISSION, waiting.failure
    assert ("am", "start", "-W", "-a", screen) in sim.phone.log.argvs()

    sim.phone.notification.set_dnd_access(NOTES, True)  # the person flips the switch
    done = daemon.state(task_id, TaskState.COMPLETED, TaskState.FAILED, timeout=60)
    assert done.state is TaskState.COMPLETED, done.failure
    starts = [a for a in sim.phone.log.argvs() if a[:2] == ("am", "start")]
    assert starts == [("am", "start", "-W", "-a", screen)]  # the screen opened once


def test_the_html_card_in_chromium_shows_the_rationale_as_text(
    daemon: Daemon, sim_factory: Any, tmp_path: Path, chromium: Any
) -> None:
    """The report opened in a real headless Chromium: the card's fields read as the text
    card's, and a rationale carrying an ``onerror`` handler is shown, never run."""
    hostile = '<img src=x onerror="document.body.dataset.pwned=1"> Bluetooth for the car'
    sim_factory(sdk=34)
    daemon.start()
    task_id = daemon.submit(
        {"method": "bluetooth.set", "params": {"enabled": True}, "require_approval": True,
         "rationale": hostile}
    )  # fmt: skip
    daemon.state(task_id, TaskState.APPROVAL)
    report = tmp_path / "card.html"
    assert phoned(daemon, "show", task_id, "--html", str(report)).exit_code == 0
    page = chromium.page()
    page.call("Page.enable")
    page.call("Page.navigate", url=report.as_uri())
    page.wait_for(
        "document.readyState === 'complete' && !!document.getElementById('pending-approval')"
    )

    def text(cls: str) -> Any:
        return page.evaluate(f"document.querySelector('#pending-approval .{cls}').textContent")

    assert text("preview-change") == "bluetooth adapter OFF -> ON"
    assert text("origin-rationale") == hostile
    assert text("after-denial") == AFTER_DENIAL
    assert page.evaluate("document.body.dataset.pwned === undefined")
    assert page.evaluate("document.querySelectorAll('#pending-approval img').length") == 0


class _Card(HTMLParser):
    """The texts of the pending approval card by class, and every element inside a field
    (there should be none: each field is escaped text)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self.inside: list[str] = []  # the class of the field being read
        self.elements: list[str] = []
        self.in_card = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id") == "pending-approval":
            self.in_card = True
        if self.inside:
            self.elements.append(tag)
        cls = found.get("class") or ""
        if self.in_card and tag in ("td", "pre") and cls:
            self.inside.append(cls)
            self.fields[cls] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "pre") and self.inside:
            self.inside.pop()
        if tag == "section":
            self.in_card = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.fields[self.inside[-1]] += data


def card_of(page: str) -> dict[str, Any]:
    """The pending card's fields (``preview-change``...), and ``elements`` inside them."""
    parser = _Card()
    parser.feed(page)
    parser.close()
    return {**parser.fields, "elements": parser.elements}
