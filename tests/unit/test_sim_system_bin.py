"""The simulated phone's /system/bin per release, and the utilities third-party tools use.

The release table is generated from AOSP's shell_and_utilities/README.md; these tests pin
facts of that README (a command added or removed in a named release) and check that the
shell resolves names by it, so a regenerated table that loses a release shows here.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from phoned.sim import scenarios
from phoned.sim.phone import Phone
from phoned.sim.shell import system_bin
from phoned.sim.shell.interpreter import Shell
from phoned.sim.shell.registry import BufferSink

ROOT = Path(__file__).resolve().parents[2]


def sh(phone: Phone, line: str, stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = BufferSink(), BufferSink()
    code = Shell(phone).run(line, out, err, stdin=stdin)
    return code, bytes(out.data).decode(), bytes(err.data).decode()


@pytest.fixture
def phone() -> Phone:
    return Phone(sdk=34)


# (sdk, command, provider or None): facts of the README's release sections.
README_FACTS = [
    (28, "dd", "BSD"),  # Pie: BSD dd and grep
    (28, "grep", "BSD"),
    (28, "nc", None),  # nc/netcat arrived in Android 10
    (28, "getprop", "toolbox"),
    (30, "dd", "toybox"),  # toybox dd from Android 10
    (30, "grep", "toybox"),  # toybox grep from Android 11 (BSD grep in 10)
    (30, "setprop", "toolbox"),
    (30, "bc", "gavinhoward/bc"),
    (30, "test", None),  # toybox test/[ links from Android 12
    (33, "[", "toybox"),
    (33, "uclampset", "toybox"),  # bold in Android 13
    (33, "brctl", None),  # bold in Android 14
    (34, "brctl", "toybox"),
    (34, "logger", "toybox"),
    (34, "getfattr", "toybox"),
    (35, "gpiodetect", "toybox"),  # bold in Android 15
    (34, "gpiodetect", None),
    (35, "awk", "one-true-awk"),
    (35, "bzip2", "bzip2"),
    (35, "fsck_msdos", "BSD"),
]


@pytest.mark.parametrize(("sdk", "name", "provider"), README_FACTS)
def test_release_table_holds_the_readme_facts(sdk: int, name: str, provider: str | None) -> None:
    assert system_bin.provider(sdk, name) == provider


def test_the_table_is_what_the_generator_makes_of_its_source() -> None:
    """The generator parses every release section from Android 9 on into the committed file
    (fed the README's Android 11 section, it yields that release's lists exactly)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import shell_utilities_from_aosp as generator
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    section = (
        '## Android 11 (API level 30, "Red Velvet Cake")\n\nBSD: fsck\\_msdos newfs\\_msdos\n\n'
        "toolbox: getevent getprop setprop start stop\n\n"
        "toybox ([0.8.3](http://x)-ish):\nacpi **devmem** mv\nvi zcat\n\n"
        '## Android 10 (API level 29, "Quince Tart")\n\ntoybox: cat\n\n'
        '## Android 8.0 (API level 26, "Oreo")\n\ntoybox: ls\n'
    )
    parsed = generator.releases(section)
    assert parsed == {
        30: {"BSD": ["fsck_msdos", "newfs_msdos"],
             "toolbox": ["getevent", "getprop", "setprop", "start", "stop"],
             "toybox": ["acpi", "devmem", "mv", "vi", "zcat"]},
        29: {"toybox": ["cat"]},
    }  # fmt: skip
    document = json.loads((ROOT / "sim/shell/system_bin.json").read_text())
    assert sorted(int(k) for k in document["releases"]) == [28, 29, 30, 31, 33, 34, 35]
    assert len(document["commit"]) == 40


@pytest.mark.parametrize("sdk", [28, 30, 33, 34, 35])
def test_every_simulated_release_has_what_tools_rely_on(sdk: int) -> None:
    phone = Phone(sdk=sdk)
    for name in ("mv", "cp", "rm", "mkdir", "touch", "ls", "cat", "head", "tail", "wc",
                 "sed", "sleep", "date", "id", "which", "stat", "base64", "md5sum", "find",
                 "printf", "env", "uname", "ps", "pidof", "df", "dd", "grep", "kill"):  # fmt: skip
        code, out, _ = sh(phone, f"which {name}")
        assert (code, out) == (0, f"/system/bin/{name}\n"), (sdk, name)


