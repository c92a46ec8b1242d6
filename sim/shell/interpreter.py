"""The simulated phone's ``/system/bin/sh -c LINE``: what adbd runs for ``shell:``/``exec:``.

``Shell(phone).run(line, stdout, stderr, stdin=b"", cancelled=None) -> exit code``.

Execution model (mksh, non-interactive):

* the line is parsed one newline-terminated list at a time (``shell_parse.Parser``), so a
  syntax error on a later line lets earlier lines run, as mksh's ``compile()`` loop does;
* a pipeline runs each stage to completion and feeds its stdout bytes to the next stage;
* every simple command that names a program or builtin is counted with
  ``phone.command_started()`` (False: the transport was dropped, the line stops with 255)
  and logged exactly once with ``phone.log.record("exec", ...)`` *after* it finishes, with
  its exit code, or ``exit_code=None`` when the host cancelled it while it ran. A bare
  ``VAR=x`` runs no program and is neither counted nor logged;
* the interpreter never holds ``phone.lock`` while a tool runs; it takes it only for the
  short file-system touches of redirections.

Messages: not found ``/system/bin/sh: NAME: inaccessible or not found`` with 127 (captured
Android output, e.g. ``/system/bin/sh: su: inaccessible or not found``); redirection
failures ``/system/bin/sh: can't create PATH: REASON`` / ``can't open`` (mksh ``exec.c``
``iosetup``); syntax errors see ``shell_parse``.

No pathname (glob) expansion, functions, or compound commands: the latter are refused as
syntax errors (see ``shell_parse``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from phoned.sim.shell import registry
from phoned.sim.shell.builtin_commands import BUILTINS, SHELL_NAME, ShellState
from phoned.sim.shell.parse import (
    AndOr,
    Parser,
    Pipeline,
    Redirect,
    Segment,
    ShellSyntaxError,
    SimpleCommand,
    Word,
)
from phoned.sim.shell.registry import BufferSink, OutputSink, ToolIO

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

DROPPED_EXIT = 255  # the transport fell away mid-line
SHELL_PID = "4242"
IFS_WHITESPACE = " \t\n"
# What adbd's shell starts with (AOSP system/core/rootdir/init.environ.rc.in exports these).
DEFAULT_ENV = {
    "PATH": "/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:"
    "/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
    "HOME": "/",
    "SHELL": SHELL_NAME,
    "ANDROID_DATA": "/data",
    "ANDROID_ROOT": "/system",
    "ANDROID_STORAGE": "/storage",
    "EXTERNAL_STORAGE": "/sdcard",
    "TMPDIR": "/data/local/tmp",
    "USER": "shell",
    "LOGNAME": "shell",
}
# Directories a slash-containing command name may point into and still reach a tool.
BIN_DIRS = ("/system/bin", "/system/xbin", "/vendor/bin", "/product/bin", "/system_ext/bin")
# Where a redirection may not write, with the errno text the kernel would give.
READ_ONLY_PREFIXES = ("/system", "/vendor", "/product", "/apex", "/system_ext", "/odm")
DENIED_PREFIXES = ("/proc", "/sys", "/data/data", "/data/system", "/data/misc")


class _RedirectError(Exception):
    """A redirection could not be set up; ``str(exc)`` is mksh's message."""


class _NullSink:
    def write(self, data: bytes) -> None:
        return None


class _FileSink:
    """Appends every write to a file of ``phone.fs`` (created or truncated at open)."""

    def __init__(self, phone: PhoneState, path: str) -> None:
        self.phone = phone
        self.path = path

    def write(self, data: bytes) -> None:
        with self.phone.lock:
            self.phone.fs.write(self.path, data, append=True)


def write_error(path: str) -> str | None:
    """The errno text a shell user (uid 2000) gets creating ``path``, or None if allowed."""
    if path == "/dev/null":
        return None
    if any(path == p or path.startswith(p + "/") for p in READ_ONLY_PREFIXES):
        return "Read-only file system"
    if any(path == p or path.startswith(p + "/") for p in DENIED_PREFIXES) or path.count("/") == 1:
        return "Permission denied"
    return None


class _Fds:
    """The three standard streams of one simple command while redirections are applied."""

    def __init__(self, stdin: bytes, stdout: OutputSink, stderr: OutputSink) -> None:
        self.stdin = stdin
        self.sinks: dict[int, OutputSink] = {1: stdout, 2: stderr}


