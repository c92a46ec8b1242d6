"""Base binaries of the simulated phone and the ``cmd``/``dumpsys``/``svc`` dispatchers.

Importing this module registers: getprop, setprop, id, whoami, which, date, uptime, sleep,
printf, pidof, toybox, sh, cmd, dumpsys, svc, plus the file tools (``file_tools``) and
text filters (``text_tools``).

Sources (cited again beside each format): AOSP system/core/toolbox/getprop.cpp and
setprop.cpp, frameworks/native/cmds/cmd/cmd.cpp, frameworks/native/cmds/dumpsys/dumpsys.cpp,
frameworks/base/cmds/svc/src/com/android/commands/svc/Svc.java, landley/toybox.
"""

from __future__ import annotations

import time

from phoned.sim.shell import registry, system_bin
from phoned.sim.shell.builtin_commands import expand_echo_escapes
from phoned.sim.shell.interpreter import Shell
from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.shell.tools import file_tools, text_tools

__all__ = ["cant_find_service", "file_tools", "text_tools"]

# cmd.cpp: every failure to reach a service exits with 20 (captured: "'cmd: Can't find
# service: media.codec' with exit code 20"); dumpsys prints to stderr and still exits 0
# (captured: "'Can't find service: media.codec' with exit code 0").
CMD_NOT_FOUND_EXIT = 20
# Services every phone lists for ``cmd -l`` / ``dumpsys -l`` besides the simulated ones.
BASE_SERVICES = ("activity", "package", "power", "settings", "window", "input", "statusbar")


def cant_find_service(io: ToolIO, kind: str, name: str) -> int:
    """Print what a real phone prints when ``kind NAME`` names no registered binder service.

    Service modules call this when their service does not exist on ``io.phone.sdk``.
    """
    if kind == "cmd":
        io.err(f"cmd: Can't find service: {name}\n")  # cmd.cpp
        return CMD_NOT_FOUND_EXIT
    if kind == "dumpsys":
        io.err(f"Can't find service: {name}\n")  # dumpsys.cpp startDumpThread
        return 0
    return _svc_help(io)


# ------------------------------------------------------------------ properties


@tool("getprop")
def getprop(io: ToolIO, argv: list[str]) -> int:
    """No argument: ``[key]: [value]`` lines sorted by key; ``getprop KEY [DEFAULT]``.

    Format from AOSP system/core/toolbox/getprop.cpp (``"[%s]: [%s]\\n"``, sorted).
    """
    with io.phone.lock:
        props = dict(io.phone.props)
    if len(argv) == 1:
        io.out("".join(f"[{k}]: [{props[k]}]\n" for k in sorted(props)))
        return 0
    default = argv[2] if len(argv) > 2 else ""
    io.out(props.get(argv[1], default) + "\n")
    return 0


# Prefixes the shell SELinux domain may set on a user build (system/sepolicy shell.te:
# set_prop(shell, debug_prop / log_tag_prop / ...)).
SHELL_SETTABLE = ("debug.", "log.tag", "persist.log.tag", "persist.debug.")


@tool("setprop")
def setprop(io: ToolIO, argv: list[str]) -> int:
    """``setprop NAME VALUE``; ``ro.*`` and other protected names fail as on a user build.

    Texts from AOSP system/core/toolbox/setprop.cpp.
    """
    if len(argv) != 3:
        io.err("usage: setprop NAME VALUE\n\nSets an Android system property.\n\n")
        return 1
    name, value = argv[1], argv[2]
    with io.phone.lock:
        allowed = name.startswith(SHELL_SETTABLE) and not name.startswith("ro.")
        if allowed:
            io.phone.props[name] = value
    if not allowed:
        io.err(
            f"setprop: failed to set property '{name}' to '{value}'.\nSee dmesg for error reason.\n"
        )
        return 1
    return 0


# ------------------------------------------------------------------ identity


def _shell_groups(sdk: int) -> list[tuple[int, str]]:
    """Supplementary groups adbd gives the shell (AOSP adbd daemon/main.cpp drop_privileges)."""
    groups = [
        (2000, "shell"), (1004, "input"), (1007, "log"), (1011, "adb"), (1015, "sdcard_rw"),
        (1028, "sdcard_r"),
    ]  # fmt: skip
    if sdk >= 30:
        groups += [(1078, "ext_data_rw"), (1079, "ext_obb_rw")]
    groups += [(3001, "net_bt_admin"), (3002, "net_bt"), (3003, "inet"), (3006, "net_bw_stats"),
               (3009, "readproc"), (3011, "uhid")]  # fmt: skip
    if sdk >= 33:
        groups.append((3012, "readtracefs"))
    return groups


