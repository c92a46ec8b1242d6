"""toybox file and text tools of the simulated phone: cat, ls, rm, mkdir, touch, chmod,
md5sum, wc, grep, head, tail.

Error texts follow toybox ``lib/lib.c``: ``perror_msg`` prints ``NAME: ARG: strerror``
(e.g. ``md5sum: /x: No such file or directory``), ``error_msg`` prints ``NAME: text``; a
tool that reported an error exits 1 (``toys.exitval``). Sources: landley/toybox
``toys/posix/{cat,ls,rm,mkdir,touch,chmod,wc,grep,head,tail}.c``, ``toys/lsb/md5sum.c``
(``"%s  %s\\n"``, the hash then two spaces and the name).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable

from phoned.sim.phone_state import FileSystem
from phoned.sim.shell.registry import ToolIO, tool

ENOENT = "No such file or directory"

# What a tool does with one operand: (fs, the operand as typed, its absolute path) -> the
# error text after ``NAME: `` when it failed, else None.
OperandStep = Callable[[FileSystem, str, str], "str | None"]


def _path(io: ToolIO, arg: str) -> str:
    return io.phone.fs.normalize(arg, io.cwd)


def each_operand(io: ToolIO, name: str, operands: list[str], step: OperandStep) -> int:
    """Run ``step`` on every operand under the phone lock. As toybox tools do, an operand
    that fails prints ``NAME: ERROR`` (``error_msg``), makes the exit status 1
    (``toys.exitval``) and does not stop the operands after it."""
    status = 0
    with io.phone.lock:
        fs = io.phone.fs
        for arg in operands:
            error = step(fs, arg, fs.normalize(arg, io.cwd))
            if error is not None:
                io.err(f"{name}: {error}\n")
                status = 1
    return status


def _read_inputs(io: ToolIO, name: str, args: list[str]) -> tuple[list[tuple[str, bytes]], int]:
    """(label, data) of each file argument (stdin for none or ``-``) and the exit code so far."""
    if not args:
        return [("-", io.stdin)], 0
    inputs: list[tuple[str, bytes]] = []
    status = 0
    for arg in args:
        if arg == "-":
            inputs.append(("-", io.stdin))
            continue
        try:
            with io.phone.lock:
                inputs.append((arg, io.phone.fs.read(_path(io, arg))))
        except FileNotFoundError:
            io.err(f"{name}: {arg}: {ENOENT}\n")
            status = 1
        except IsADirectoryError:
            io.err(f"{name}: {arg}: Is a directory\n")
            status = 1
    return inputs, status


def split_flags(
    argv: list[str], with_value: str = ""
) -> tuple[set[str], dict[str, str], list[str]]:
    """Short options (``-la``), options taking a value (``-n 5``/``-n5``), operands."""
    flags: set[str] = set()
    values: dict[str, str] = {}
    operands: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "--":
            operands.extend(args)
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        body = arg[1:]
        for index, flag in enumerate(body):
            if flag in with_value:
                values[flag] = body[index + 1 :] or next(args, "")
                break
            flags.add(flag)
    return flags, values, operands


@tool("cat")
def cat(io: ToolIO, argv: list[str]) -> int:
    inputs, status = _read_inputs(io, "cat", argv[1:])
    for _label, data in inputs:
        io.stdout.write(data)
    return status


@tool("md5sum")
def md5sum(io: ToolIO, argv: list[str]) -> int:
    """``<md5>  <name>`` per input (toybox md5sum.c)."""
    inputs, status = _read_inputs(io, "md5sum", [a for a in argv[1:] if not a.startswith("-")])
    for label, data in inputs:
        io.out(f"{hashlib.md5(data).hexdigest()}  {label}\n")
    return status


# ------------------------------------------------------------------ ls


def _owner(path: str) -> tuple[str, str]:
    """Owner and group a Pixel shows for a path (``ls -l`` under /sdcard or /data/local/tmp)."""
    if path.startswith("/data/local/tmp"):
        return "shell", "shell"
    if path.startswith(("/sdcard", "/storage")):
        return "root", "sdcard_rw"
    return "root", "root"


def _mode_string(mode: int, is_dir: bool) -> str:
    bits = "rwxrwxrwx"
    perms = "".join(bits[i] if mode & (1 << (8 - i)) else "-" for i in range(9))
    return ("d" if is_dir else "-") + perms


def _long_rows(io: ToolIO, base: str, names: list[str]) -> list[list[str]]:
    fs = io.phone.fs
    rows = []
    for name in names:
        path = fs.normalize(name, base)
        is_dir = fs.is_dir(path)
        entry = fs.files.get(path)
        mode = 0o771 if is_dir else (entry.mode if entry else 0o644)
        size = 4096 if is_dir else len(entry.data) if entry else 0
        mtime = entry.mtime if entry else 0
        user, group = _owner(path)
        stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime(mtime))
        nlink = "2" if is_dir else "1"
        rows.append([_mode_string(mode, is_dir), nlink, user, group, str(size), stamp, name])
    return rows


def _format_long(rows: list[list[str]]) -> str:
    """toybox ls -l columns: mode, links, user, group, size, ``%Y-%m-%d %H:%M``, name."""
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [
        f"{r[0]} {r[1]:>{widths[1]}} {r[2]:<{widths[2]}} {r[3]:<{widths[3]}} "
        f"{r[4]:>{widths[4]}} {r[5]} {r[6]}"
        for r in rows
    ]
    return "\n".join(lines) + "\n"


@tool("ls")
def ls(io: ToolIO, argv: list[str]) -> int:
    """One name per line (stdout is not a tty under adb), ``-a`` and ``-l`` supported."""
    flags, _values, operands = split_flags(argv)
    targets = operands or ["."]

    def list_one(fs: FileSystem, target: str, path: str) -> str | None:
        if not fs.exists(path):
            return f"{target}: {ENOENT}"
        if not fs.is_dir(path) or "d" in flags:
            names, base = [target], io.cwd
        else:
            names = ([".", ".."] if "a" in flags else []) + [
                n for n in fs.listdir(path) if "a" in flags or not n.startswith(".")
            ]
            base = path
        if len(targets) > 1 and fs.is_dir(path):
            io.out(f"{target}:\n")
        if "l" in flags:
            if fs.is_dir(path) and "d" not in flags:
                io.out(f"total {len(names) * 8}\n")
            io.out(_format_long(_long_rows(io, base, names)))
        else:
            io.out("".join(n + "\n" for n in names))
        return None

    return each_operand(io, "ls", targets, list_one)


# ------------------------------------------------------------------ mutating tools


@tool("rm")
def rm(io: ToolIO, argv: list[str]) -> int:
    flags, _values, operands = split_flags(argv)

    def remove(fs: FileSystem, arg: str, path: str) -> str | None:
        if fs.is_dir(path):
            if not flags & {"r", "R"}:
                return f"{arg}: Is a directory"
            fs.remove_tree(path)
        elif path in fs.files:
            fs.remove(path)
        elif "f" not in flags:
            return f"{arg}: {ENOENT}"
        return None

    return each_operand(io, "rm", operands, remove)


@tool("mkdir")
def mkdir(io: ToolIO, argv: list[str]) -> int:
    """``mkdir [-p] DIR...``; toybox quotes the name: ``mkdir: '/x': File exists``."""
    flags, _values, operands = split_flags(argv, with_value="m")

    def make(fs: FileSystem, arg: str, path: str) -> str | None:
        if fs.exists(path):
            return None if "p" in flags and fs.is_dir(path) else f"'{arg}': File exists"
        try:
            fs.mkdir(path, parents="p" in flags)
        except FileNotFoundError:
            return f"'{arg}': {ENOENT}"
        return None

    return each_operand(io, "mkdir", operands, make)


def _touch_one(fs: FileSystem, arg: str, path: str) -> str | None:
    if fs.is_dir(path):
        return None
    entry = fs.files.get(path)
    try:
        fs.write(path, entry.data if entry else b"")
    except FileNotFoundError:
        return f"'{arg}': {ENOENT}"
    return None


@tool("touch")
def touch(io: ToolIO, argv: list[str]) -> int:
    _flags, _values, operands = split_flags(argv)
    return each_operand(io, "touch", operands, _touch_one)


@tool("chmod")
def chmod(io: ToolIO, argv: list[str]) -> int:
    """``chmod OCTAL FILE...`` or ``[ugoa]+-[rwx]``."""
    _flags, _values, operands = split_flags(argv)
    if len(operands) < 2:
        io.err("chmod: Need 2 arguments\n")
        return 1
    spec, files = operands[0], operands[1:]
    status = 0
    with io.phone.lock:
        for arg in files:
            path = _path(io, arg)
            entry = io.phone.fs.files.get(path)
            if entry is None:
                if not io.phone.fs.is_dir(path):
                    io.err(f"chmod: {arg}: {ENOENT}\n")
                    status = 1
                continue
            new = _apply_mode(entry.mode & 0o7777, spec)
            if new is None:
                io.err(f"chmod: bad mode '{spec}'\n")
                return 1
            entry.mode = (entry.mode & ~0o7777) | new
    return status


def _apply_mode(mode: int, spec: str) -> int | None:
    if re.fullmatch(r"[0-7]{1,4}", spec):
        return int(spec, 8)
    m = re.fullmatch(r"([ugoa]*)([+\-=])([rwx]*)", spec)
    if m is None:
        return None
    who = m.group(1) or "a"
    shifts = {"u": [6], "g": [3], "o": [0], "a": [6, 3, 0]}
    bits = sum({"r": 4, "w": 2, "x": 1}[c] for c in m.group(3))
    mask = sum(bits << s for w in who for s in shifts[w])
    if m.group(2) == "+":
        return mode | mask
    if m.group(2) == "-":
        return mode & ~mask
    clear = sum(7 << s for w in who for s in shifts[w])
    return (mode & ~clear) | mask
