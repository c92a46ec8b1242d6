"""``am start``, ``am force-stop`` and ``monkey -p PKG -c ... 1``.

Output text follows AOSP ActivityManagerShellCommand ``runStartActivity`` (frameworks/base
services/core/java/com/android/server/am/ActivityManagerShellCommand.java): ``Starting: ``
plus ``Intent.toString()`` before ``FLAG_ACTIVITY_NEW_TASK`` is added; warnings and errors
go to stderr unless ``-W`` (then stdout); the error line shows the intent *with*
``flg=0x10000000`` (captured: ``Error: Activity not started, unable to resolve Intent {
act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] flg=0x10000000
pkg=xxx }`` in public automation code); ``Error type 3`` precedes a missing class. With
``-W``: ``Status: ok``, ``LaunchState:`` (API 29+, replacing ``ThisTime:``), ``Activity:``,
``TotalTime:``, ``WaitTime:``, ``Complete``. Through API 30 ``runStartActivity`` returns 0
even on errors; from API 33 we exit 1 on a start error (see the report: not yet checked
against a capture).
"""

from __future__ import annotations

from collections.abc import Callable

from phoned.sim.android.packages import PackageManager
from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.ui.intents import Intent, IntentError, flatten_short, parse_start_args
from phoned.sim.ui.model import (
    START_CLASS_NOT_FOUND,
    START_INTENT_NOT_RESOLVED,
    START_PERMISSION_DENIED,
    START_TASK_TO_FRONT,
    StartResult,
    Ui,
)

SHELL_PID = 8142  # the pid of the shell's `am` process a denial names
TASK_TO_FRONT = "Warning: Activity not started, its current task has been brought to the front"


def _error_exit(sdk: int) -> int:
    return 1 if sdk >= 33 else 0


def _exception(io: ToolIO, verb: str, exc: IntentError) -> int:
    """ShellCommand's uncaught-exception report (exit 255)."""
    io.err(
        f"Exception occurred while executing '{verb}':\njava.lang.IllegalArgumentException: {exc}\n"
    )
    return 255


def _wait_block(io: ToolIO, result: StartResult) -> None:
    sdk = io.phone.sdk
    total = {"COLD": 612, "WARM": 240, "HOT": 95}[result.launch_state]
    lines = ["Status: ok"]
    if sdk >= 29:
        lines.append(f"LaunchState: {result.launch_state}")
    if result.component is not None:
        lines.append(f"Activity: {flatten_short(*result.component)}")
    if sdk < 29:
        lines.append(f"ThisTime: {total}")
    lines += [f"TotalTime: {total}", f"WaitTime: {total + 9}", "Complete"]
    io.out("\n".join(lines) + "\n")


def am_start(io: ToolIO, args: list[str]) -> int:
    """``am start [options] [URI|COMPONENT|PACKAGE]``."""
    ui = io.phone.service(Ui)
    try:
        intent = parse_start_args(args)
    except IntentError as exc:
        return _exception(io, "start", exc)
    io.out(f"Starting: {intent}\n")
    if intent.stop_first and intent.component is not None:
        ui.force_stop(intent.component[0])
    result = ui.start(intent)
    say = io.out if intent.wait else io.err
    if result.code == START_INTENT_NOT_RESOLVED:
        say(f"Error: Activity not started, unable to resolve {intent}\n")
        return _error_exit(io.phone.sdk)
    if result.code == START_CLASS_NOT_FOUND and result.component is not None:
        pkg, cls = result.component
        say(f"Error type 3\nError: Activity class {{{pkg}/{cls}}} does not exist.\n")
        return _error_exit(io.phone.sdk)
    if result.code == START_PERMISSION_DENIED and result.component is not None:
        return _not_exported(io, intent, result.component)
    if result.code == START_TASK_TO_FRONT:
        say(TASK_TO_FRONT + "\n")
    if intent.wait:
        _wait_block(io, result)
    return 0


