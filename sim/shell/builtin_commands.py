"""Builtins of the simulated ``/system/bin/sh`` (mksh): the commands the shell runs itself.

Each builtin is ``(state, io, argv) -> exit code`` and may change ``state`` (cwd, variables,
a requested exit). Texts follow MirBSD/mksh ``funcs.c``/``c_test.c``; errors are prefixed
with the shell name and the builtin (mksh ``bi_errorf``): ``/system/bin/sh: cd: /x: ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from phoned.sim.shell.registry import ToolIO

SHELL_NAME = "/system/bin/sh"


@dataclass
class ShellState:
    """What one ``sh -c`` process remembers between its simple commands."""

    variables: dict[str, str]
    exported: set[str]
    cwd: str = "/"
    status: int = 0  # $?
    exit_code: int | None = None  # set by ``exit`` (or a dropped transport): stop the line
    functions: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        """The exported variables, as a child process would inherit them."""
        return {k: v for k, v in self.variables.items() if k in self.exported}

    def copy(self) -> ShellState:
        """A subshell's view: same values, independent changes."""
        return ShellState(dict(self.variables), set(self.exported), self.cwd, self.status)


Builtin = Callable[[ShellState, ToolIO, list[str]], int]


def bi_error(io: ToolIO, argv: list[str], message: str) -> None:
    io.err(f"{SHELL_NAME}: {argv[0]}: {message}\n")


# ------------------------------------------------------------------ echo

# Backslash escapes of mksh's echo (funcs.c c_print with escapes enabled; Android builds
# mksh without MKSH_BINSHREDUCED, so echo expands escapes by default and takes -n/-e/-E).
_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\",
}  # fmt: skip


def expand_echo_escapes(text: str) -> tuple[str, bool]:
    """Expand echo escapes; the flag is False when ``\\c`` asked to stop all output there."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "c":
            return "".join(out), False
        if nxt == "0":
            j = i + 2
            while j < len(text) and j < i + 5 and text[j] in "01234567":
                j += 1
            out.append(chr(int(text[i + 2 : j] or "0", 8) & 0xFF))
            i = j
            continue
        out.append(_ESCAPES.get(nxt, "\\" + nxt))
        i += 2
    return "".join(out), True


def _echo_options(argv: list[str]) -> tuple[bool, bool, int]:
    """(newline, escapes, index of first operand): ``-n -e -E`` (combinable) until another."""
    newline, escapes, i = True, True, 1
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        flags = argv[i][1:]
        if any(f not in "neE" for f in flags):
            break
        for f in flags:
            if f == "n":
                newline = False
            else:
                escapes = f == "e"
        i += 1
    return newline, escapes, i


def builtin_echo(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    """mksh echo: arguments joined by spaces, escapes expanded, newline unless ``-n``."""
    newline, escapes, start = _echo_options(argv)
    text = " ".join(argv[start:])
    if escapes:
        text, go_on = expand_echo_escapes(text)
        newline = newline and go_on
    io.out(text + ("\n" if newline else ""))
    return 0


# ------------------------------------------------------------------ state builtins


def builtin_true(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    return 0


def builtin_false(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    return 1


def builtin_cd(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    """Change the shell's cwd; a missing directory fails with exit 2 (mksh c_cd)."""
    target = argv[1] if len(argv) > 1 else state.variables.get("HOME", "/")
    path = io.phone.fs.normalize(target, state.cwd)
    with io.phone.lock:
        is_dir, exists = io.phone.fs.is_dir(path), io.phone.fs.exists(path)
    if not is_dir:
        reason = "Not a directory" if exists else "No such file or directory"
        bi_error(io, argv, f"{target}: {reason}")
        return 2
    state.cwd = path
    state.variables["OLDPWD"] = state.variables.get("PWD", "/")
    state.variables["PWD"] = path
    return 0


def builtin_pwd(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    io.out(state.cwd + "\n")
    return 0


def builtin_exit(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    """Stop the whole line with ``N`` (default ``$?``)."""
    code = state.status
    if len(argv) > 1:
        try:
            code = int(argv[1]) & 0xFF
        except ValueError:
            bi_error(io, argv, f"{argv[1]}: bad number")
            code = 1
    state.exit_code = code
    return code


def builtin_export(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    for arg in argv[1:]:
        name, sep, value = arg.partition("=")
        if sep:
            state.variables[name] = value
        state.exported.add(name)
    return 0


def builtin_unset(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    for name in argv[1:]:
        state.variables.pop(name, None)
        state.exported.discard(name)
    return 0


# ------------------------------------------------------------------ test / [


class _TestError(Exception):
    pass


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise _TestError(f"{text}: bad number") from None


_INT_OPS: dict[str, Callable[[int, int], bool]] = {
    "-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b, "-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b,
}  # fmt: skip
_STR_OPS: dict[str, Callable[[str, str], bool]] = {
    "=": lambda a, b: a == b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _unary(state: ShellState, io: ToolIO, op: str, arg: str) -> bool:
    fs = io.phone.fs
    path = fs.normalize(arg, state.cwd)
    with io.phone.lock:
        checks: dict[str, Callable[[], bool]] = {
            "-z": lambda: arg == "",
            "-n": lambda: arg != "",
            "-e": lambda: fs.exists(path),
            "-f": lambda: path in fs.files,
            "-d": lambda: fs.is_dir(path),
            "-s": lambda: path in fs.files and bool(fs.files[path].data),
            "-r": lambda: fs.exists(path),
            "-w": lambda: fs.exists(path),
            "-x": lambda: fs.is_dir(path),
        }
        if op not in checks:
            raise _TestError(f"{op}: unexpected operator")
        return checks[op]()


def _evaluate(state: ShellState, io: ToolIO, args: list[str]) -> bool:
    if args and args[0] == "!":
        return not _evaluate(state, io, args[1:])
    if not args:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        return _unary(state, io, args[0], args[1])
    if len(args) == 3:
        a, op, b = args
        if op in _STR_OPS:
            return _STR_OPS[op](a, b)
        if op in _INT_OPS:
            return _INT_OPS[op](_int(a), _int(b))
    for i, word in enumerate(args):
        if word in ("-a", "-o") and 0 < i < len(args) - 1:
            left, right = _evaluate(state, io, args[:i]), _evaluate(state, io, args[i + 1 :])
            return (left and right) if word == "-a" else (left or right)
    raise _TestError(f"{args[1]}: unexpected operator/operand")


def builtin_test(state: ShellState, io: ToolIO, argv: list[str]) -> int:
    """``test``/``[``: 0 true, 1 false, 2 on a usage error (mksh c_test.c T_ERR_EXIT)."""
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            bi_error(io, argv, "missing ]")
            return 2
        args = args[:-1]
    try:
        return 0 if _evaluate(state, io, args) else 1
    except _TestError as exc:
        bi_error(io, argv, str(exc))
        return 2


BUILTINS: dict[str, Builtin] = {
    ":": builtin_true,
    "true": builtin_true,
    "false": builtin_false,
    "echo": builtin_echo,
    "cd": builtin_cd,
    "pwd": builtin_pwd,
    "exit": builtin_exit,
    "export": builtin_export,
    "unset": builtin_unset,
    "test": builtin_test,
    "[": builtin_test,
}
