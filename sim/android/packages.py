"""Package manager model: installed packages, runtime-permission grants and role holders;
``pm`` / ``cmd package`` (same tool: ``pm`` is a script running ``cmd package "$@"`` since
Android 7) and ``cmd role``. ``dumpsys package`` lives in ``packages_dump.py``.

Sources (AOSP ``platform_frameworks_base``):

* ``services/core/java/com/android/server/pm/PackageManagerShellCommand.java``: ``list
  packages`` (``package:`` lines, ``-f`` adds ``<apk>=``, ``-3``/``-s``, ``-d`` only
  disabled, ``-e`` only enabled, ``-U`` adds `` uid:N``), ``path`` (``package:<apk>``; exit 1 and no output for an unknown package),
  ``grant``/``revoke`` (``Error: no package specified``, exit 1), ``resolve-activity``.
* ``ShellCommand.exec``: an exception prints ``Exception occurred while executing '<cmd>':``
  and the stack trace to stderr, exit -1 (255). Exception texts come from
  ``PermissionManagerService`` (API 28-33) and ``PermissionService.kt`` (API 34+); captures:
  github.com/darshanparajuli/LogcatReader/issues/69 (API 33 frames),
  github.com/thejaustin/ShizukuPlus/issues/358 (``requested by package ... is not a
  changeable permission type``), github.com/ARM-software/devlib/pull/169 (older wording).
* ``RoleShellCommand.java`` (API 31+, packages/modules/Permission): ``get-role-holders``
  prints the holders joined by ``;``; ``add-role-holder`` / ``remove-role-holder`` print
  nothing on success. Android 10 and 11 have frameworks/base ``RoleManagerShellCommand``
  with only add/remove/clear: ``get-role-holders`` falls to ShellCommand
  .handleDefaultCommands, which prints ``Unknown command: get-role-holders`` on stdout and
  exits 255.

The SMS role is exclusive. Below API 29 the secure setting ``sms_default_application`` is the
source of truth; from API 29 the role is, and the setting is rewritten whenever it changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoned.sim.android.packages_catalog import (
    DANGEROUS,
    PackageSpec,
    installed_packages,
    protection,
    sms_perms,
)
from phoned.sim.shell.registry import SERVICES, SimService, ToolIO, load_all, service, tool

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

SMS_PACKAGE = "com.google.android.apps.messaging"
ROLE_SMS = "android.app.role.SMS"
SMS_SETTING = "sms_default_application"

# PackageManager.FLAG_PERMISSION_* (bit order is the order dumpsys prints them in).
FLAG_NAMES = {
    0x1: "USER_SET",
    0x2: "USER_FIXED",
    0x4: "POLICY_FIXED",
    0x10: "SYSTEM_FIXED",
    0x20: "GRANTED_BY_DEFAULT",
    0x100: "USER_SENSITIVE_WHEN_GRANTED",
    0x200: "USER_SENSITIVE_WHEN_DENIED",
    0x8000: "GRANTED_BY_ROLE",
}
USER_SENSITIVE = 0x100 | 0x200

# Frames ShellCommand prints under the exception (abbreviated to the shell-command part;
# API 33 capture: LogcatReader issue #69).
_FRAMES = (
    "\tat com.android.server.pm.PackageManagerShellCommand.runGrantRevokePermission"
    "(PackageManagerShellCommand.java:2591)\n"
    "\tat com.android.server.pm.PackageManagerShellCommand.onCommand"
    "(PackageManagerShellCommand.java:302)\n"
    "\tat com.android.modules.utils.BasicShellCommandHandler.exec"
    "(BasicShellCommandHandler.java:97)\n"
    "\tat android.os.ShellCommand.exec(ShellCommand.java:38)\n"
)


class PackageError(Exception):
    """A Java exception the package or role service throws; ``str()`` is ``toString()``."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(f"{java_class}: {message}")


