"""The simulated phone's ``/system/bin/sh``: quoting, operators, redirections, log, faults."""

from __future__ import annotations

import re
import shlex
import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phoned.sim.phone import Phone
from phoned.sim.shell import registry
from phoned.sim.shell.interpreter import Shell
from phoned.sim.shell.registry import BufferSink, ToolIO


class Run:
    """Result of one ``sh -c`` line."""

    def __init__(self, code: int, out: bytes, err: bytes) -> None:
        self.code, self.out, self.err = code, out.decode(), err.decode()


def run(phone: Phone, line: str, stdin: bytes = b"") -> Run:
    out, err = BufferSink(), BufferSink()
    code = Shell(phone).run(line, out, err, stdin=stdin)
    return Run(code, bytes(out.data), bytes(err.data))


@pytest.fixture
def phone() -> Phone:
    return Phone(sdk=34)


@pytest.fixture
def recorder() -> Iterator[list[tuple[list[str], dict[str, str], bytes]]]:
    """A throwaway ``rec`` tool that records argv, env and stdin exactly."""
    calls: list[tuple[list[str], dict[str, str], bytes]] = []

    def rec(io: ToolIO, argv: list[str]) -> int:
        calls.append((list(argv), dict(io.env), io.stdin))
        return 0

    registry.load_all()
    registry.TOOLS["rec"] = rec
    yield calls
    del registry.TOOLS["rec"]


HOSTILE = [
    "a'b", 'say "hi"', "$(reboot)", "`reboot`", "x; reboot", "a && b", "a | b", "line1\nline2",
    "100%", "#hash", "back\\slash", "emoji 🎉", "עברית مرحبا", "x" * 10_000, "", " ", "$HOME",
    "*", "~", "a\tb", "}{", "!", "> /sdcard/pwn",
]  # fmt: skip


@pytest.mark.parametrize("text", HOSTILE)
def test_a_quoted_argument_is_exactly_one_word(phone: Phone, recorder: list, text: str) -> None:
    result = run(phone, f"rec {shlex.quote(text)}")
    assert result.code == 0, result.err
    assert recorder == [(["rec", text], recorder[0][1], b"")]
    assert phone.log.argvs() == [("rec", text)]
    assert not phone.fs.exists("/sdcard/pwn")


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"))
)
def test_any_text_quoted_reaches_echo_verbatim(recorder: list, text: str) -> None:
    phone = Phone(sdk=34)
    result = run(phone, f"rec {shlex.quote(text)}; echo -n {shlex.quote(text)}")
    entries = phone.log.entries("exec")
    assert [e.argv for e in entries] == [("rec", text), ("echo", "-n", text)]
    assert recorder[-1][0] == ["rec", text]
    # mksh echo expands backslash escapes and takes a leading -n/-e/-E word as one more
    # option, so only plain words must come back unchanged.
    if "\\" not in text and not re.fullmatch(r"-[neE]+", text):
        assert result.out == text


def test_adjacent_quoted_pieces_form_one_word(phone: Phone, recorder: list) -> None:
    run(phone, """rec 'a b'"c d"e\\ f 'x'""")
    assert recorder[0][0] == ["rec", "a bc de f", "x"]


def test_double_quotes_expand_but_do_not_split(phone: Phone, recorder: list) -> None:
    run(phone, 'V="1  2"; rec "$V" $V "${V}x" \'$V\'')
    assert recorder[0][0] == ["rec", "1  2", "1", "2", "1  2x", "$V"]


def test_double_quote_escapes(phone: Phone, recorder: list) -> None:
    run(phone, r'rec "a\"b\$c\\d\`e\n"')
    assert recorder[0][0] == ["rec", 'a"b$c\\d`e\\n']


def test_comment_only_at_word_start(phone: Phone, recorder: list) -> None:
    run(phone, "rec a#b # rec hidden")
    assert recorder[0][0] == ["rec", "a#b"]
    assert len(recorder) == 1


def test_sequence_and_or_and_status(phone: Phone) -> None:
    result = run(phone, "false; echo $?; true && echo and; false && echo no; false || echo or")
    assert result.out == "1\nand\nor\n"
    assert result.code == 0


def test_exit_code_of_line_is_last_command(phone: Phone) -> None:
    assert run(phone, "true; false").code == 1
    assert run(phone, "exit 7; echo unreachable").code == 7
    assert run(phone, "exit 7; echo unreachable").out == ""


def test_newlines_separate_commands(phone: Phone) -> None:
    assert run(phone, "echo a\necho b\n\n").out == "a\nb\n"


def test_pipe_into_grep(phone: Phone) -> None:
    result = run(phone, "getprop | grep -i 'RO.BUILD.VERSION.SDK'")
    assert result.out == "[ro.build.version.sdk]: [34]\n"
    assert run(phone, "getprop | grep -q nothing-like-this").code == 1
    assert [a[0] for a in phone.log.argvs()] == ["getprop", "grep", "getprop", "grep"]


def test_pipeline_passes_stdout_as_stdin(phone: Phone, recorder: list) -> None:
    run(phone, "echo hello | rec")
    assert recorder[0][2] == b"hello\n"


def test_redirect_to_file_append_and_read_back(phone: Phone) -> None:
    run(phone, "echo one > /data/local/tmp/f; echo two >> /data/local/tmp/f")
    assert phone.fs.read("/data/local/tmp/f") == b"one\ntwo\n"
    assert run(phone, "cat < /data/local/tmp/f").out == "one\ntwo\n"


def test_redirect_relative_to_cwd(phone: Phone) -> None:
    run(phone, "cd /sdcard && echo x > rel.txt")
    assert phone.fs.read("/sdcard/rel.txt") == b"x\n"


