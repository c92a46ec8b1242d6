"""Pure parsers from raw device output to values. No I/O; tested on captured real output."""

from __future__ import annotations

import re

_GETPROP_LINE = re.compile(r"^\[(?P<key>[^\]]+)\]: \[(?P<value>.*)\]$", re.DOTALL)


def parse_getprop(text: str) -> dict[str, str]:
    """``getprop`` without arguments: ``[key]: [value]`` per line into a dict.

    A value may span several lines (some vendor props hold newlines); continuation lines are
    joined back with ``\\n``.
    """
    props: dict[str, str] = {}
    pending: list[str] = []
    for line in text.splitlines():
        if pending:
            pending.append(line)
            joined = "\n".join(pending)
            match = _GETPROP_LINE.match(joined)
            if match:
                props[match["key"]] = match["value"]
                pending = []
            continue
        match = _GETPROP_LINE.match(line)
        if match:
            props[match["key"]] = match["value"]
        elif line.startswith("["):
            pending = [line]
    return props


def parse_service_list(text: str) -> frozenset[str]:
    """``cmd -l`` (``Currently running services:`` then one indented name per line)."""
    names = set()
    for line in text.splitlines():
        if line.startswith((" ", "\t")) and line.strip():
            names.add(line.strip())
    return frozenset(names)


def help_lists_command(help_text: str, command: str) -> bool:
    """Whether a ``cmd SERVICE help`` text documents ``command`` as a subcommand."""
    return re.search(rf"^\s*{re.escape(command)}\b", help_text, re.MULTILINE) is not None


def parse_features(text: str) -> frozenset[str]:
    """The adb ``features`` reply: a comma-separated list."""
    return frozenset(f.strip() for f in text.split(",") if f.strip())