def test_a_utility_of_a_later_release_is_not_found(phone: Phone) -> None:
    old = Phone(sdk=28)
    assert sh(old, "nc -l 9000") == (127, "", "/system/bin/sh: nc: inaccessible or not found\n")
    assert sh(old, "which nc") == (1, "", "")
    assert sh(old, "toybox nc")[2] == 'toybox: Unknown command nc (see "toybox --help")\n'
    assert sh(phone, "nosuchtool") == (
        127, "", "/system/bin/sh: nosuchtool: inaccessible or not found\n"
    )  # fmt: skip


def test_a_shipped_utility_the_simulator_does_not_model_answers_as_toybox(phone: Phone) -> None:
    assert sh(phone, "nc -l 9000") == (1, "", "nc: Unknown option '-l' (see \"nc --help\")\n")


def test_bare_toybox_lists_the_release_applets_in_80_columns() -> None:
    for sdk in (28, 35):
        code, out, _ = sh(Phone(sdk=sdk), "toybox")
        names = out.split()
        assert code == 0 and names == system_bin.toybox_applets(sdk)
        assert all(len(line) <= 80 for line in out.splitlines())
    assert "gpiodetect" in sh(Phone(sdk=35), "toybox")[1].split()
    assert "gpiodetect" not in sh(Phone(sdk=34), "toybox")[1].split()


def test_mv_cp_rmdir(phone: Phone) -> None:
    assert (
        sh(phone, "echo hi > /data/local/tmp/a && mv /data/local/tmp/a /data/local/tmp/b")[0] == 0
    )
    assert sh(phone, "cat /data/local/tmp/b; ls /data/local/tmp") == (0, "hi\nb\n", "")
    assert sh(phone, "mv /data/local/tmp/nope /sdcard/x") == (
        1, "", "mv: bad '/data/local/tmp/nope': No such file or directory\n"
    )  # fmt: skip
    assert sh(phone, "mv /sdcard") == (1, "", 'mv: Need 2 arguments (see "mv --help")\n')
    assert sh(phone, "cp /data/local/tmp/b /sdcard/ && cat /sdcard/b") == (0, "hi\n", "")
    assert sh(phone, "mkdir /sdcard/d && cp /sdcard/b /data/local/tmp/b /sdcard/b2")[2] == (
        "cp: '/sdcard/b2' not directory\n"
    )
    assert sh(phone, "rmdir /sdcard") == (1, "", "rmdir: '/sdcard': Directory not empty\n")
    assert sh(phone, "rmdir /sdcard/d && ls /sdcard") == (0, "b\n", "")


def test_stat_find_base64_md5_sed(phone: Phone) -> None:
    sh(phone, "printf 'abc\\ndef\\n' > /data/local/tmp/f.txt; touch /data/local/tmp/e")
    assert sh(phone, "stat -c '%n %s %F %a' /data/local/tmp/f.txt /data/local/tmp/e")[1] == (
        "/data/local/tmp/f.txt 8 regular file 644\n/data/local/tmp/e 0 regular empty file 644\n"
    )
    assert sh(phone, "stat /nope") == (1, "", "stat: '/nope': No such file or directory\n")
    assert sh(phone, "find /data/local/tmp -name '*.txt'")[1] == "/data/local/tmp/f.txt\n"
    assert sh(phone, "find /data/local/tmp -type d")[1] == "/data/local/tmp\n"
    assert sh(phone, "base64 /data/local/tmp/f.txt")[1] == "YWJjCmRlZgo=\n"
    assert sh(phone, "echo YWJjCmRlZgo= | base64 -d")[1] == "abc\ndef\n"
    digest = hashlib.md5(b"abc\ndef\n").hexdigest()
    assert sh(phone, "md5sum /data/local/tmp/f.txt")[1] == f"{digest}  /data/local/tmp/f.txt\n"
    assert sh(phone, "sed 's/b/X/' /data/local/tmp/f.txt")[1] == "aXc\ndef\n"
    assert sh(phone, "sed -n 2p /data/local/tmp/f.txt")[1] == "def\n"
    assert sh(phone, "sed '1d' /data/local/tmp/f.txt")[1] == "def\n"
    assert (
        sh(phone, "sed -i 's/\\(d\\)e/\\1E/' /data/local/tmp/f.txt; cat /data/local/tmp/f.txt")[1]
        == "abc\ndEf\n"
    )


def test_uname_df_dd(phone: Phone) -> None:
    assert sh(phone, "uname")[1] == "Linux\n"
    assert sh(phone, "uname -m -o")[1] == "aarch64 Toybox\n"
    header, row = sh(phone, "df /sdcard")[1].splitlines()
    assert header.split() == [
        "Filesystem",
        "1K-blocks",
        "Used",
        "Available",
        "Use%",
        "Mounted",
        "on",
    ]
    assert row.split()[-1] == "/storage/emulated"
    code, out, err = sh(phone, "echo abcdef | dd bs=4 count=1")
    assert (code, out) == (0, "abcd")
    assert err.startswith("1+0 records in\n1+0 records out\n4 bytes")


