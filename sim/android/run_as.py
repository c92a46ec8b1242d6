"""``run-as PACKAGE [--user N] COMMAND [ARGS]``: a command as a debuggable app's user.

Texts and checks from AOSP system/core ``run-as/run-as.cpp`` (``main``), each an
``error(1, 0, ...)``, printed by bionic as ``run-as: MESSAGE`` on stderr with exit 1, in
this order: no package (``usage: run-as <package-name> [--user <uid>] <command> [<args>]``
followed by the extra newline its format string has), a package the package list does not
hold (``unknown package: PKG``), one whose uid is below ``AID_APP`` 10000 (``package not an
application: PKG``), one not built debuggable (``package not debuggable: PKG``).

The simulated phone's apps are release builds from the Play Store or the system image, so
none is debuggable unless a scenario says so (``debuggable:PKG``, as ``android:debuggable``
in a developer's own build). A debuggable app's command runs in its data directory
``/data/user/N/PKG`` (run-as.cpp ``chdir(info.data_dir)``); with no command, ``/system/bin/sh``.
"""

from __future__ import annotations

from phoned.sim.android.packages import PackageManager
from phoned.sim.shell.interpreter import Shell
from phoned.sim.shell.registry import ToolIO, tool

AID_APP = 10000
USAGE = "usage: run-as <package-name> [--user <uid>] <command> [<args>]\n"


def _fail(io: ToolIO, message: str) -> int:
    io.err(f"run-as: {message}\n")
    return 1


@tool("run-as")
def run_as(io: ToolIO, argv: list[str]) -> int:
    if len(argv) < 2:
        return _fail(io, USAGE)
    package, rest = argv[1], argv[2:]
    user = 0
    if len(rest) >= 2 and rest[0] == "--user":
        user, rest = int(rest[1]) if rest[1].lstrip("-").isdigit() else 0, rest[2:]
        if user < 0:
            return _fail(io, f"negative user id: {user}")
    packages = io.phone.service(PackageManager)
    spec = packages.packages.get(package)
    if spec is None:
        return _fail(io, f"unknown package: {package}")
    if spec.app_id < AID_APP:
        return _fail(io, f"package not an application: {package}")
    if package not in packages.debuggable:
        return _fail(io, f"package not debuggable: {package}")
    data_dir = f"/data/user/{user}/{package}"
    with io.phone.lock:
        io.phone.fs.mkdir(data_dir, parents=True)
    line = " ".join(_quoted(a) for a in rest) if rest else "sh"
    return Shell(io.phone).run(
        f"cd {data_dir} && {line}", io.stdout, io.stderr, stdin=io.stdin, cancelled=io.cancelled
    )


def _quoted(arg: str) -> str:
    """One argument for the nested shell, exactly as given (single quotes)."""
    return "'" + arg.replace("'", "'\\''") + "'"
