"""The capability probes: each one's command pinned, the doc page's table derived from the
registry's probes, and the device context's source derived from what ran."""

from __future__ import annotations

import re
from pathlib import Path

from phoned.daemon.verbs import side_files
from phoned.device import probes
from phoned.device.actions import registry
from phoned.device.adb import ShellResult

DOC = Path(__file__).resolve().parents[2] / "docs" / "device-layer.md"

# name: the command it runs ("adb features": the transport's features, no shell)
PINNED = {
    "shell_v2": "adb features",
    "services": "cmd -l",
    "set_dnd": "cmd notification help",
    "cmd_bluetooth_manager": "cmd -l",
    "cmd_media_session": "cmd -l",
}


def test_every_probe_is_pinned_with_its_command() -> None:
    assert {p.name: p.command for p in registry.PROBES} == PINNED


def test_every_probe_cites_the_source_of_its_output() -> None:
    for probe in registry.PROBES:
        assert re.search(r"\.(cpp|java)\b|BluetoothShellCommand", probe.source), probe.name


def test_the_doc_page_holds_the_registry_probes_table() -> None:
    text = DOC.read_text()
    found = re.search(r"<!-- probes: start -->\n(.*?)<!-- probes: end -->", text, re.DOTALL)
    expected = side_files.probes_table()
    assert found is not None and found[1] == expected, (
        f"docs/device-layer.md: put this between the probes markers:\n{expected}"
    )


def test_a_shared_command_runs_once_and_the_sources_name_what_ran() -> None:
    class Phone:
        features = frozenset({"shell_v2", "cmd"})
        sdk = 33

        def __init__(self) -> None:
            self.reads: list[tuple[str, ...]] = []

        def read(self, argv: tuple[str, ...]) -> ShellResult:
            self.reads.append(argv)
            out = "Currently running services:\n  bluetooth_manager\n  audio\n"
            if argv == ("cmd", "notification", "help"):
                out = "Notification service (notification) commands:\n  set_dnd [on|off]\n"
            return ShellResult(" ".join(argv), out.encode(), b"", 0, 0.001)

    phone = Phone()
    caps = probes.run(phone, probes.CORE)
    assert phone.reads == [("cmd", "-l"), ("cmd", "notification", "help")]
    assert caps.sources() == "cmd -l; cmd notification help"
    assert caps.to_json() == {
        "shell_v2": True,
        "services": 2,
        "set_dnd": True,
        "cmd_bluetooth_manager": True,
        "cmd_media_session": False,
    }
    assert probes.run(phone, probes.CORE, caps) == caps and len(phone.reads) == 2