@tool("id")
def id_(io: ToolIO, argv: list[str]) -> int:
    """toybox id as the shell user: ``uid=2000(shell) gid=2000(shell) groups=... context=...``."""
    if "-u" in argv:
        io.out("shell\n" if "-n" in argv else "2000\n")
        return 0
    groups = ",".join(f"{gid}({name})" for gid, name in _shell_groups(io.phone.sdk))
    io.out(f"uid=2000(shell) gid=2000(shell) groups={groups} context=u:r:shell:s0\n")
    return 0


@tool("env")
def env(io: ToolIO, argv: list[str]) -> int:
    """toybox env without arguments: the environment as ``NAME=value`` lines."""
    io.out("".join(f"{k}={v}\n" for k, v in io.env.items()))
    return 0


@tool("whoami")
def whoami(io: ToolIO, argv: list[str]) -> int:
    io.out("shell\n")
    return 0


@tool("which")
def which(io: ToolIO, argv: list[str]) -> int:
    """``/system/bin/NAME`` for each known binary; exit 1 if any is missing (toybox which)."""
    status = 0
    for name in argv[1:]:
        if "/" not in name and registry.find_tool(name, io.phone.sdk) is not None:
            io.out(f"/system/bin/{name}\n")
        else:
            status = 1
    return status


# ------------------------------------------------------------------ time


@tool("date")
def date(io: ToolIO, argv: list[str]) -> int:
    """toybox date: default ``%a %b %e %H:%M:%S %Z %Y``; ``date +FORMAT``; UTC phone clock."""
    fmt = "%a %b %e %H:%M:%S %Z %Y"
    for arg in argv[1:]:
        if arg.startswith("+"):
            fmt = arg[1:]
    io.out(time.strftime(fmt.replace("%Z", "UTC").replace("%s", str(int(time.time()))),
                         time.gmtime()) + "\n")  # fmt: skip
    return 0


