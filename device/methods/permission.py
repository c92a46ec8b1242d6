"""``permission.check`` / ``permission.request``: runtime permissions and special access.

* A runtime permission (``permission: android.permission.X``) is read from ``dumpsys package
  PKG``: the ``runtime permissions:`` lines ``PERM: granted=true|false`` (install-time
  permissions are always granted). Recovery screen: ``APPLICATION_DETAILS_SETTINGS`` with
  ``package:PKG``.
* ``special: notification_listener`` is the secure setting ``enabled_notification_listeners``
  (flattened ComponentNames joined by ``:``); recovery screen
  ``ACTION_NOTIFICATION_LISTENER_SETTINGS``.
* ``special: dnd_access`` is the secure setting ``enabled_notification_policy_access_packages``;
  recovery screen ``NOTIFICATION_POLICY_ACCESS_SETTINGS``. ``dumpsys package`` is never used
  for it: ACCESS_NOTIFICATION_POLICY is a normal permission and shows ``granted=true`` for
  any app that declares it, whether or not DND access was given.

``request`` opens the screen and answers ``needs_permission`` until a later call observes
the grant; only with ``ctx.ci_grant`` (CI, off by default, noted in the evidence) does it
grant through ``pm grant`` / ``cmd notification allow_listener|allow_dnd`` and verify.

Sources of the commands (AOSP ``platform_frameworks_base``): ``settings get secure``:
packages/SettingsProvider/.../SettingsService.java; ``am start -W -a ACTION [-d DATA]``:
services/core/java/com/android/server/am/ActivityManagerShellCommand.java and
``Intent.parseCommandArgs``; ``cmd notification allow_listener|allow_dnd``: services/core/
java/com/android/server/notification/NotificationShellCmd.java; ``pm grant``:
PackageManagerShellCommand. ``dumpsys package PKG`` is shared with the daemon's
permission recheck (``commands.dumpsys_package``, ``parsers.parse_package_permissions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from phoned.device import commands, parsers
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method
from phoned.device.actions.params import COMPONENT, PACKAGE, PERMISSION, Params
from phoned.device.actions.reads import got, invalid, read, target
from phoned.device.actions.setting import Change, ask
from phoned.device.commands import Argv
from pydantic import Field, model_validator

# ---- params ------------------------------------------------------------------------------


class Permission(Params):
    """A runtime permission (package + permission) or a special access."""

    package: str = Field(
        pattern=rf"^{PACKAGE.pattern}$",
        description="Android package name",
        examples=["com.example.notes"],
    )
    permission: str | None = Field(
        default=None,
        pattern=rf"^{PERMISSION.pattern}$",
        description="a runtime permission (give this or special)",
        examples=["android.permission.CAMERA"],
    )
    special: Literal["notification_listener", "dnd_access"] | None = Field(
        default=None, description="a special access (give this or permission)"
    )
    component: str | None = Field(
        default=None,
        pattern=rf"^{COMPONENT.pattern}$",
        description="the listener service (pkg/.Cls), only for special notification_listener",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Permission:
        if (self.permission is None) == (self.special is None):
            raise ValueError("give exactly one of permission or special")
        if self.special == "notification_listener" and self.component is None:
            raise ValueError("special notification_listener needs component")
        if self.special != "notification_listener" and self.component is not None:
            raise ValueError("component is only for special notification_listener")
        return self


# ---- commands ----------------------------------------------------------------------------

LISTENERS_GET: Argv = commands.settings_get("secure", "enabled_notification_listeners")
DND_ACCESS_GET: Argv = commands.settings_get(
    "secure", "enabled_notification_policy_access_packages"
)
ACTION_LISTENER_SETTINGS = "android.settings.ACTION_NOTIFICATION_LISTENER_SETTINGS"
ACTION_DND_ACCESS_SETTINGS = "android.settings.NOTIFICATION_POLICY_ACCESS_SETTINGS"
ACTION_APP_DETAILS = "android.settings.APPLICATION_DETAILS_SETTINGS"


def open_settings(action: str, data: str | None = None) -> Argv:
    """``am start -W -a ACTION [-d DATA]``: a settings screen."""
    argv: Argv = ("am", "start", "-W", "-a", action)
    return (*argv, "-d", data) if data is not None else argv


def pm_grant(package: str, permission: str) -> Argv:
    """``pm grant PKG PERMISSION`` (CI-only grant path)."""
    return ("pm", "grant", package, permission)


def allow_listener(component: str) -> Argv:
    """``cmd notification allow_listener COMPONENT`` (CI-only grant path)."""
    return ("cmd", "notification", "allow_listener", component)


def allow_dnd(package: str) -> Argv:
    """``cmd notification allow_dnd PACKAGE`` (CI-only grant path)."""
    return ("cmd", "notification", "allow_dnd", package)


# ---- parsers: the shared ``parsers.parse_colon_list`` and ``parse_package_permissions`` --

# ---- actions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """A validated request: what to check, for which package."""

    package: str
    permission: str | None  # a runtime permission, or None for special access
    access: str | None  # special access: "notification_listener" or "dnd_access"
    component: str | None  # the listener component (for granting a listener)

    @property
    def what(self) -> str:
        return self.permission or f"access:{self.access}"


def _request(params: Permission) -> Request:
    """What to check, from the validated params (every text matched a strict pattern)."""
    return Request(params.package, params.permission, params.special, params.component)


def _secure_list(ctx: ActionContext, name: str, argv: Argv, phase: str) -> list[str]:
    """The secure setting ``name``, a list joined by ``:``, read and observed under its name."""
    return read(ctx, name, argv, parsers.parse_colon_list, phase)


def _listener_granted(ctx: ActionContext, req: Request, phase: str) -> bool:
    items = _secure_list(ctx, "enabled_notification_listeners", LISTENERS_GET, phase)
    if req.component:
        pkg, _, cls = req.component.partition("/")
        full = f"{pkg}/{pkg}{cls}" if cls.startswith(".") else req.component
        return full in items
    return any(item.split("/", 1)[0] == req.package for item in items)


def _dnd_granted(ctx: ActionContext, req: Request, phase: str) -> bool:
    items = _secure_list(ctx, "enabled_notification_policy_access_packages", DND_ACCESS_GET, phase)
    return req.package in items


def _runtime_granted(ctx: ActionContext, req: Request, phase: str) -> bool | str:
    """True/False, or a reason string when the permission can never be granted."""
    argv = commands.dumpsys_package(req.package)
    text = ctx.recorder.read(argv).stdout
    if not parsers.package_listed(text, req.package):
        ctx.recorder.observe(f"{req.package}", "not installed", phase, argv)
        return f"{req.package} is not installed"
    perms = parsers.parse_package_permissions(text)
    perm = req.permission or ""
    state = perms["runtime"].get(perm, perms["install"].get(perm))
    ctx.recorder.observe(f"{req.package}:{perm}", state, phase, argv)
    if state is None and ctx.device.sdk >= 29:
        return f"{req.package} does not request {perm}"
    return bool(state)


def granted(ctx: ActionContext, req: Request, phase: str) -> bool | str:
    """Whether the grant is observed now (a string: why it can never be)."""
    if req.access == "notification_listener":
        return _listener_granted(ctx, req, phase)
    if req.access == "dnd_access":
        return _dnd_granted(ctx, req, phase)
    return _runtime_granted(ctx, req, phase)


def recovery_screen(req: Request) -> tuple[str, ...]:
    """The settings screen where a person gives this grant."""
    if req.access == "notification_listener":
        return open_settings(ACTION_LISTENER_SETTINGS)
    if req.access == "dnd_access":
        return open_settings(ACTION_DND_ACCESS_SETTINGS)
    return open_settings(ACTION_APP_DETAILS, f"package:{req.package}")


def grant_command(req: Request) -> tuple[str, ...] | None:
    """The CI-only command that grants it (None: a listener without a component)."""
    if req.access == "notification_listener":
        return allow_listener(req.component) if req.component else None
    if req.access == "dnd_access":
        return allow_dnd(req.package)
    return pm_grant(req.package, req.permission or "")


def check(ctx: ActionContext, params: Permission) -> Outcome:
    """Whether the permission/access is granted (value: {"granted": bool, ...})."""
    req = _request(params)
    state = granted(ctx, req, "read")
    if isinstance(state, str):
        return invalid(ctx, "permission" if req.permission else "package", state)
    return got(ctx, {"package": req.package, "what": req.what, "granted": state})


def request_change(req: Request, screen: str, *, ci_grant: bool = False) -> Change:
    """``android.permission.CAMERA of com.example.notes not granted -> settings screen
    android.settings.APPLICATION_DETAILS_SETTINGS opened`` (with ``ci_grant``: granted by
    command)."""
    after = "granted by command (CI)" if ci_grant else f"settings screen {screen} opened"
    return Change(f"{req.what} of {req.package}", "not granted", after)


def request(ctx: ActionContext, params: Permission) -> Outcome:
    """Met once the grant is observed; else open the recovery screen (or CI-grant). When
    the owner's policy asks, it stops before opening the screen with the preview of the
    package, the permission or access, and the screen (``setting.ask``)."""
    req = _request(params)
    before = granted(ctx, req, "before")
    if isinstance(before, str):
        return invalid(ctx, "permission" if req.permission else "package", before)
    if before:
        ctx.recorder.note("already granted: no command sent")
        return outcome(ctx, Status.MET, target(True, True), f"{req.what} granted")
    screen = recovery_screen(req)
    asked = ask(
        ctx, request_change(req, screen[4], ci_grant=ctx.ci_grant), {"granted": before},
        target=req.package, package=req.package, permission=req.permission,
        access=req.access, screen=screen[4],
    )  # fmt: skip
    if asked is not None:
        return asked
    if ctx.ci_grant:
        return _ci_grant(ctx, req)
    ctx.effect("permission.request", f"open {screen[4]}", screen, {"what": req.what})
    return outcome(
        ctx, Status.NEEDS_PERMISSION, target(True, False),
        f"{req.what} is not granted to {req.package}; the settings screen is open",
        permission=req.what, package=req.package, screen=screen[4],
    )  # fmt: skip


def _ci_grant(ctx: ActionContext, req: Request) -> Outcome:
    argv = grant_command(req)
    if argv is None:
        return invalid(ctx, "component", "granting a listener needs its component PACKAGE/CLASS")
    ctx.recorder.note("CI grant: permission granted by command, not by a person (ci_grant)")
    ctx.effect("permission.grant", req.what, argv, {"what": req.what, "package": req.package})
    after, ok = ctx.poll(
        req.what,
        lambda: granted(ctx, req, "after"),
        lambda v: v is True,
        timeout=min(ctx.settle_timeout, 2.0),
    )
    return outcome(
        ctx,
        Status.MET if ok else Status.NOT_MET,
        target(True, after),
        f"{req.what} {'granted' if ok else 'still not granted'} (CI grant)",
    )


def reconcile(ctx: ActionContext, params: Permission, hint: dict[str, Any]) -> str:
    """Is the grant observed now?"""
    req = _request(params)
    state = granted(ctx, req, "read")
    if isinstance(state, str):
        return "cannot_tell"
    return "happened" if state else "did_not_happen"


def name_target(params: dict[str, Any], observed: Any) -> str:
    """``permission.granted`` or ``permission.missing``."""
    granted = observed.get("granted") if isinstance(observed, dict) else observed
    return "permission.granted" if granted is True else "permission.missing"


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads=(
        "`dumpsys package PKG` (runtime grants); secure `enabled_notification_listeners` / "
        "`enabled_notification_policy_access_packages`"
    ),
    effect=(
        "`am start -W -a <settings action> [-d package:PKG]`; with `ctx.ci_grant`: `pm grant` / "
        "`cmd notification allow_listener|allow_dnd`"
    ),
    verified="the same reads, polled",
)

DECLARED = (
    Method(
        "permission.check",
        Permission,
        check,
        name_target,
        summary="Check whether an app holds a runtime permission or a special access.",
        reads="dumpsys package (runtime grants) or the secure settings of listeners / DND access",
        emulator_params={"package": "com.android.shell", "special": "dnd_access"},
    ),
    Method(
        "permission.request",
        Permission,
        request,
        name_target,
        reconcile=reconcile,
        previews=True,
        summary="Ask for a permission or special access: pauses until the person grants it "
        "on the phone, then verifies the grant.",
        reads="the same grant state as permission.check",
        changes="opens the settings screen where the person grants it",
        emulator_params={"package": "com.android.shell", "special": "dnd_access"},
        actions_row=_ACTIONS_ROW,
    ),
)
