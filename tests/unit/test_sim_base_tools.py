"""Base binaries of the simulated phone, checked against the formats their sources print."""

from __future__ import annotations

import hashlib

import pytest

from phoned.sim.phone import Phone
from phoned.sim.shell import registry
from phoned.sim.shell.interpreter import Shell
from phoned.sim.shell.registry import BufferSink, ToolIO


def sh(phone: Phone, line: str) -> tuple[int, str, str]:
    out, err = BufferSink(), BufferSink()
    code = Shell(phone).run(line, out, err)
    return code, bytes(out.data).decode(), bytes(err.data).decode()


@pytest.fixture
def phone() -> Phone:
    return Phone(sdk=34)


def test_getprop_lists_sorted_bracketed_pairs(phone: Phone) -> None:
    _, out, _ = sh(phone, "getprop")
    lines = out.splitlines()
    assert "[ro.build.version.sdk]: [34]" in lines
    assert lines == sorted(lines)
    assert sh(phone, "getprop no.such.prop") == (0, "\n", "")
    assert sh(phone, "getprop no.such.prop fallback")[1] == "fallback\n"


def test_setprop_refuses_read_only_on_user_build(phone: Phone) -> None:
    code, _, err = sh(phone, "setprop ro.debuggable 1")
    assert code == 1
    assert err.startswith("setprop: failed to set property 'ro.debuggable' to '1'.")
    assert phone.props["ro.debuggable"] == "0"
    assert sh(phone, "setprop debug.x 5; getprop debug.x")[1] == "5\n"


def test_md5sum_and_toybox_md5sum(phone: Phone) -> None:
    phone.fs.write("/sdcard/a.bin", b"payload")
    digest = hashlib.md5(b"payload").hexdigest()
    assert sh(phone, "md5sum /sdcard/a.bin")[1] == f"{digest}  /sdcard/a.bin\n"
    assert sh(phone, "toybox md5sum /sdcard/a.bin")[1] == f"{digest}  /sdcard/a.bin\n"
    code, _, err = sh(phone, "md5sum /sdcard/missing")
    assert (code, err) == (1, "md5sum: /sdcard/missing: No such file or directory\n")


def test_id_and_whoami_per_sdk() -> None:
    out34 = sh(Phone(sdk=34), "id")[1]
    out28 = sh(Phone(sdk=28), "id")[1]
    assert out34.startswith("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input)")
    assert out34.endswith(",3012(readtracefs) context=u:r:shell:s0\n")
    assert "ext_data_rw" not in out28 and "readtracefs" not in out28
    assert sh(Phone(sdk=28), "whoami")[1] == "shell\n"


def test_file_tools_round_trip(phone: Phone) -> None:
    code, out, err = sh(
        phone,
        "mkdir -p /data/local/tmp/d/e && touch /data/local/tmp/d/f && ls /data/local/tmp/d",
    )
    assert (code, out, err) == (0, "e\nf\n", "")
    assert sh(phone, "mkdir /data/local/tmp/d")[2] == "mkdir: '/data/local/tmp/d': File exists\n"
    assert sh(phone, "rm /data/local/tmp/d/f; ls /data/local/tmp/d")[1] == "e\n"
    assert sh(phone, "rm /data/local/tmp/nope")[2] == (
        "rm: /data/local/tmp/nope: No such file or directory\n"
    )
    assert sh(phone, "rm -f /data/local/tmp/nope")[0] == 0


def test_ls_long_and_all(phone: Phone) -> None:
    phone.fs.write("/data/local/tmp/x", b"12345")
    sh(phone, "chmod 755 /data/local/tmp/x")
    out = sh(phone, "ls -la /data/local/tmp")[1].splitlines()
    assert out[0].startswith("total ")
    assert out[-1].split()[:5] == ["-rwxr-xr-x", "1", "shell", "shell", "5"]
    assert out[-1].endswith(" x")
    assert [line.rsplit(" ", 1)[1] for line in out[1:]] == [".", "..", "x"]


def test_cat_missing_and_stdin(phone: Phone) -> None:
    assert sh(phone, "cat /nope")[2] == "cat: /nope: No such file or directory\n"
    assert sh(phone, "echo hi | cat")[1] == "hi\n"


def test_wc_head_tail_grep(phone: Phone) -> None:
    phone.fs.write("/sdcard/t", b"alpha\nBeta\ngamma\n")
    assert sh(phone, "cat /sdcard/t | wc -l")[1] == "3\n"
    assert sh(phone, "wc -l /sdcard/t")[1] == "3 /sdcard/t\n"
    assert sh(phone, "head -n 1 /sdcard/t")[1] == "alpha\n"
    assert sh(phone, "tail -2 /sdcard/t")[1] == "Beta\ngamma\n"
    assert sh(phone, "grep -i beta /sdcard/t")[1] == "Beta\n"
    assert sh(phone, "grep -v a /sdcard/t")[0] == 1
    assert sh(phone, "grep -c a /sdcard/t")[1] == "3\n"
    assert sh(phone, "grep -E 'al|ga' /sdcard/t")[1] == "alpha\ngamma\n"
    assert sh(phone, "grep 'al|ga' /sdcard/t")[0] == 1  # BRE: | is literal


def test_which_and_pidof(phone: Phone) -> None:
    assert sh(phone, "which getprop") == (0, "/system/bin/getprop\n", "")
    assert sh(phone, "which nonesuch") == (1, "", "")
    assert sh(phone, "pidof system_server")[1] == "1540\n"
    assert sh(phone, "pidof nothing")[0] == 1


def test_cmd_and_dumpsys_unknown_service(phone: Phone) -> None:
    assert sh(phone, "cmd nosuchservice") == (20, "", "cmd: Can't find service: nosuchservice\n")
    assert sh(phone, "dumpsys nosuchservice") == (0, "", "Can't find service: nosuchservice\n")
    listing = sh(phone, "cmd -l")[1]
    assert listing.startswith("Currently running services:\n  ")


def test_cmd_dispatches_with_service_name_first(phone: Phone) -> None:
    seen: list[list[str]] = []

    def fake(io: ToolIO, argv: list[str]) -> int:
        seen.append(argv)
        io.out("ok\n")
        return 3

    registry.load_all()
    registry.SERVICES["cmd"]["fakesvc"] = fake
    try:
        assert sh(phone, "cmd fakesvc set 'a b'") == (3, "ok\n", "")
    finally:
        del registry.SERVICES["cmd"]["fakesvc"]
    assert seen == [["fakesvc", "set", "a b"]]


def test_svc_help_layout_per_sdk() -> None:
    out34 = sh(Phone(sdk=34), "svc")[1].splitlines()
    assert out34[0] == "Available commands:"
    assert out34[1] == "    help             Show information about the subcommands"
    assert "data" not in "".join(out34)
    out28 = sh(Phone(sdk=28), "svc")[1]
    assert "    data         Control mobile data connectivity\n" in out28


def test_sh_c_nested(phone: Phone) -> None:
    assert sh(phone, "sh -c 'echo nested; exit 4'") == (4, "nested\n", "")


def test_printf_and_date(phone: Phone) -> None:
    assert sh(phone, "printf '%s=%d\\n' a 1")[1] == "a=1\n"
    assert sh(phone, "date +%Y")[1].strip().isdigit()


def test_printf_prints_percent_s_arguments_verbatim(phone: Phone) -> None:
    # toybox printf interprets escapes in the format and in %b, never in a %s argument
    assert sh(phone, "printf '%s|%b\\n' 'a\\tb' 'c\\td'")[1] == "a\\tb|c\td\n"
