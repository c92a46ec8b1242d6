"""toybox ``ps``, ``kill``, ``pgrep``/``pkill`` and ``nohup`` over the phone's process table (``PhoneState.processes``).

Sources: landley/toybox ``toys/posix/ps.c``: on Android the default fields are
``USER,PID,PPID,VSIZE:10,RSS,WCHAN:10,ADDR:10,S,NAME`` (``ps_main``, ``CFG_IS_ANDROID``),
widths from its field table (USER -12, PID 6, PPID 6, RSS 6, NAME -27; negative is
left-aligned), one space between fields, the last one unpadded; without ``-A``/``-e`` only
the caller's own session (its ``sh`` and ``ps``). ``toys/posix/kill.c``: a pid that cannot
be signalled is ``perror_msg("bad pid '%s'")``, printed ``kill: bad pid '7': No such
process`` (or ``Operation not permitted`` for another user's process), exit 1.
The memory and wait columns are fixed placeholders: nothing reads them.
"""

from __future__ import annotations

import re

from phoned.sim.phone_state import Process
from phoned.sim.shell import registry
from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.shell.tools.file_tools import ENOENT, split_flags

# name -> (header, width; negative: left-aligned), from ps.c's field table.
FIELDS = {
    "USER": ("USER", -12), "PID": ("PID", 6), "PPID": ("PPID", 6), "VSIZE": ("VSZ", 10),
    "VSZ": ("VSZ", 7), "RSS": ("RSS", 6), "WCHAN": ("WCHAN", -10), "ADDR": ("ADDR", 10),
    "S": ("S", 1), "NAME": ("NAME", -27), "ARGS": ("ARGS", -27), "CMDLINE": ("CMDLINE", -27),
    "CMD": ("CMD", -15),
}  # fmt: skip
ANDROID_DEFAULT = ("USER", "PID", "PPID", "VSIZE", "RSS", "WCHAN", "ADDR", "S", "NAME")


def _value(process: Process, field: str) -> str:
    values = {
        "USER": process.user, "PID": str(process.pid), "PPID": str(process.ppid),
        "VSIZE": "10782796", "VSZ": "10782796", "RSS": "9960", "WCHAN": "0", "ADDR": "0",
        "S": "S", "NAME": process.name, "ARGS": process.args, "CMDLINE": process.args,
        "CMD": process.name.rsplit("/", 1)[-1][:15],
    }  # fmt: skip
    return values[field]


def _line(cells: list[tuple[str, int]]) -> str:
    out = []
    for index, (text, width) in enumerate(cells):
        last = index == len(cells) - 1
        if last:
            out.append(text)
        elif width < 0:
            out.append(text.ljust(-width))
        else:
            out.append(text.rjust(width))
    return " ".join(out).rstrip() + "\n"


@tool("ps")
def ps(io: ToolIO, argv: list[str]) -> int:
    """``ps [-A|-e] [-o FIELD,...] [-p PID,...]`` in toybox's Android layout."""
    flags, values, _ = split_flags(argv, with_value="opk")
    fields = [f.upper() for f in values["o"].split(",")] if "o" in values else ANDROID_DEFAULT
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        io.err(f'ps: bad -o {unknown[0]} (see "ps --help")\n')
        return 1
    with io.phone.lock:
        table = sorted(io.phone.processes.running.values(), key=lambda p: p.pid)
    if "p" in values:
        wanted = {int(p) for p in values["p"].split(",") if p.isdigit()}
        table = [p for p in table if p.pid in wanted]
    elif not flags & {"A", "e"}:
        session = Process(31000, 1142, "shell", "sh", "sh")
        table = [session, Process(31001, 31000, "shell", "ps", " ".join(argv))]
    io.out(_line([(FIELDS[f][0], FIELDS[f][1]) for f in fields]))
    for process in table:
        io.out(_line([(_value(process, f), FIELDS[f][1]) for f in fields]))
    return 0


def _signalled(process: Process) -> bool:
    """Signal ``process`` when the shell may: only its own processes, and only those the
    simulation can end; False means ``Operation not permitted`` (EPERM)."""
    if process.kill is None or process.user != "shell":
        return False
    process.kill()
    return True


@tool("kill")
def kill(io: ToolIO, argv: list[str]) -> int:
    """``kill [-9|-s SIG] PID...``: the shell may end its own processes only."""
    operands = [a for a in argv[1:] if not a.startswith("-")]
    if "-s" in argv[:-1]:
        operands.remove(argv[argv.index("-s") + 1])
    status = 0
    for arg in operands:
        with io.phone.lock:
            process = io.phone.processes.running.get(int(arg)) if arg.isdigit() else None
        if process is None:
            io.err(f"kill: bad pid '{arg}': No such process\n")
            status = 1
        elif not _signalled(process):
            io.err(f"kill: bad pid '{arg}': Operation not permitted\n")
            status = 1
    return status


def _matching(io: ToolIO, argv: list[str]) -> tuple[list[Process], str | None]:
    """Processes whose NAME (``-f``: whole command line) matches PATTERN as a regex."""
    flags = {a[1:] for a in argv[1:] if a.startswith("-") and a[1:] in ("f", "x", "l", "n", "o")}
    patterns = [a for a in argv[1:] if not a.startswith("-")]
    if not patterns:
        return [], None
    try:
        regex = re.compile(patterns[0])
    except re.error:
        return [], f"bad regex '{patterns[0]}'"
    with io.phone.lock:
        table = sorted(io.phone.processes.running.values(), key=lambda p: p.pid)
    found = []
    for process in table:
        text = process.args if "f" in flags else process.name.rsplit("/", 1)[-1]
        hit = regex.fullmatch(text) if "x" in flags else regex.search(text)
        if hit:
            found.append(process)
    return found, None


@tool("pgrep")
def pgrep(io: ToolIO, argv: list[str]) -> int:
    """``pgrep [-fl] PATTERN``: matching pids one a line (``-l`` adds the name); exit 1 when
    none matched (toybox ps.c pgrep, an extended regex as regcomp REG_EXTENDED)."""
    found, error = _matching(io, argv)
    if error:
        io.err(f"pgrep: {error}\n")
        return 2
    long = "-l" in argv
    io.out("".join(f"{p.pid} {p.name}\n" if long else f"{p.pid}\n" for p in found))
    return 0 if found else 1


@tool("pkill")
def pkill(io: ToolIO, argv: list[str]) -> int:
    """``pkill [-f] [-SIGNAL] PATTERN``: signal the matches; exit 1 when none matched. The
    shell may signal only its own processes (``Operation not permitted`` otherwise)."""
    found, error = _matching(io, argv)
    if error:
        io.err(f"pkill: {error}\n")
        return 2
    status = 0 if found else 1
    for process in found:
        if not _signalled(process):
            io.err(f"pkill: {process.pid}: Operation not permitted\n")
            status = 1
    return status


@tool("nohup")
def nohup(io: ToolIO, argv: list[str]) -> int:
    """``nohup COMMAND...`` (toybox nohup.c): the command itself, SIGHUP ignored; stdout is
    no terminal under adb, so nothing is redirected. No command: ``Need 1 argument``, 125."""
    if len(argv) < 2:
        io.err('nohup: Need 1 argument (see "nohup --help")\n')
        return 125
    command = registry.find_tool(argv[1], io.phone.sdk)
    if command is None:
        io.err(f"nohup: exec {argv[1]}: {ENOENT}\n")
        return 127
    return command(io, argv[1:])