class Shell:
    """One ``/system/bin/sh`` of the simulated phone; every ``run`` is a fresh process."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone

    def run(
        self,
        line: str,
        stdout: OutputSink,
        stderr: OutputSink,
        *,
        stdin: bytes = b"",
        cancelled: threading.Event | None = None,
    ) -> int:
        """Run ``sh -c line``; returns the exit code adbd would report."""
        cancel = cancelled if cancelled is not None else threading.Event()
        slow = self.phone.faults.slow_ms
        if slow and cancel.wait(slow / 1000.0):
            return DROPPED_EXIT
        state = ShellState(dict(DEFAULT_ENV), set(DEFAULT_ENV), cwd="/")
        return _Executor(self.phone, state, line, cancel).run_text(line, stdin, stdout, stderr)


class _Executor:
    """Walks the parsed line, expanding words and dispatching simple commands."""

    def __init__(self, phone: PhoneState, state: ShellState, line: str, cancel: threading.Event):
        self.phone = phone
        self.state = state
        self.line = line
        self.cancel = cancel

    # -- structure

    def run_text(self, text: str, stdin: bytes, stdout: OutputSink, stderr: OutputSink) -> int:
        """Parse and run ``text``; a syntax error prints mksh's message and exits 1."""
        try:
            for items in Parser(text).lines():
                for andor, background in items:
                    status = self._andor(andor, stdin, stdout, stderr)
                    # ``CMD &``: mksh goes on at once with ``$?`` 0; here the job still runs
                    # to its end first (nothing simulated outlives its line but a server)
                    self.state.status = 0 if background else status
                    if self._stopped():
                        return self._final_code()
        except ShellSyntaxError as exc:
            stderr.write(f"{SHELL_NAME}: {exc}\n".encode())
            return 1
        return self.state.status

    def _stopped(self) -> bool:
        return self.state.exit_code is not None or self.cancel.is_set()

    def _final_code(self) -> int:
        if self.state.exit_code is not None:
            return self.state.exit_code
        return self.state.status

    def _andor(self, node: AndOr, stdin: bytes, out: OutputSink, err: OutputSink) -> int:
        status = self._pipeline(node.first, stdin, out, err)
        for op, pipeline in node.rest:
            if self._stopped():
                break
            if (op == "&&") == (status == 0):
                status = self._pipeline(pipeline, stdin, out, err)
        return status

    def _pipeline(self, node: Pipeline, stdin: bytes, out: OutputSink, err: OutputSink) -> int:
        data = stdin
        status = 0
        for index, command in enumerate(node.commands):
            if self._stopped():
                break
            last = index == len(node.commands) - 1
            sink: OutputSink = out if last else BufferSink()
            status = self._simple(command, data, sink, err)
            if not last:
                assert isinstance(sink, BufferSink)
                data = bytes(sink.data)
        return status

    # -- simple commands

    def _simple(self, cmd: SimpleCommand, stdin: bytes, out: OutputSink, err: OutputSink) -> int:
        argv: list[str] = []
        for word in cmd.words:
            argv.extend(self._expand(word, err, split=True))
        assignments = {name: self._expand_one(value, err) for name, value in cmd.assignments}
        if not argv:
            return self._bare_assignments(cmd, assignments, stdin, out, err)
        if not self.phone.command_started():
            self.state.exit_code = DROPPED_EXIT
            return DROPPED_EXIT
        fds = self._redirected(cmd, stdin, out, err)
        if fds is None:
            self._record(argv, assignments, 1)
            return 1
        status = self._dispatch(argv, assignments, fds) & 0xFF
        self._record(argv, assignments, None if self.cancel.is_set() else status)
        return status

    def _bare_assignments(
        self,
        cmd: SimpleCommand,
        assignments: dict[str, str],
        stdin: bytes,
        out: OutputSink,
        err: OutputSink,
    ) -> int:
        """``VAR=x`` alone sets shell variables (redirections still create their files)."""
        self.state.variables.update(assignments)
        return 0 if self._redirected(cmd, stdin, out, err) is not None else 1

    def _redirected(
        self, cmd: SimpleCommand, stdin: bytes, out: OutputSink, err: OutputSink
    ) -> _Fds | None:
        """The command's file descriptors with its redirections applied; None (the shell's
        message on ``err``) when one of them fails."""
        fds = _Fds(stdin, out, err)
        try:
            for redirect in cmd.redirects:
                self._apply_redirect(redirect, fds, err)
        except _RedirectError as exc:
            err.write(f"{SHELL_NAME}: {exc}\n".encode())
            return None
        return fds

    def _record(self, argv: list[str], env: dict[str, str], exit_code: int | None) -> None:
        self.phone.log.record("exec", argv, env=env, exit_code=exit_code, line=self.line)

    def _dispatch(self, argv: list[str], assignments: dict[str, str], fds: _Fds) -> int:
        env = {**self.state.environment(), **assignments}
        io = ToolIO(
            phone=self.phone, stdout=fds.sinks[1], stderr=fds.sinks[2], stdin=fds.stdin,
            env=env, cwd=self.state.cwd, cancelled=self.cancel,
        )  # fmt: skip
        builtin = BUILTINS.get(argv[0])
        if builtin is not None:
            return builtin(self.state, io, argv)
        tool = _lookup(argv[0], self.phone.sdk)
        if tool is None:
            io.err(f"{SHELL_NAME}: {argv[0]}: inaccessible or not found\n")
            return 127
        return tool(io, argv)

    # -- redirections

    def _apply_redirect(self, redirect: Redirect, fds: _Fds, err: OutputSink) -> None:
        target = self._expand_one(redirect.target, err)
        op = redirect.op
        if op in (">&", "<&"):
            self._dup(redirect.fd, target, fds)
        elif op == "<":
            fds.stdin = self._read_file(target) if redirect.fd == 0 else fds.stdin
        else:
            sink = self._open_for_write(target, append=op.endswith(">>"))
            if op.startswith("&"):
                fds.sinks[1] = fds.sinks[2] = sink
            else:
                fds.sinks[redirect.fd] = sink

    def _dup(self, fd: int, target: str, fds: _Fds) -> None:
        if target == "-":
            fds.sinks[fd] = _NullSink()
        elif target.isdigit() and int(target) in fds.sinks:
            fds.sinks[fd] = fds.sinks[int(target)]
        elif target.isdigit() and target == "0":
            return
        else:
            raise _RedirectError(f"{target}: illegal file descriptor name")

    def _read_file(self, target: str) -> bytes:
        path = self.phone.fs.normalize(target, self.state.cwd)
        try:
            with self.phone.lock:
                return self.phone.fs.read(path)
        except FileNotFoundError:
            raise _RedirectError(f"can't open {target}: No such file or directory") from None
        except IsADirectoryError:
            return b""

    def _open_for_write(self, target: str, *, append: bool) -> OutputSink:
        path = self.phone.fs.normalize(target, self.state.cwd)
        if path == "/dev/null":
            return _NullSink()
        denied = write_error(path)
        if denied:
            raise _RedirectError(f"can't create {target}: {denied}")
        try:
            with self.phone.lock:
                self.phone.fs.write(path, b"", append=append)
        except FileNotFoundError:
            raise _RedirectError(f"can't create {target}: No such file or directory") from None
        except IsADirectoryError:
            raise _RedirectError(f"can't create {target}: Is a directory") from None
        return _FileSink(self.phone, path)

    # -- expansion

    def _expand_one(self, word: Word, err: OutputSink) -> str:
        """A word expanded without field splitting (assignments, redirection targets)."""
        return "".join(self._expand(word, err, split=False)) if word.segments else ""

    def _expand(self, word: Word, err: OutputSink, *, split: bool) -> list[str]:
        """The fields a word expands to: quoted pieces never split, unquoted expansions do."""
        fields: list[str] = []
        current: list[str] = []
        open_field = False
        for seg in word.segments:
            value = self._segment_value(seg, err)
            if seg.kind == "lit" or seg.quoted or not split:
                current.append(value)
                open_field = True
                continue
            if value and value[0] in IFS_WHITESPACE and open_field:
                fields.append("".join(current))
                current, open_field = [], False
            for index, piece in enumerate(value.split()):
                if index > 0:
                    fields.append("".join(current))
                    current = []
                current.append(piece)
                open_field = True
            if value and value[-1] in IFS_WHITESPACE and open_field:
                fields.append("".join(current))
                current, open_field = [], False
        if open_field:
            fields.append("".join(current))
        return fields

    def _segment_value(self, seg: Segment, err: OutputSink) -> str:
        if seg.kind == "lit":
            return seg.text
        if seg.kind == "cmd":
            return self._command_substitution(seg.text, err)
        value = self._parameter(seg.text)
        if not value and seg.default is not None:
            return seg.default
        return value

    def _parameter(self, name: str) -> str:
        special = {
            "?": str(self.state.status), "$": SHELL_PID, "#": "0", "0": SHELL_NAME,
            "@": "", "*": "", "!": "", "-": "hB",
        }  # fmt: skip
        if name in special:
            return special[name]
        if name.isdigit():
            return ""
        return self.state.variables.get(name, "")

    def _command_substitution(self, body: str, err: OutputSink) -> str:
        """Run ``$(body)`` in a subshell; its stdout minus trailing newlines."""
        sub = _Executor(self.phone, self.state.copy(), self.line, self.cancel)
        sink = BufferSink()
        status = sub.run_text(body, b"", sink, err)
        self.state.status = status
        if sub.state.exit_code == DROPPED_EXIT:
            self.state.exit_code = DROPPED_EXIT
        return bytes(sink.data).decode("utf-8", "replace").rstrip("\n")


def _lookup(name: str, sdk: int) -> registry.Tool | None:
    """The tool ``name`` runs: a bare name, or a path inside one of the bin directories."""
    if "/" in name:
        directory, _, base = name.rpartition("/")
        if directory not in BIN_DIRS or not base:
            return None
        name = base
    return registry.find_tool(name, sdk)
