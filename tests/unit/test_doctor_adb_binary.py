"""``phoned doctor`` and ``AdbServer`` on an adb binary this machine cannot run.

The adb that adbutils ships is x86-64 only; on an arm64 board (Raspberry Pi) exec() fails
with ENOEXEC or, with a foreign loader named in the binary, ENOENT ("No such file or
directory"). Doctor reads the binary's ELF header first and says what to install; fake
binaries here are a 64-byte ELF header (``fake_elf``) or a file exec() refuses.
"""

from __future__ import annotations

import errno
import json
import platform
import struct
import subprocess
from pathlib import Path

import pytest
from helpers import adb_server_answers, phoned_env, run_python, stop_adb_server

from phoned.daemon.verbs.doctor_checks import binary_problem, elf_machine
from phoned.device.adb import ADB_INSTALL_HINT, AdbServer, bundled_adb_path
from phoned.device.errors import AdbServerError
from scripts.stack import free_port

EM_X86_64, EM_AARCH64, EM_ARM, EM_S390 = 62, 183, 40, 22


def fake_elf(path: Path, machine: int, *, big_endian: bool = False) -> Path:
    """An executable file holding only an ELF64 header that names ``machine``."""
    order = ">" if big_endian else "<"
    ident = b"\x7fELF" + bytes([2, 2 if big_endian else 1, 1]) + bytes(9)
    # e_type EXEC, e_machine, e_version; the rest of the 64-byte header left zero
    header = ident + struct.pack(order + "HHI", 2, machine, 1) + bytes(40)
    path.write_bytes(header)
    path.chmod(0o755)
    return path


def _doctor(
    tmp_path: Path, port: int, *args: str, adb_path: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = phoned_env(port, tmp_path / "none.yaml")
    (tmp_path / "none.yaml").write_text("{}\n")
    if adb_path is not None:
        env["PHONED_ADB_PATH"] = adb_path
    try:
        return run_python("-m", "phoned.daemon.cli", "doctor", *args, env=env)
    finally:  # code that ignored the binary may have started a real server: leave none
        if adb_server_answers(port):
            stop_adb_server(port)


def _foreign_machine() -> int:
    """An ELF machine this test host does not run."""
    return EM_AARCH64 if platform.machine() in ("x86_64", "amd64") else EM_X86_64


def test_elf_machine_reads_the_header_in_either_byte_order(tmp_path: Path) -> None:
    assert elf_machine(str(fake_elf(tmp_path / "x86", EM_X86_64))) == EM_X86_64
    assert elf_machine(str(fake_elf(tmp_path / "arm64", EM_AARCH64))) == EM_AARCH64
    assert elf_machine(str(fake_elf(tmp_path / "s390", EM_S390, big_endian=True))) == EM_S390
    script = tmp_path / "adb.sh"
    script.write_text('#!/bin/sh\nexec /usr/bin/adb "$@"\n')
    assert elf_machine(str(script)) is None  # a wrapper: no header to judge


def test_an_x86_64_adb_cannot_run_on_arm64_and_says_so(tmp_path: Path) -> None:
    adb = str(fake_elf(tmp_path / "adb", EM_X86_64))
    assert binary_problem(adb, "aarch64") == f"{adb} is built for x86-64; this machine is aarch64"
    assert binary_problem(adb, "x86_64") == ""
    arm64 = str(fake_elf(tmp_path / "adb-arm64", EM_AARCH64))
    assert binary_problem(arm64, "aarch64") == ""
    assert binary_problem(arm64, "armv7l").endswith(
        "is built for arm64 (AArch64); this machine is armv7l"
    )
    # a 64-bit ARM kernel runs 32-bit ARM binaries; an unknown machine gets no verdict
    assert binary_problem(str(fake_elf(tmp_path / "adb-arm", EM_ARM)), "aarch64") == ""
    assert binary_problem(adb, "sparc64") == ""


def test_the_adb_adbutils_ships_is_refused_on_a_raspberry_pi() -> None:
    bundled = bundled_adb_path()
    assert binary_problem(bundled, "aarch64") == (
        f"{bundled} is built for x86-64; this machine is aarch64"
    )


def test_a_missing_or_non_executable_adb_is_named(tmp_path: Path) -> None:
    assert binary_problem(str(tmp_path / "adb"), "x86_64") == f"{tmp_path / 'adb'} does not exist"
    plain = tmp_path / "plain"
    plain.write_bytes(b"\x7fELF")
    assert binary_problem(str(plain), "x86_64") == f"{plain} is not executable"


def test_starting_the_server_with_a_missing_adb_says_what_to_install(tmp_path: Path) -> None:
    server = AdbServer(port=free_port(), adb_path=str(tmp_path / "adb"))
    with pytest.raises(AdbServerError) as caught:
        server.ensure_running()
    assert ADB_INSTALL_HINT in str(caught.value) and str(tmp_path / "adb") in str(caught.value)
    assert isinstance(caught.value.__cause__, OSError)
    assert caught.value.__cause__.errno == errno.ENOENT


def test_doctor_names_a_foreign_adb_and_never_runs_it(tmp_path: Path) -> None:
    adb = fake_elf(tmp_path / "adb", _foreign_machine())
    port = free_port()
    proc = _doctor(tmp_path, port, "--json", adb_path=str(adb))
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)["adb"]
    assert report["path"] == str(adb)
    assert report["error"].startswith(f"{adb} is built for ")
    assert report["error"].endswith(f"; this machine is {platform.machine()}")
    assert (
        "sudo apt install adb" in report["advice"] and "adb_path: /usr/bin/adb" in report["advice"]
    )
    assert report["server_running"] is False and "started_by_doctor" not in report


def test_doctor_reads_adb_path_from_the_config_file(tmp_path: Path) -> None:
    adb = fake_elf(tmp_path / "adb", _foreign_machine())
    config = tmp_path / "phoned.yaml"
    config.write_text(f"adb_path: {adb}\n")
    proc = _doctor(tmp_path, free_port(), "--config", str(config))
    assert proc.returncode == 1, proc.stderr
    assert f"adb      FAIL  {adb} is built for " in proc.stdout
    assert f"-> {ADB_INSTALL_HINT}" in proc.stdout


def test_doctor_explains_an_adb_that_exec_refuses(tmp_path: Path) -> None:
    adb = tmp_path / "adb"
    adb.write_text("neither ELF nor a script\n")  # exec(): ENOEXEC, Exec format error
    adb.chmod(0o755)
    proc = _doctor(tmp_path, free_port(), "--json", adb_path=str(adb))
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)["adb"]
    assert report["error"].startswith(f"cannot run {adb}: Exec format error")
    assert report["advice"] == ADB_INSTALL_HINT
