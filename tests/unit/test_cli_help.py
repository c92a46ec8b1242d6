"""``phoned --help`` lists every command with its first sentence whole, and click's shell
completion works for the installed ``phoned`` script (``docs/cli.md``, "Shell completion")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from phoned.daemon.cli import main

PHONED = Path(sys.executable).with_name("phoned")  # the console script of this environment


def commands_section(text: str) -> list[str]:
    return text.split("\nCommands:\n", 1)[1].splitlines()


@pytest.mark.parametrize("args", [["--help"], ["workflow", "--help"]])
def test_no_command_line_of_help_is_cut_short(args: list[str]) -> None:
    result = CliRunner().invoke(main, args, terminal_width=80)
    assert result.exit_code == 0, result.output
    lines = commands_section(result.stdout)
    assert lines and not [line for line in lines if line.rstrip().endswith("...")]


def test_help_shows_each_first_sentence_whole() -> None:
    listed = " ".join(
        " ".join(commands_section(CliRunner().invoke(main, ["--help"]).stdout)).split()
    )
    for name, command in main.commands.items():
        sentence = command.get_short_help_str(limit=sys.maxsize)
        assert sentence and f"{name} {sentence}" in listed, name


def completion(shell_var: str, **extra: str) -> subprocess.CompletedProcess[str]:
    assert PHONED.exists(), f"no console script at {PHONED}"
    env = {**os.environ, "_PHONED_COMPLETE": shell_var, **extra}
    return subprocess.run(
        [str(PHONED)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("source", "marker"),
    [
        ("bash_source", "complete -o nosort -F _phoned_completion phoned"),
        ("zsh_source", "#compdef phoned"),
        ("fish_source", "complete --no-files --command phoned"),
    ],
)
def test_the_completion_script_is_printed(source: str, marker: str) -> None:
    printed = completion(source)
    assert printed.returncode == 0, printed.stderr
    assert marker in printed.stdout and "_PHONED_COMPLETE" in printed.stdout


def test_bash_completes_verbs_and_options() -> None:
    verbs = completion("bash_complete", COMP_WORDS="phoned sh", COMP_CWORD="1")
    assert verbs.returncode == 0 and "plain,show" in verbs.stdout.splitlines()
    options = completion("bash_complete", COMP_WORDS="phoned show x --ht", COMP_CWORD="3")
    assert "plain,--html" in options.stdout.splitlines()