@dataclass
class PermissionState:
    """A runtime permission of one package for user 0."""

    granted: bool
    flags: int = 0


class PackageManager:
    """Installed packages with their runtime-permission grants and the role holders."""

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self.packages: dict[str, PackageSpec] = {p.name: p for p in installed_packages(phone.sdk)}
        self.runtime: dict[str, dict[str, PermissionState]] = {
            p.name: self._initial_grants(p) for p in self.packages.values()
        }
        self.roles: dict[str, list[str]] = {}
        self.disabled: set[str] = set()  # pm disable-user: listed by -d, never resolved
        self.debuggable: set[str] = set()  # built debuggable (run-as works): none by default
        self.home_package = "com.google.android.apps.nexuslauncher"  # answers category HOME
        for spec in self.packages.values():
            for role in spec.role_holds:
                self.roles.setdefault(role, []).append(spec.name)
        phone.settings.put("secure", SMS_SETTING, SMS_PACKAGE, notify=False)

    def _initial_grants(self, spec: PackageSpec) -> dict[str, PermissionState]:
        sdk = self.phone.sdk
        preset = spec.system  # system apps are granted by default (or by their role)
        flags = 0
        if preset:
            flags = 0x20 if sdk < 29 or not spec.role_holds else 0x8000 | USER_SENSITIVE
            if spec.name == "com.android.shell":
                flags = 0x10 | 0x20
        elif sdk >= 29:
            flags = USER_SENSITIVE
        return {
            perm: PermissionState(preset, flags)
            for perm in spec.requested
            if protection(perm, sdk) == DANGEROUS
        }

    # ------------------------------------------------------------------ documented queries

    def is_installed(self, package: str) -> bool:
        return package in self.packages

    def requested_permissions(self, package: str) -> list[str]:
        """Permissions the manifest requests, in manifest order; [] for an unknown package."""
        spec = self.packages.get(package)
        return list(spec.requested) if spec else []

    def runtime_permissions(self, package: str) -> dict[str, bool]:
        """Runtime (dangerous) permission -> granted, for user 0."""
        return {perm: st.granted for perm, st in self.runtime.get(package, {}).items()}

    def is_granted(self, package: str, permission: str) -> bool:
        """Runtime permissions by grant state; install-time ones are granted when requested."""
        if package not in self.packages:
            return False
        state = self.runtime[package].get(permission)
        if state is not None:
            return state.granted
        return permission in self.packages[package].requested

    def is_enabled(self, package: str) -> bool:
        """Installed and not disabled (``pm list packages -e``)."""
        return self.is_installed(package) and package not in self.disabled

    def spec(self, package: str) -> PackageSpec | None:
        """What the manifest of an installed package declares; None when not installed."""
        return self.packages.get(package)

    def launch_activity(self, package: str) -> str | None:
        """The LAUNCHER activity as ``pkg/.Activity``, None when the package has none."""
        spec = self.packages.get(package)
        return spec.launch_activity if spec else None

    # ------------------------------------------------------------------ grants

    def _check_changeable(self, package: str, permission: str) -> PermissionState:
        sdk = self.phone.sdk
        spec = self.packages.get(package)
        if spec is None:
            raise PackageError("java.lang.IllegalArgumentException", f"Unknown package: {package}")
        level = protection(permission, sdk)
        if level is None:
            raise PackageError(
                "java.lang.IllegalArgumentException", f"Unknown permission: {permission}"
            )
        if permission not in spec.requested:
            raise PackageError(
                "java.lang.SecurityException",
                f"Package {package} has not requested permission {permission}",
            )
        state = self.runtime[package].get(permission)
        if level != DANGEROUS or state is None:
            by = (
                ""
                if sdk < 30
                else f" requested by {package}"
                if sdk < 34
                else (f" requested by package {package}")
            )
            raise PackageError(
                "java.lang.SecurityException",
                f"Permission {permission}{by} is not a changeable permission type",
            )
        return state

    def grant(self, package: str, permission: str) -> None:
        """``pm grant``; raises PackageError with the real exception text on bad input."""
        self._check_changeable(package, permission).granted = True

    def revoke(self, package: str, permission: str) -> None:
        """``pm revoke``; raises PackageError with the real exception text on bad input."""
        self._check_changeable(package, permission).granted = False

    # ------------------------------------------------------------------ roles

    def role_holders(self, role: str) -> list[str]:
        if role == ROLE_SMS:
            holder = self.default_sms_package()
            return [holder] if holder else []
        return list(self.roles.get(role, []))

    def add_role_holder(self, role: str, package: str) -> None:
        """``RoleManager.addRoleHolderAsUser``; the SMS role needs an SMS-capable package."""
        if not self._qualifies(role, package):
            raise PackageError("java.lang.RuntimeException", "Failed")
        if role == ROLE_SMS:
            self.roles[role] = [package]
            self.phone.settings.put("secure", SMS_SETTING, package, notify=False)
        elif package not in self.roles.setdefault(role, []):
            self.roles[role].append(package)

    def _qualifies(self, role: str, package: str) -> bool:
        """Simplified role eligibility: the SMS role needs an app that can send SMS."""
        spec = self.packages.get(package)
        if spec is None or spec.name == "com.android.shell":
            return False
        return role != ROLE_SMS or "android.permission.SEND_SMS" in spec.requested

    def remove_role_holder(self, role: str, package: str) -> None:
        holders = self.roles.get(role, [])
        if package in holders:
            holders.remove(package)
        if role == ROLE_SMS and not holders:
            self.phone.settings.delete("secure", SMS_SETTING)

    def install_sms_app(self, package: str, launch_activity: str) -> None:
        """Install an SMS app (a vendor's, preinstalled as a system app) and make it the
        default: the SMS role from API 29 (the secure setting follows), the setting below."""
        sdk = self.phone.sdk
        spec = PackageSpec(
            package, 10171, f"/system/priv-app/{package.rsplit('.', 1)[-1]}", "16.2.10.27",
            1621000027, True, sms_perms(sdk), f"{package}/{launch_activity}",
        )  # fmt: skip
        self.packages[package] = spec
        self.runtime[package] = self._initial_grants(spec)
        if sdk >= 29:
            self.add_role_holder(ROLE_SMS, package)
        else:
            self.phone.settings.put("secure", SMS_SETTING, package, notify=False)

    def default_sms_package(self) -> str | None:
        """The holder of ``android.app.role.SMS`` (or ``sms_default_application`` below API 29)."""
        if self.phone.sdk < 29:
            value = self.phone.settings.get("secure", SMS_SETTING)
            return value if value in self.packages else None
        holders = self.roles.get(ROLE_SMS, [])
        return holders[0] if holders else None