@tool("uptime")
def uptime(io: ToolIO, argv: list[str]) -> int:
    """toybox uptime: `` HH:MM:SS up D days, H:MM,  0 users,  load average: ...``."""
    up = int(io.phone.uptime())
    days, rest = divmod(up, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    clock = time.strftime("%H:%M:%S", time.gmtime())
    span = (f"{days} day{'s' if days != 1 else ''}, " if days else "") + f"{hours:2d}:{minutes:02d}"
    io.out(f" {clock} up {span},  0 users,  load average: 0.00, 0.00, 0.00\n")
    return 0


@tool("sleep")
def sleep(io: ToolIO, argv: list[str]) -> int:
    """Wait the given seconds, returning early (exit 130) when the host cancels."""
    try:
        seconds = sum(float(a) for a in argv[1:])
    except ValueError:
        io.err(f"sleep: bad number '{argv[1]}'\n")
        return 1
    return 130 if io.cancelled.wait(seconds) else 0


@tool("printf")
def printf(io: ToolIO, argv: list[str]) -> int:
    """toybox printf: the format reused until arguments run out; %s %b %d %x %c %%.

    Backslash escapes are interpreted in the format (and in ``%b`` arguments) only: a
    ``%s`` argument is printed exactly as given.
    """
    if len(argv) < 2:
        io.err("printf: Needs 1 argument\n")
        return 1
    fmt, args = argv[1], argv[2:]
    out: list[str] = []
    while True:
        text, used = _printf_once(fmt, args)
        out.append(text)
        args = args[used:]
        if not args or not used:
            break
    io.out("".join(out))
    return 0


def _printf_once(fmt: str, args: list[str]) -> tuple[str, int]:

    out: list[str] = []
    literal: list[str] = []
    used = 0
    i = 0
    while i < len(fmt):
        if fmt[i] != "%" or i + 1 >= len(fmt):
            literal.append(fmt[i])
            i += 1
            continue
        conv = fmt[i + 1]
        i += 2
        if conv == "%":
            literal.append("%")
            continue
        out.append(expand_echo_escapes("".join(literal))[0])
        literal = []
        arg = args[used] if used < len(args) else ""
        used += 1
        out.append(_convert(conv, arg))
    out.append(expand_echo_escapes("".join(literal))[0])
    return "".join(out), used


def _convert(conv: str, arg: str) -> str:

    if conv in "di":
        return str(int(arg or "0"))
    if conv == "x":
        return format(int(arg or "0"), "x")
    if conv == "c":
        return arg[:1]
    if conv == "b":
        return expand_echo_escapes(arg)[0]
    return arg


@tool("pidof")
def pidof(io: ToolIO, argv: list[str]) -> int:
    """Space-separated pids of running processes; exit 1 when none matched (toybox pidof)."""
    with io.phone.lock:
        pids = [str(pid) for n in argv[1:] for pid in io.phone.processes.pids_named(n)]
    if not pids:
        return 1
    io.out(" ".join(pids) + "\n")
    return 0


# ------------------------------------------------------------------ multiplexers


@tool("toybox")
def toybox(io: ToolIO, argv: list[str]) -> int:
    """``toybox NAME ARGS`` runs the applet; bare ``toybox`` lists this release's applets.

    toybox ``main.c`` ``toybox_main``: names separated by a space, a newline once a line
    passes 80 - 15 columns (no terminal under adb: width 80); an unknown name is
    ``help_exit("Unknown command %s")``, printed ``toybox: Unknown command NAME (see
    "toybox --help")``, exit 1.
    """
    applets = system_bin.toybox_applets(io.phone.sdk)
    if len(argv) < 2:
        io.out(_toybox_listing(applets))
        return 0
    applet = registry.find_tool(argv[1], io.phone.sdk) if argv[1] in applets else None
    if applet is None:
        io.err(f'toybox: Unknown command {argv[1]} (see "toybox --help")\n')
        return 1
    return applet(io, argv[1:])


def _toybox_listing(applets: list[str], width: int = 80) -> str:
    """The applet list as ``toybox_main`` prints it (a line ends past ``width - 15``)."""
    out: list[str] = []
    length = 0
    for name in applets:
        length += len(name) + 1
        if length > width - 15:
            length = 0
        out.append(name + (" " if length else "\n"))
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


@tool("sh")
def sh(io: ToolIO, argv: list[str]) -> int:
    """``sh -c LINE``: a nested shell on the same phone (its commands are logged too)."""

    if len(argv) >= 3 and argv[1] == "-c":
        return Shell(io.phone).run(
            argv[2], io.stdout, io.stderr, stdin=io.stdin, cancelled=io.cancelled
        )
    return Shell(io.phone).run(io.stdin.decode("utf-8", "replace"), io.stdout, io.stderr,
                               cancelled=io.cancelled)  # fmt: skip


def _service_names(kind: str) -> list[str]:
    registry.load_all()
    return sorted(set(registry.SERVICES["cmd"]) | set(registry.SERVICES["dumpsys"])
                  | set(BASE_SERVICES)) if kind != "svc" else []  # fmt: skip


def _list_services(io: ToolIO) -> int:
    """``cmd -l``/``dumpsys -l``: ``Currently running services:`` then two-space names."""
    io.out("Currently running services:\n")
    io.out("".join(f"  {name}\n" for name in _service_names("cmd")))
    return 0


@tool("cmd")
def cmd(io: ToolIO, argv: list[str]) -> int:
    """frameworks/native/cmds/cmd/cmd.cpp: dispatch ``cmd NAME ARGS`` to the service."""
    if len(argv) < 2:
        io.err("cmd: No service specified; use -l to list all running services. "
               "Use -w to start and wait for a service.\n")  # fmt: skip
        return CMD_NOT_FOUND_EXIT
    if argv[1] == "-l":
        return _list_services(io)
    handler = registry.SERVICES["cmd"].get(argv[1])
    if handler is None:
        return cant_find_service(io, "cmd", argv[1])
    return handler(io, argv[1:])


@tool("dumpsys")
def dumpsys(io: ToolIO, argv: list[str]) -> int:
    """frameworks/native/cmds/dumpsys/dumpsys.cpp: ``dumpsys NAME ARGS`` or ``-l``."""
    if len(argv) >= 2 and argv[1] == "-l":
        return _list_services(io)
    if len(argv) < 2:
        for name, dump in sorted(registry.SERVICES["dumpsys"].items()):
            io.out("-" * 79 + f"\nDUMP OF SERVICE {name}:\n")
            dump(io, [name])
        return 0
    handler = registry.SERVICES["dumpsys"].get(argv[1])
    if handler is None:
        return cant_find_service(io, "dumpsys", argv[1])
    return handler(io, argv[1:])


def _svc_commands(sdk: int) -> list[tuple[str, str]]:
    """Svc.java COMMANDS per release (data/wifi moved to ``cmd`` in Android 12)."""
    commands = [("help", "Show information about the subcommands"),
                ("power", "Control the power manager")]  # fmt: skip
    if sdk < 31:
        commands += [("data", "Control mobile data connectivity"),
                     ("wifi", "Control the Wi-Fi manager")]  # fmt: skip
    commands += [("usb", "Control Usb state"), ("nfc", "Control NFC functions"),
                 ("bluetooth", "Control Bluetooth service")]  # fmt: skip
    if sdk >= 30:
        commands.append(("system-server", "System server process related command"))
    return commands


def _svc_help(io: ToolIO) -> int:
    """Svc.java help: names padded to the longest name plus four (captured Android 13/14)."""
    commands = _svc_commands(io.phone.sdk)
    width = max(len(name) for name, _ in commands) + 4
    io.out("Available commands:\n")
    io.out("".join(f"    {name:<{width}}{text}\n" for name, text in commands))
    return 0


@tool("svc")
def svc(io: ToolIO, argv: list[str]) -> int:
    """``svc NAME ARGS``: the registered subcommand, else Svc.java's help listing."""
    handler = registry.SERVICES["svc"].get(argv[1]) if len(argv) > 1 else None
    if handler is None:
        return _svc_help(io)
    return handler(io, argv[1:])