def test_ps_lists_the_process_table_and_kill_ends_only_the_shells_own(phone: Phone) -> None:
    _, out, _ = sh(phone, "ps -A")
    lines = out.splitlines()
    assert lines[0].split() == ["USER", "PID", "PPID", "VSZ", "RSS", "WCHAN", "ADDR", "S", "NAME"]
    assert any(line.split()[1] == "1540" and line.endswith("system_server") for line in lines)
    assert sh(phone, "ps")[1].splitlines()[-1].endswith("ps")  # only the caller's session
    assert sh(phone, "ps -A -o PID,NAME -p 1")[1] == "   PID NAME\n     1 init\n"  # PID is 6 wide
    assert sh(phone, "kill 1") == (1, "", "kill: bad pid '1': Operation not permitted\n")
    assert sh(phone, "kill 4242") == (1, "", "kill: bad pid '4242': No such process\n")
    ended: list[int] = []
    pid = phone.processes.spawn(
        "shell", "app_process", "app_process / x.Main", lambda: ended.append(1)
    )
    assert sh(phone, "pidof app_process")[1] == f"{pid}\n"
    assert sh(phone, f"kill -9 {pid}") == (0, "", "")
    assert ended == [1]


def test_uiautomator_dump_to_dev_tty_prints_the_hierarchy_then_the_line(phone: Phone) -> None:
    phone.ui.automation.costs = phone.ui.automation.costs.none()
    code, out, err = sh(phone, "uiautomator dump /dev/tty")
    assert code == 0 and err == ""
    xml, _, tail = out.rpartition("</hierarchy>")
    assert xml.startswith("<?xml") and tail == "UI hierchary dumped to: /dev/tty\n"
    assert not phone.fs.exists("/dev/tty")
    assert (
        sh(phone, "uiautomator dump /sdcard/w.xml")[1] == "UI hierchary dumped to: /sdcard/w.xml\n"
    )
    assert phone.fs.read("/sdcard/w.xml").decode() == xml + "</hierarchy>"


def test_run_as_refuses_release_builds_and_runs_in_a_debuggable_apps_directory(
    phone: Phone,
) -> None:
    usage = "run-as: usage: run-as <package-name> [--user <uid>] <command> [<args>]\n\n"
    assert sh(phone, "run-as") == (1, "", usage)
    assert sh(phone, "run-as com.nope.app id") == (1, "", "run-as: unknown package: com.nope.app\n")
    messaging = "com.google.android.apps.messaging"
    assert sh(phone, f"run-as {messaging} ls") == (
        1, "", f"run-as: package not debuggable: {messaging}\n"
    )  # fmt: skip
    system_app = next(s.name for s in phone.packages.packages.values() if s.app_id < 10000)
    assert sh(phone, f"run-as {system_app} ls") == (
        1, "", f"run-as: package not an application: {system_app}\n"
    )  # fmt: skip
    scenarios.apply(phone, "debuggable:com.example.notes")
    assert sh(phone, "run-as com.example.notes pwd") == (0, "/data/user/0/com.example.notes\n", "")
    assert sh(phone, "run-as com.example.notes sh -c 'echo $0x'")[0] == 0


def test_pgrep_pkill_nohup_and_a_background_job(phone: Phone) -> None:
    assert sh(phone, "pgrep -l adbd") == (0, "1142 adbd\n", "")
    assert sh(phone, "pkill -f '[D]eviceServer'") == (1, "", "")  # nothing matched
    ended: list[int] = []
    pid = phone.processes.spawn(
        "shell", "app_process", "app_process / a.DeviceServer", lambda: ended.append(pid)
    )
    assert sh(phone, "pgrep -f '[D]eviceServer'") == (0, f"{pid}\n", "")
    assert sh(phone, "pkill -f '[D]eviceServer'") == (0, "", "")
    assert ended == [pid]
    assert sh(phone, "pkill system_server") == (1, "", "pkill: 1540: Operation not permitted\n")
    # a tool's own dex cannot run here: app_process aborts as on a phone without the class
    phone.fs.write("/data/local/tmp/tool.dex", b"dex\n")
    line = "CLASSPATH=/data/local/tmp/tool.dex nohup app_process / com.example.Main"
    assert sh(phone, line) == (134, "", "Aborted \n")
    assert sh(phone, f"{line} >/dev/null 2>&1 & echo $?") == (0, "0\n", "")
    assert sh(phone, "nohup")[0] == 125
