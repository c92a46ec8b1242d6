"""``dumpsys package [PKG]`` / ``pm dump PKG``: the ``Packages:`` section of the dump.

Layout from AOSP ``services/core/java/com/android/server/pm/Settings.java``
(``dumpPackageLPr``, ``dumpInstallPermissionsLPr``, ``dumpRuntimePermissionsLPr``,
``permissionFlagsToString``: ``, flags=[ A|B]`` with no space before ``]``, omitted when the
flags are 0). Only the lines clients read are printed; the resolver tables, key sets, dexopt
and query sections of the real dump are left out.

Per SDK: API 28 lists a runtime permission only once it has a state (granted or flags);
API 29+ lists every requested runtime permission. The ``User 0:`` line gains
``distractionFlags`` from API 29 and ``quarantined`` (API 35).

Quirk kept on purpose: ``android.permission.ACCESS_NOTIFICATION_POLICY`` is a normal
install-time permission, so any app that declares it shows ``granted=true`` under ``install
permissions`` even though real DND access is the secure setting
``enabled_notification_policy_access_packages``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoned.sim.android.packages import FLAG_NAMES, PackageManager, PermissionState
from phoned.sim.android.packages_catalog import DANGEROUS, PackageSpec, protection
from phoned.sim.shell.registry import ToolIO, service

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState


def flags_to_string(flags: int) -> str:
    """``Settings.permissionFlagsToString(", flags=", flags)``."""
    names = [name for bit, name in sorted(FLAG_NAMES.items()) if flags & bit]
    return f", flags=[ {'|'.join(names)}]" if names else ""


def _user_line(sdk: int) -> str:
    fields = ["ceDataInode=1409286", "installed=true", "hidden=false", "suspended=false"]
    if sdk >= 29:
        fields.append("distractionFlags=0")
    fields += ["stopped=false", "notLaunched=false", "enabled=0", "instant=false", "virtual=false"]
    if sdk >= 35:
        fields.append("quarantined=false")
    return "    User 0: " + " ".join(fields)


def _install_permissions(spec: PackageSpec, sdk: int) -> list[str]:
    perms = [p for p in spec.requested if protection(p, sdk) not in (None, DANGEROUS)]
    if not spec.system:
        perms = [p for p in perms if protection(p, sdk) != "signature"]
    if not perms:
        return []
    return ["    install permissions:"] + [f"      {p}: granted=true" for p in perms]


def _runtime_permissions(states: dict[str, PermissionState], sdk: int) -> list[str]:
    shown = {perm: st for perm, st in states.items() if sdk >= 29 or st.granted or st.flags}
    if not shown:
        return []
    lines = ["      runtime permissions:"]
    for perm, st in shown.items():
        lines.append(
            f"        {perm}: granted={str(st.granted).lower()}{flags_to_string(st.flags)}"
        )
    return lines


def _package_block(spec: PackageSpec, states: dict[str, PermissionState], sdk: int) -> list[str]:
    flags = (
        "[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ]"
        if spec.system
        else ("[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]")
    )
    lines = [
        f"  Package [{spec.name}] ({spec.identity}):",
        f"    userId={spec.app_id}",
        f"    pkg=Package{{{spec.identity} {spec.name}}}",
        f"    codePath={spec.code_path}",
        f"    resourcePath={spec.code_path}",
        "    primaryCpuAbi=arm64-v8a",
        "    secondaryCpuAbi=null",
        f"    versionCode={spec.version_code} minSdk={spec.min_sdk} targetSdk={spec.target_sdk}",
        f"    versionName={spec.version_name}",
        f"    flags={flags}",
        "    timeStamp=2024-05-01 10:00:00",
        "    firstInstallTime=2024-05-01 10:00:01",
        "    lastUpdateTime=2024-05-01 10:00:01",
    ]
    lines += [f"    {key}={value}" for key, value in spec.extra.items()]
    if spec.requested:
        lines.append("    requested permissions:")
        lines += [f"      {p}" for p in spec.requested]
    lines += _install_permissions(spec, sdk)
    lines.append(_user_line(sdk))
    lines += _runtime_permissions(states, sdk)
    return lines


def dump_package(phone: PhoneState, package: str = "") -> str:
    """The ``Packages:`` section for one package (all packages when ``package`` is empty);
    an unknown package gives an empty section, like the real dump's filter."""
    pm = phone.service(PackageManager)
    names = [package] if package else list(pm.packages)
    lines = ["Packages:"]
    for name in names:
        spec = pm.packages.get(name)
        if spec is not None:
            lines += _package_block(spec, pm.runtime[name], phone.sdk)
    return "\n".join(lines) + "\n"


@service("dumpsys", "package")
def dumpsys_package(io: ToolIO, argv: list[str]) -> int:
    """``dumpsys package [PKG]``."""
    words = [a for a in argv[1:] if not a.startswith("-")]
    with io.phone.lock:
        io.out(dump_package(io.phone, words[0] if words else ""))
    return 0
