"""The systemd unit and the udev rule: required keys, hardening score, `systemd-analyze verify`.

The exposure figure comes from ``systemd-analyze security --offline=true`` (systemd 252+).
``systemd-analyze verify`` checks that ExecStart names an executable, and
``/opt/phoned/venv/bin/phoned`` only exists once installed; verifying inside a staged root
(``--root``) fails on the missing ``sysinit.target`` there. So verify runs on a copy of the
unit whose ExecStart is the ``phoned`` console script of the test venv: every other line is
the shipped one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from phoned.daemon.cli import main as cli_main
from phoned.daemon.config import Config

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "systemd" / "phoned.service"
UDEV_RULE = ROOT / "systemd" / "51-android.rules"
INSTALLED_EXEC = "/opt/phoned/venv/bin/phoned"
MAX_EXPOSURE = 2.0

Unit = dict[str, dict[str, list[str]]]

needs_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed"
)


def parse_unit(text: str) -> Unit:
    """Sections -> key -> every value in file order (systemd allows repeated keys)."""
    unit: Unit = {}
    section: dict[str, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = unit.setdefault(line[1:-1], {})
            continue
        assert section is not None, f"key outside a section: {line}"
        key, sep, value = line.partition("=")
        assert sep, f"not KEY=VALUE: {line}"
        section.setdefault(key.strip(), []).append(value.strip())
    return unit


def seconds(span: str) -> float:
    """A systemd time span ("45", "45s", "1min 30s", "500ms") in seconds (systemd.time(7))."""
    units = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 0.001, "m": 60.0, "min": 60.0, "h": 3600.0}
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", span):
        total += float(number) * units[unit]
    return total


@pytest.fixture(scope="module")
def service() -> dict[str, list[str]]:
    return parse_unit(SERVICE.read_text())["Service"]


def one(section: dict[str, list[str]], key: str) -> str:
    values = section.get(key, [])
    assert len(values) == 1, f"{key}: expected one value, got {values}"
    return values[0]


def test_parse_unit_keeps_repeated_keys() -> None:
    unit = parse_unit("[Service]\n# c\nEnvironment=A=1\nEnvironment=B=2\nType=notify\n")
    assert unit == {"Service": {"Environment": ["A=1", "B=2"], "Type": ["notify"]}}


def test_seconds_reads_systemd_time_spans() -> None:
    assert seconds("45") == 45
    assert seconds("1min 30s") == 90
    assert seconds("500ms") == 0.5


def test_service_notifies_readiness_and_has_a_watchdog(service: dict[str, list[str]]) -> None:
    assert one(service, "Type") == "notify"
    assert one(service, "NotifyAccess") == "main"
    assert seconds(one(service, "WatchdogSec")) > 0


def test_service_restarts_on_failure_only(service: dict[str, list[str]]) -> None:
    assert one(service, "Restart") == "on-failure"


def test_stop_timeout_outlasts_the_grace_period(service: dict[str, list[str]]) -> None:
    assert seconds(one(service, "TimeoutStopSec")) > Config().grace_period


def test_service_runs_as_dedicated_user_with_usb_group(service: dict[str, list[str]]) -> None:
    assert one(service, "User") == "phoned"
    assert "plugdev" in one(service, "SupplementaryGroups").split()
    assert one(service, "StateDirectory") == "phoned"
    environment = dict(v.split("=", 1) for v in service["Environment"])
    assert environment["HOME"] == "/var/lib/phoned"  # adb keys live in the state dir
    assert environment["PHONED_CONFIG"] == "/etc/phoned/phoned.yaml"


def test_exec_start_runs_an_existing_cli_verb(service: dict[str, list[str]]) -> None:
    program, *args = one(service, "ExecStart").split()
    assert program == INSTALLED_EXEC
    assert args == ["run"]
    assert "run" in cli_main.commands


def test_usb_devices_are_reachable_through_the_device_policy(
    service: dict[str, list[str]],
) -> None:
    assert one(service, "DevicePolicy") == "closed"
    assert "char-usb_device rw" in service["DeviceAllow"]
    assert "AF_NETLINK" in one(service, "RestrictAddressFamilies").split()  # USB hotplug


def test_udev_rule_grants_the_adb_interface_to_the_unit_group(
    service: dict[str, list[str]],
) -> None:
    rules = [line for line in UDEV_RULE.read_text().splitlines() if line and line[0] != "#"]
    assert len(rules) == 1
    rule = rules[0]
    # ADB interface: class 0xff, subclass 0x42, protocol 0x01 (AOSP packages/modules/adb/adb.h)
    assert 'ENV{ID_USB_INTERFACES}=="*:ff4201:*"' in rule
    assert 'ENV{DEVTYPE}=="usb_device"' in rule
    group = re.search(r'GROUP="([^"]+)"', rule)
    assert group is not None
    assert group.group(1) in one(service, "SupplementaryGroups").split()


def exposure(unit: Path) -> float:
    """The "Overall exposure level" systemd-analyze reports for ``unit``."""
    proc = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", proc.stdout)
    assert match, f"no exposure figure in:\n{proc.stdout}\n{proc.stderr}"
    return float(match.group(1))


@needs_analyze
def test_exposure_is_at_most_two() -> None:
    assert exposure(SERVICE) <= MAX_EXPOSURE


@needs_analyze
def test_exposure_check_notices_a_unit_without_hardening(tmp_path: Path) -> None:
    text = (
        SERVICE.read_text().split("# Hardening.")[0] + "\n[Install]\nWantedBy=multi-user.target\n"
    )
    weak = tmp_path / "phoned.service"
    weak.write_text(text)
    assert exposure(weak) > MAX_EXPOSURE


def venv_console_script() -> Path:
    """The ``phoned`` script of the venv running the tests (what ExecStart is pointed at)."""
    script = Path(sys.prefix) / "bin" / "phoned"
    found = script if script.exists() else Path(shutil.which("phoned") or "/nonexistent")
    if not found.exists():
        pytest.skip("no phoned console script in this environment")
    return found


def verify(unit: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["systemd-analyze", "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_analyze
def test_verify_is_clean_when_exec_start_exists(tmp_path: Path) -> None:
    script = venv_console_script()
    text = SERVICE.read_text().replace(f"ExecStart={INSTALLED_EXEC} ", f"ExecStart={script} ")
    assert f"ExecStart={script} run" in text
    copy = tmp_path / "phoned.service"
    copy.write_text(text)
    proc = verify(copy)
    assert proc.returncode == 0, proc.stderr
    assert "phoned.service" not in proc.stdout + proc.stderr


@needs_analyze
@pytest.mark.skipif(Path(INSTALLED_EXEC).exists(), reason="phoned is installed on this host")
def test_verify_reports_a_missing_exec_start() -> None:
    proc = verify(SERVICE)
    assert proc.returncode != 0
    assert INSTALLED_EXEC in proc.stderr
