"""Hierarchy XML of the simulated screen against the real dumpers' formats."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import sms_intent

from phoned.sim.phone import Phone
from phoned.sim.ui import hierarchy
from phoned.sim.ui.intents import parse_start_args
from phoned.sim.ui.views import View, Window

FIXTURES = Path(__file__).parent.parent / "fixtures" / "android"


def fixture_body(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8").split("---\n", 1)[1].strip()


def node_attr_names(xml: str) -> list[str]:
    first = xml.index("<node ")
    tag = xml[first : xml.index(">", first)]
    return [part.split("=", 1)[0] for part in tag[len("<node ") :].split('" ') if "=" in part]


@pytest.mark.parametrize("sdk", [28, 30, 34])
def test_uiautomator_dump_attribute_order(sdk: int) -> None:
    xml = Phone(sdk=sdk).ui.hierarchy_xml(u2=False)
    assert xml.startswith(hierarchy.XML_DECL + '<hierarchy rotation="0"><node ')
    assert "\n" not in xml
    assert node_attr_names(xml) == fixture_body("ui-uiautomator-dump-node-attributes.txt").split()


def test_u2_dump_attribute_order_and_indentation() -> None:
    xml = Phone(sdk=34).ui.hierarchy_xml(u2=True)
    assert xml.startswith(hierarchy.XML_DECL + '\r\n<hierarchy rotation="0">\r\n  <node ')
    assert node_attr_names(xml) == fixture_body("ui-u2-node-attributes.txt").split()
    assert "display-id" not in Phone(sdk=28).ui.hierarchy_xml(u2=True)


def test_u2_dump_has_status_bar_clock_and_app_window() -> None:
    root = ET.fromstring(Phone(sdk=34).ui.hierarchy_xml(u2=True).encode("utf-8"))
    packages = [node.get("package") for node in root]
    assert packages == ["com.google.android.apps.nexuslauncher", "com.android.systemui"]
    clock = root.find(".//node[@resource-id='com.android.systemui:id/clock']")
    assert clock is not None and len(clock.get("text", "")) == 5


def test_bounds_are_clipped_to_the_display() -> None:
    view = View("android.widget.FrameLayout", (-10, 2300, 1200, 2600))
    style = hierarchy.DumpStyle(u2=False, sdk=34)
    xml = hierarchy.dump([Window("p", view, "p.A")], 0, style)
    assert 'bounds="[0,2300][1080,2400]"' in xml


def test_escaping_matches_kxmlserializer() -> None:
    assert hierarchy.escape_attr('a&b<c>"d"\ne\tf') == "a&amp;b&lt;c&gt;&quot;d&quot;&#10;e&#9;f"
    assert hierarchy.escape_attr("😀") == "&#128512;"


def test_u2_dumper_strips_surrogates_but_aosp_keeps_them() -> None:
    assert hierarchy.safe_text("hi😀\x01", u2=True) == "hi..."
    assert hierarchy.safe_text("hi😀", u2=False) == "hi😀"


def test_naf_attribute_precedes_index_for_unlabelled_clickables() -> None:
    view = View("android.widget.ImageView", (0, 0, 10, 10), clickable=True)
    xml = hierarchy.dump([Window("p", view, "p.A")], 0, hierarchy.DumpStyle(u2=False, sdk=34))
    assert '<node NAF="true" index="0"' in xml


def test_hostile_sms_body_round_trips_through_the_uiautomator_dump() -> None:
    body = "He said \"hi\" & <left>\nline2 'q' ‏שלום‏ 😀" + "x" * 10_000
    phone = Phone(sdk=34)
    phone.ui.start(parse_start_args(sms_intent("+15551234567", body)))
    root = ET.fromstring(phone.ui.hierarchy_xml(u2=False).encode("utf-8"))
    field = root.find(
        ".//node[@resource-id='com.google.android.apps.messaging:id/compose_message_text']"
    )
    assert field is not None and field.get("text") == body
    chip = root.find(
        ".//node[@resource-id='com.google.android.apps.messaging:id/recipient_text_view']"
    )
    # a number that is no contact, as AOSP Messaging's formatForDisplay shows it on a US phone
    assert chip is not None and chip.get("text") == "(555) 123-4567"