def test_redirects_to_dev_null_and_between_streams(phone: Phone) -> None:
    result = run(phone, "nosuch 2>/dev/null; echo err >&2; nosuch2 2>&1")
    assert result.out == "/system/bin/sh: nosuch2: inaccessible or not found\n"
    assert result.err == "err\n"
    assert run(phone, "getprop &>/dev/null").out == ""


def test_redirect_failures_use_mksh_messages(phone: Phone) -> None:
    result = run(phone, "echo x > /nodir/f")
    assert result.err == "/system/bin/sh: can't create /nodir/f: No such file or directory\n"
    assert result.code == 1
    assert run(phone, "cat < /nofile").err == (
        "/system/bin/sh: can't open /nofile: No such file or directory\n"
    )
    assert run(phone, "echo x > /system/f").err == (
        "/system/bin/sh: can't create /system/f: Read-only file system\n"
    )


def test_prefix_assignment_reaches_tool_env_only(phone: Phone, recorder: list) -> None:
    result = run(phone, 'FOO=bar rec; echo "[$FOO]"')
    _argv, env, _ = recorder[0]
    assert env["FOO"] == "bar"
    assert result.out == "[]\n"
    assert phone.log.entries("exec")[0].env == {"FOO": "bar"}


def test_bare_assignment_sets_shell_variable(phone: Phone, recorder: list) -> None:
    run(phone, "A='x y'; rec \"$A\"")
    assert recorder[0][0] == ["rec", "x y"]
    assert "A" not in recorder[0][1]  # not exported
    run(phone, "export B=1; rec")
    assert recorder[1][1]["B"] == "1"


def test_command_substitution_is_expanded(phone: Phone, recorder: list) -> None:
    run(phone, 'rec "$(getprop ro.build.version.sdk)" `echo a b`')
    assert recorder[0][0] == ["rec", "34", "a", "b"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("echo a ;; echo b", "syntax error: unexpected ';;'"),
        ("; echo a", "syntax error: unexpected ';'"),
        ("echo a &&", "syntax error: unexpected EOF"),
        ("| grep x", "syntax error: unexpected '|'"),
        ("echo (", "syntax error: unexpected '('"),
        ("echo 'open", "no closing quote"),
        ('echo "open', "no closing quote"),
        ("echo >", "syntax error: unexpected EOF"),
        ("if true; then echo x; fi", "syntax error: unexpected 'if'"),
    ],
)
def test_syntax_errors(phone: Phone, line: str, message: str) -> None:
    result = run(phone, line)
    assert result.err == f"/system/bin/sh: {message}\n"
    assert result.code == 1
    assert result.out == ""
    assert phone.log.argvs() == []


def test_syntax_error_on_later_line_lets_earlier_lines_run(phone: Phone) -> None:
    result = run(phone, "echo first\necho ;;")
    assert result.out == "first\n"
    assert result.code == 1


def test_missing_command_is_127(phone: Phone) -> None:
    result = run(phone, "frobnicate --x")
    assert result.code == 127
    assert result.err == "/system/bin/sh: frobnicate: inaccessible or not found\n"
    assert phone.log.entries("exec")[0].exit_code == 127
    assert run(phone, "/data/local/tmp/su").err == (
        "/system/bin/sh: /data/local/tmp/su: inaccessible or not found\n"
    )


def test_tools_reachable_by_system_bin_path(phone: Phone) -> None:
    assert run(phone, "/system/bin/getprop ro.product.model").out == "Pixel 7\n"


def test_log_has_one_entry_per_simple_command(phone: Phone) -> None:
    line = "echo a | grep a && X=1 getprop ro.serialno; false || true"
    run(phone, line)
    entries = phone.log.entries("exec")
    assert [(e.argv, e.exit_code) for e in entries] == [
        (("echo", "a"), 0), (("grep", "a"), 0), (("getprop", "ro.serialno"), 0),
        (("false",), 1), (("true",), 0),
    ]  # fmt: skip
    assert all(e.line == line for e in entries)
    assert entries[2].env == {"X": "1"}


def test_drop_after_n_commands_stops_the_line(phone: Phone) -> None:
    dropped: list[str] = []
    phone.add_drop_listener(dropped.append)
    phone.faults.drop_after_commands = 2
    result = run(phone, "echo 1; echo 2; echo 3; echo 4")
    assert result.out == "1\n2\n"
    assert result.code == 255
    assert len(dropped) == 1
    assert phone.log.argvs() == [("echo", "1"), ("echo", "2")]


def test_cancelled_sleep_returns_and_logs_none(phone: Phone) -> None:
    cancel = threading.Event()
    out, err = BufferSink(), BufferSink()
    timer = threading.Timer(0.05, cancel.set)
    timer.start()
    try:
        Shell(phone).run("sleep 30; echo after", out, err, cancelled=cancel)
    finally:
        timer.cancel()
    assert bytes(out.data) == b""
    assert phone.log.entries("exec")[0].exit_code is None


def test_echo_follows_mksh_options_and_escapes(phone: Phone) -> None:
    assert run(phone, "echo -n a").out == "a"
    assert run(phone, "echo 'a\\tb'").out == "a\tb\n"
    assert run(phone, "echo -E 'a\\tb'").out == "a\\tb\n"
    assert run(phone, "echo -x y").out == "-x y\n"
    assert run(phone, "echo 'stop\\cnever'").out == "stop"


def test_cd_and_test_builtins(phone: Phone) -> None:
    assert run(phone, "cd /sdcard; pwd").out == "/sdcard\n"
    result = run(phone, "cd /nope")
    assert result.err == "/system/bin/sh: cd: /nope: No such file or directory\n"
    assert run(phone, "[ -d /sdcard ] && test 3 -gt 2 && [ x != y ] && echo ok").out == "ok\n"
    assert run(phone, "test -f /sdcard/none").code == 1
