"""The real uiautomator2 client drives the simulated phone through a real adb server."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
import uiautomator2 as u2
from helpers import sms_intent

pytestmark = pytest.mark.integration

COMPOSE = "com.google.android.apps.messaging:id/compose_message_text"


@pytest.fixture
def device(adb_server: Any, sim_factory: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    sim = sim_factory(sdk=34)
    # adbutils' module-level client fixed its port at import: hand u2 our server's device.
    d = u2.connect(adb_server.client.device(sim.serial))
    try:
        yield sim, d
    finally:
        d.stop_uiautomator(wait=False)


def test_dump_click_screenshot_and_selectors(device: Any) -> None:
    sim, d = device
    root = ET.fromstring(d.dump_hierarchy().encode("utf-8"))
    assert root.tag == "hierarchy" and len(root) >= 2
    assert d.info["displayWidth"] == 1080
    assert d.app_current()["package"] == "com.google.android.apps.nexuslauncher"

    d.shell(["am", "start", *sms_intent("5550100", 'quote " and \n newline 😀')])
    assert d(resourceId=COMPOSE).get_text() == 'quote " and \n newline 😀'
    assert d.app_current()["activity"].endswith(".ui.conversation.ConversationActivity")

    d.click(540, 1200)
    assert ("tap", "540", "1200") in [e.argv for e in sim.phone.log.entries("click")]

    image = d.screenshot()
    assert image.size == (1080, 2400)