# ============================================================================ tools


def cant_find_service(io: ToolIO, kind: str, name: str) -> int:
    """Delegate to ``base_tools.cant_find_service``; until it exists print what
    ``frameworks/native/cmds/cmd/cmd.cpp`` prints (``cmd: Can't find service: X``, exit 20)."""
    module = importlib.import_module("phoned.sim.shell.tools.base_tools")
    shared = getattr(module, "cant_find_service", None)
    if shared is not None:
        return int(shared(io, kind, name))
    io.err(f"cmd: Can't find service: {name}\n")
    return 20


def _exception(io: ToolIO, command: str, exc: PackageError) -> int:
    """``ShellCommand.exec``'s catch block: header, exception and frames on stderr, -1."""
    io.err(f"Exception occurred while executing '{command}':\n{exc}\n{_FRAMES}")
    return 255


def _list_packages(io: ToolIO, args: list[str]) -> int:
    pm = io.phone.service(PackageManager)
    opts = {a for a in args if a.startswith("-")}
    words = [a for a in args if not a.startswith("-")]
    filt = words[0] if words else ""
    for spec in pm.packages.values():
        if (
            filt not in spec.name
            or ("-3" in opts and spec.system)
            or ("-s" in opts and not spec.system)
            or ("-d" in opts and spec.name not in pm.disabled)
            or ("-e" in opts and spec.name in pm.disabled)
        ):
            continue
        line = "package:" + (f"{spec.apk}=" if "-f" in opts else "") + spec.name
        if "-U" in opts:
            line += f" uid:{spec.app_id}"
        io.out(line + "\n")
    return 0


