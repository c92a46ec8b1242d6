"""The baselines do the same work as phoned's actions: the phone receives the same commands.

Each method runs once through phoned, the ``adb shell`` script and stock adbutils against one
simulated phone (private adb server), and the phone's command log is compared: the same
distinct commands in the same order of first use, and round trips counted as the commands the
phone executed. A static check reads adb_shell.sh for every command word phoned sends.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from phoned.device import commands  # noqa: E402
from phoned.device.methods import bluetooth, dnd, volume  # noqa: E402

from bench.baselines import SHELL_SCRIPT  # noqa: E402
from bench.sections import methods  # noqa: E402
from scripts.stack import SimPhone, adb_server, sim_phone  # noqa: E402

pytestmark = pytest.mark.integration
CASE_NAMES = ["dnd.get", "dnd.set", "bluetooth.set", "volume.get", "volume.set", "sms.draft",
              "screen.snapshot"]  # fmt: skip


@pytest.fixture(scope="module")
def phone() -> Iterator[SimPhone]:
    with adb_server() as adb, sim_phone(adb, 34) as ph:
        bt = ph.sim.phone.bluetooth
        bt.TURN_ON_S, bt.TURN_OFF_S = 0.3, 0.2
        yield ph


def _commands(phone: SimPhone) -> list[tuple[str, ...]]:
    """What the phone executed, less stock adbutils' exit-code marker: its v1 ``shell2``
    appends ``; echo X4EXIT:$?`` to each command line (same round trip)."""
    return [
        a
        for a in phone.sim.phone.log.argvs()
        if not (a[:1] == ("echo",) and a[1:2] and a[1].startswith("X4EXIT:"))
    ]


def _distinct(argvs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return list(dict.fromkeys(argvs))


@pytest.mark.parametrize("name", CASE_NAMES)
def test_baselines_send_what_phoned_sends(phone: SimPhone, name: str) -> None:
    case = next(c for c in methods.cases(phone) if c.method == name)
    calls = {
        "phoned": methods.phoned_call(phone),
        "shell": methods.shell_call(phone, 34),
        "adbutils": methods.adbutils_call(phone, 34),
    }
    log = phone.sim.phone.log
    seen: dict[str, list[tuple[str, ...]]] = {}
    for impl, call in calls.items():
        case.reset()
        log.clear()
        ok, trips = call(case)
        seen[impl] = _commands(phone)
        assert ok, f"{impl} missed the target of {name}"
        assert trips == len(seen[impl]), f"{impl} counted {trips} trips for {seen[impl]}"
    assert _distinct(seen["shell"]) == _distinct(seen["phoned"])
    assert _distinct(seen["adbutils"]) == _distinct(seen["phoned"])
    if name != "bluetooth.set":  # its poll count depends on each client's speed
        assert seen["shell"] == seen["phoned"] == seen["adbutils"]


def test_hostile_body_reaches_the_phone_as_one_argument(phone: SimPhone) -> None:
    """The script's quoting for ``adb shell`` holds for quotes, $ and newlines."""
    body = 'it\'s $HOME; `id` "x" & <y>\nz'
    case = methods.Case(
        "sms.draft", {}, ("sms.draft", "+15550001111", body), phone.sim.phone.ui.go_home
    )
    case.reset()
    phone.sim.phone.log.clear()
    ok, _ = methods.shell_call(phone, 34)(case)
    starts = [a for a in _commands(phone) if a[:2] == ("am", "start")]
    assert ok and len(starts) == 1
    assert starts[0][starts[0].index("sms_body") + 1] == body


def _script_commands() -> list[list[str]]:
    """Every ``adb_sh WORDS`` call in the script, ``${VOL[@]}`` expanded to both tools."""
    text = SHELL_SCRIPT.read_text().replace("\\\n", " ")
    found = []
    for line in re.findall(r"\badb_sh ([^;\n]+)", text):
        line = line.split(";")[0].split(" fi")[0]
        for tool in ("cmd media_session volume", "media volume"):
            found.append(shlex.split(line.replace('"${VOL[@]}"', tool)))
    return found


def _matches(words: list[str], argv: tuple[str, ...]) -> bool:
    """Literal words equal, a ``$`` word (a value) matches any single argument."""
    return len(words) == len(argv) and all(
        "$" in w or w == a for w, a in zip(words, argv, strict=True)
    )


@pytest.mark.parametrize("sdk", [28, 34])
def test_script_has_every_command_phoned_sends(sdk: int) -> None:
    expected = [
        commands.ZEN_MODE_GET, dnd.set_dnd("priority"), bluetooth.DUMPSYS_BLUETOOTH,
        commands.BLUETOOTH_ON_GET, bluetooth.bluetooth_set(True, shell_command=sdk >= 33),
        volume.volume_get(sdk, 3), volume.volume_set(sdk, 3, 9), commands.sms_default_app(sdk),
        commands.DUMPSYS_POWER, commands.WAKEUP, commands.DUMPSYS_WINDOW_POLICY,
        commands.UI_DUMP_REMOVE, commands.UI_DUMP, commands.UI_DUMP_READ,
        commands.sms_compose("+1555", "b", "pkg"),
        commands.dumpsys_window_focus(sdk),
    ]  # fmt: skip
    script = _script_commands()
    missing = [argv for argv in expected if not any(_matches(w, argv) for w in script)]
    assert missing == []
