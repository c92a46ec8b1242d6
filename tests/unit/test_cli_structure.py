"""``daemon/cli.py`` only assembles the group: every verb lives in ``phoned.daemon.verbs``."""

from __future__ import annotations

import importlib.util
import inspect
import socket
import subprocess
import sys

import click
from helpers import heavy_modules_after
from phoned.daemon import cli
from phoned.daemon.cli import main


def test_every_verb_is_defined_in_a_commands_module() -> None:
    places = {name: cmd.callback.__module__ for name, cmd in main.commands.items() if cmd.callback}
    assert {"sim", "doctor", "run", "submit", "serve"} <= set(places)
    assert all(module.startswith("phoned.daemon.verbs.") for module in places.values()), places


def test_cli_module_defines_no_verb_of_its_own() -> None:
    own = [
        name
        for name, value in vars(cli).items()
        if isinstance(value, click.Command) and inspect.getmodule(value.callback) is cli
    ]
    assert own == ["main"]
    assert importlib.util.find_spec("daemon.sim_command") is None  # folded into the sim verb


def test_sim_doctor_and_run_help_load_nothing_heavy() -> None:
    code = (
        "from click.testing import CliRunner; from phoned.daemon.cli import main; "
        "texts = [CliRunner().invoke(main, [v, '--help']).output for v in ('sim', 'doctor', 'run')]; "
        "assert all('Usage' in t for t in texts), texts"
    )
    heavy = {"pydantic", "yaml", "adbutils", "sqlite3", "device", "uiautomator2", "httpx"}
    assert heavy_modules_after(code, heavy) == []


def test_phoned_sim_serves_a_phone_until_terminated() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "phoned.daemon.cli", "sim", "--port", str(port), "--sdk", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "SDK 30" in first and f"listening on 127.0.0.1:{port}" in first, first
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert proc.returncode == 0