def _list(io: ToolIO, args: list[str]) -> int:
    if args[:1] == ["packages"]:
        return _list_packages(io, args[1:])
    io.err(f"Error: unknown list type '{args[0] if args else ''}'\n")
    return 255


def _path(io: ToolIO, args: list[str]) -> int:
    spec = io.phone.service(PackageManager).packages.get(args[0]) if args else None
    if spec is None:
        return 1
    io.out(f"package:{spec.apk}\n")
    return 0


def _grant_revoke(verb: str) -> Callable[[ToolIO, list[str]], int]:
    def run(io: ToolIO, args: list[str]) -> int:
        if not args:
            io.err("Error: no package specified\n")
            return 1
        if len(args) < 2:
            io.err("Error: no permission specified\n")
            return 1
        pm = io.phone.service(PackageManager)
        try:
            (pm.grant if verb == "grant" else pm.revoke)(args[0], args[1])
        except PackageError as exc:
            return _exception(io, verb, exc)
        return 0

    return run


def _resolve_activity(io: ToolIO, args: list[str]) -> int:
    """``resolve-activity [--brief|--components] [-a A] [-c C] PKG``: the launcher activity
    (with ``-c android.intent.category.HOME`` and no package: the home app's)."""
    words, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-a", "-c", "--user"):
            skip = True
        elif not arg.startswith("-"):
            words.append(arg)
    target = words[-1] if words else ""
    pm = io.phone.service(PackageManager)
    if "android.intent.category.HOME" in args and not words:  # the home app (launcher)
        target = pm.home_package
    activity = pm.launch_activity(target.split("/")[0])
    if activity is None:
        io.out("No activity found\n")
        return 0
    if "--components" not in args:
        io.out("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n")
    io.out(activity + "\n")
    return 0


RESOLVE_PRIORITY = "    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false"


def _resolve_info_dump(component: str) -> list[str]:
    """The head of ``ResolveInfo.dump`` for a launcher match (no ``--brief``): after the
    priority line, ``ActivityInfo:`` and ``ActivityInfo.dump``'s first lines,
    ``PackageItemInfo.dumpFront`` (``name=`` the full class, ``packageName=``) and
    ``ComponentInfo.dumpFront`` (``enabled= exported= directBootAware=``). The rest of the
    dump (task affinity, flags, the whole ``ApplicationInfo``) is not modelled; readers such
    as mobile-mcp's ``listApps`` take the ``packageName=`` lines."""
    package, _, cls = component.partition("/")
    name = package + cls if cls.startswith(".") else cls
    return [
        "    ActivityInfo:",
        f"      name={name}",
        f"      packageName={package}",
        "      enabled=true exported=true directBootAware=false",
    ]


