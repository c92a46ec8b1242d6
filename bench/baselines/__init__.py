"""The same verified work done without phoned: a bash script and stock adbutils."""

from __future__ import annotations

from pathlib import Path

SHELL_SCRIPT = Path(__file__).with_name("adb_shell.sh")
