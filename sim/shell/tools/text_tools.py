"""toybox text filters of the simulated phone: wc, grep, head, tail.

Sources: landley/toybox ``toys/posix/wc.c`` (no padding for a single count, otherwise
each count right-aligned in 7 columns, separated by a space, then the name),
``toys/posix/grep.c`` (exit 0 match, 1 none, 2 error; ``-c`` prints the count; several
files prefix ``name:``), ``toys/posix/head.c``/``tail.c`` (``-n N``, ``-N``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.shell.tools.file_tools import _read_inputs, split_flags


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


@tool("wc")
def wc(io: ToolIO, argv: list[str]) -> int:
    flags, _values, operands = split_flags(argv)
    chosen = [f for f in "lwc" if f in flags] or ["l", "w", "c"]
    inputs, status = _read_inputs(io, "wc", operands)
    pad = 0 if len(chosen) == 1 and len(inputs) == 1 else 7
    for label, data in inputs:
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        text = " ".join(f"{counts[f]:>{pad}}" for f in chosen)
        io.out(text + (f" {label}" if operands else "") + "\n")
    return status


def _grep_pattern(pattern: str, flags: set[str]) -> re.Pattern[str]:
    """Compile a grep pattern: ``-F`` literal, ``-E`` extended, default basic (BRE)."""
    if "F" in flags:
        source = re.escape(pattern)
    elif "E" in flags:
        source = pattern
    else:
        source = _bre_to_python(pattern)
    return re.compile(source, re.IGNORECASE if "i" in flags else 0)


def _bre_to_python(pattern: str) -> str:
    """In a BRE ``+ ? ( ) { } |`` are literal and ``\\( \\) \\{ \\} \\|`` are operators."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "(){}|+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "+?(){}|" else c)
        i += 1
    return "".join(out)


@tool("grep", "egrep", "fgrep")
def grep(io: ToolIO, argv: list[str]) -> int:
    """``grep [-ivcqEFnh] [-e PATTERN] PATTERN [FILE...]``."""
    flags, values, operands = split_flags(argv, with_value="e")
    flags |= {"egrep": {"E"}, "fgrep": {"F"}}.get(argv[0].rsplit("/", 1)[-1], set())
    if "e" in values:
        pattern = values["e"]
    elif operands:
        pattern, operands = operands[0], operands[1:]
    else:
        io.err("grep: No pattern\n")  # toybox: usage error
        return 2
    try:
        regex = _grep_pattern(pattern, flags)
    except re.error as exc:
        io.err(f"grep: {exc}\n")
        return 2
    inputs, status = _read_inputs(io, "grep", operands)
    found = False
    for label, data in inputs:
        matched = _grep_one(io, regex, flags, data, label if len(inputs) > 1 else "")
        found = found or matched
        if found and "q" in flags:
            return 0
    if status:
        return 2
    return 0 if found else 1


def _grep_one(io: ToolIO, regex: re.Pattern[str], flags: set[str], data: bytes, label: str) -> bool:
    prefix = f"{label}:" if label and "h" not in flags else ""
    count = 0
    for number, raw in enumerate(_lines(data), start=1):
        text = raw.decode("utf-8", "replace").rstrip("\n")
        if bool(regex.search(text)) == ("v" in flags):
            continue
        count += 1
        if "q" in flags or "c" in flags:
            continue
        line_no = f"{number}:" if "n" in flags else ""
        io.out(f"{prefix}{line_no}{text}\n")
    if "c" in flags and "q" not in flags:
        io.out(f"{prefix}{count}\n")
    return count > 0


def _count_option(argv: list[str]) -> tuple[int, list[str]]:
    """``-n N``, ``-nN`` or ``-N`` (default 10) and the remaining operands."""
    rest = []
    count = 10
    args = iter(argv[1:])
    for arg in args:
        if arg == "-n":
            count = int(next(args, "10"))
        elif arg.startswith("-n"):
            count = int(arg[2:])
        elif re.fullmatch(r"-\d+", arg):
            count = int(arg[1:])
        else:
            rest.append(arg)
    return count, rest


def _print_some_lines(
    io: ToolIO, name: str, argv: list[str], pick: Callable[[list[bytes], int], list[bytes]]
) -> int:
    """``head``/``tail``: ``pick(lines, count)`` of each input, under a ``==> NAME <==``
    header when there are several."""
    count, operands = _count_option(argv)
    inputs, status = _read_inputs(io, name, operands)
    for label, data in inputs:
        if len(inputs) > 1:
            io.out(f"==> {label} <==\n")
        io.stdout.write(b"".join(pick(_lines(data), count)))
    return status


@tool("head")
def head(io: ToolIO, argv: list[str]) -> int:
    return _print_some_lines(io, "head", argv, lambda lines, count: lines[:count])


@tool("tail")
def tail(io: ToolIO, argv: list[str]) -> int:
    return _print_some_lines(io, "tail", argv, lambda lines, count: lines[-count:] if count else [])