def _query_activities(io: ToolIO, args: list[str]) -> int:
    """``query-activities [--brief|--components] -a android.intent.action.MAIN -c
    android.intent.category.LAUNCHER``: the enabled packages' launcher activities.

    PackageManagerShellCommand.runQueryIntentActivities: ``No activities found`` when none;
    with ``--components`` one ``pkg/.Cls`` per line (printResolveInfo); else ``N activities
    found:`` and per match ``  Activity #I:`` with the ResolveInfo: with ``--brief`` its
    priority line and component (``printResolveInfo``), else ``ResolveInfo.dump``, whose
    head is modelled (``_resolve_info_dump``). Only the launcher query is
    modelled: any other action or category finds nothing.
    """
    pm = io.phone.service(PackageManager)
    launcher = "android.intent.action.MAIN" in args and "android.intent.category.LAUNCHER" in args
    found = [
        spec.launch_activity
        for spec in pm.packages.values()
        if launcher and spec.launch_activity and pm.is_enabled(spec.name)
    ]
    if not found:
        io.out("No activities found\n")
        return 0
    if "--components" in args:
        io.out("".join(f"{c}\n" for c in found))
        return 0
    lines = [f"{len(found)} activities found:"]
    for i, component in enumerate(found):
        lines += [f"  Activity #{i}:", RESOLVE_PRIORITY]
        lines += [f"    {component}"] if "--brief" in args else _resolve_info_dump(component)
    io.out("\n".join(lines) + "\n")
    return 0


def _dump(io: ToolIO, args: list[str]) -> int:
    """``pm dump PKG``: PackageManagerShellCommand hands ``PKG`` to the package service's
    own dump, which is ``dumpsys package`` (``packages_dump.py``, found in the table)."""
    load_all()
    return SERVICES["dumpsys"]["package"](io, ["package", *args[:1]])


PACKAGE_COMMANDS: dict[str, Callable[[ToolIO, list[str]], int]] = {
    "list": _list,
    "path": _path,
    "grant": _grant_revoke("grant"),
    "revoke": _grant_revoke("revoke"),
    "resolve-activity": _resolve_activity,
    "query-activities": _query_activities,
    "dump": _dump,
}


@service("cmd", "package")
def cmd_package(io: ToolIO, argv: list[str]) -> int:
    """``cmd package SUBCOMMAND ...`` (``argv[0]`` is the service name)."""
    sub = argv[1] if len(argv) > 1 else ""
    handler = PACKAGE_COMMANDS.get(sub)
    if handler is None:
        io.err(f"Unknown command: {sub}\n")  # ShellCommand.handleDefaultCommands
        return 255
    with io.phone.lock:
        return handler(io, argv[2:])


@tool("pm")
def pm(io: ToolIO, argv: list[str]) -> int:
    """``/system/bin/pm``: a script that runs ``cmd package "$@"``."""
    return cmd_package(io, ["package", *argv[1:]])


def _role_args(args: list[str]) -> list[str]:
    """Drop ``--user N`` / ``--flags N`` options RoleShellCommand accepts."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("--user", "--flags"):
            skip = True
        else:
            out.append(arg)
    return out


def _role_command(io: ToolIO, sub: str, args: list[str]) -> int:
    pm = io.phone.service(PackageManager)
    if sub == "get-role-holders" and args and io.phone.sdk >= GET_ROLE_HOLDERS_SDK:
        io.out(";".join(pm.role_holders(args[0])) + "\n")
        return 0
    if sub in ("add-role-holder", "remove-role-holder") and len(args) >= 2:
        try:
            if sub == "add-role-holder":
                pm.add_role_holder(args[0], args[1])
            else:
                pm.remove_role_holder(args[0], args[1])
        except PackageError as exc:
            io.err(f"Exception occurred while executing '{sub}':\n{exc}\n")
            return 255
        return 0
    io.out(f"Unknown command: {sub}\n")  # ShellCommand.handleDefaultCommands: stdout
    return 255


# ``get-role-holders`` came with the Permission module's RoleShellCommand (Android 12).
GET_ROLE_HOLDERS_SDK = 31


@service("cmd", "role")
def cmd_role(io: ToolIO, argv: list[str]) -> int:
    """``cmd role`` (API 29+; the role service does not exist on API 28)."""
    if io.phone.sdk < 29:
        return cant_find_service(io, "cmd", "role")
    sub = argv[1] if len(argv) > 1 else ""
    with io.phone.lock:
        return _role_command(io, sub, _role_args(argv[2:]))


SIM_SERVICE = SimService("packages", PackageManager)  # phone.service(PackageManager)