def _supervisor(sdk: int) -> str:
    """The class whose frame a denial's trace starts with: ``am.ActivityStackSupervisor``
    (API 28, appium/appium#11307), ``wm.ActivityStackSupervisor`` (API 29-30, moved to the
    window manager), ``wm.ActivityTaskSupervisor`` (API 31+, appium/appium#19281)."""
    if sdk < 29:
        return "com.android.server.am.ActivityStackSupervisor"
    return f"com.android.server.wm.{'ActivityStackSupervisor' if sdk < 31 else 'ActivityTaskSupervisor'}"


def _not_exported(io: ToolIO, intent: Intent, component: tuple[str, str]) -> int:
    """An activity without ``android:exported``: ActivityTaskSupervisor
    .checkStartAnyActivityPermission throws ``Permission Denial: starting Intent {...} from
    null (pid=P, uid=2000) not exported from uid U`` (``from null``: the shell has no app
    record) and BasicShellCommandHandler.exec prints ``Security exception: `` + its message,
    a blank line and the stack trace on stderr, whatever ``-W`` says, and returns -1 (255).
    Captured: appium/appium#11307, appium/appium-desktop#605, bamlab/flashlight#21; some
    API 31+ builds print ``Exception occurred while executing 'start':`` before the
    ``java.lang.SecurityException`` line instead (appium/appium#19281); phoned's app.open
    reads both forms."""
    app_id = io.phone.service(PackageManager).packages[component[0]].app_id
    message = (
        f"Permission Denial: starting {intent} from null (pid={SHELL_PID}, uid=2000) "
        f"not exported from uid {app_id}"
    )
    io.err(
        f"Security exception: {message}\n\njava.lang.SecurityException: {message}\n"
        f"\tat {_supervisor(io.phone.sdk)}.checkStartAnyActivityPermission\n"
    )
    return 255


def am_force_stop(io: ToolIO, args: list[str]) -> int:
    """``am force-stop [--user N] PACKAGE``: silent, exit 0 even for unknown packages."""
    names = [a for a in args if not a.startswith("--")]
    if args[:1] == ["--user"]:
        names = args[2:]
    if not names:
        io.err(
            "Exception occurred while executing 'force-stop':\n"
            'java.lang.IllegalArgumentException: Argument expected after "force-stop"\n'
        )
        return 255
    io.phone.service(Ui).force_stop(names[0])
    return 0


SUBCOMMANDS: dict[str, Callable[[ToolIO, list[str]], int]] = {
    "start": am_start,
    "start-activity": am_start,
    "force-stop": am_force_stop,
}


@tool("am")
def am(io: ToolIO, argv: list[str]) -> int:
    """The ``am`` binary (the subset phoned and uiautomator2 use)."""
    if len(argv) < 2 or argv[1] not in SUBCOMMANDS:
        verb = argv[1] if len(argv) > 1 else ""
        io.err(f"Unknown command: {verb}\n" if verb else "Activity manager (activity) commands:\n")
        return 255 if verb else 0
    return SUBCOMMANDS[argv[1]](io, argv[2:])


@tool("monkey")
def monkey(io: ToolIO, argv: list[str]) -> int:
    """``monkey -p PKG -c android.intent.category.LAUNCHER 1``: launches PKG's main activity.

    Output shape from captured runs (the ``bash arg:`` lines come from the ``/system/bin/
    monkey`` wrapper script; ``Events injected``/``Network stats`` from Monkey.java).
    """
    args = argv[1:]
    lines = [f"  bash arg: {a}" for a in args]
    package = args[args.index("-p") + 1] if "-p" in args[:-1] else None
    io.out("\n".join(lines) + ("\n" if lines else ""))
    ui = io.phone.service(Ui)
    launcher = Intent(
        action="android.intent.action.MAIN",
        categories=["android.intent.category.LAUNCHER"],
        package=package,
    )
    target = ui.resolve(launcher) if package is not None else None
    if target is None:
        io.err("** No activities found to run, monkey aborted.\n")
        return 251
    ui.start(
        Intent(
            action="android.intent.action.MAIN",
            categories=["android.intent.category.LAUNCHER"],
            component=target,
        )
    )
    io.out(
        "Events injected: 1\n"
        "## Network stats: elapsed time=13ms (0ms mobile, 0ms wifi, 13ms not connected)\n"
    )
    return 0
