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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from device import commands, parsers
from device.actions.base import ActionContext, Outcome, Status, outcome
from device.actions.method import Method
from device.actions.params import Permission
from device.actions.reads import got, invalid, read, target


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


def _listener_granted(ctx: ActionContext, req: Request, phase: str) -> bool:
    items = read(
        ctx,
        "enabled_notification_listeners",
        commands.LISTENERS_GET,
        parsers.parse_colon_list,
        phase,
    )
    if req.component:
        pkg, _, cls = req.component.partition("/")
        full = f"{pkg}/{pkg}{cls}" if cls.startswith(".") else req.component
        return full in items
    return any(item.split("/", 1)[0] == req.package for item in items)


def _dnd_granted(ctx: ActionContext, req: Request, phase: str) -> bool:
    items = read(
        ctx,
        "enabled_notification_policy_access_packages",
        commands.DND_ACCESS_GET,
        parsers.parse_colon_list,
        phase,
    )
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
        return commands.open_settings(commands.ACTION_LISTENER_SETTINGS)
    if req.access == "dnd_access":
        return commands.open_settings(commands.ACTION_DND_ACCESS_SETTINGS)
    return commands.open_settings(commands.ACTION_APP_DETAILS, f"package:{req.package}")


def grant_command(req: Request) -> tuple[str, ...] | None:
    """The CI-only command that grants it (None: a listener without a component)."""
    if req.access == "notification_listener":
        return commands.allow_listener(req.component) if req.component else None
    if req.access == "dnd_access":
        return commands.allow_dnd(req.package)
    return commands.pm_grant(req.package, req.permission or "")


def check(ctx: ActionContext, params: Permission) -> Outcome:
    """Whether the permission/access is granted (value: {"granted": bool, ...})."""
    req = _request(params)
    state = granted(ctx, req, "read")
    if isinstance(state, str):
        return invalid(ctx, "permission" if req.permission else "package", state)
    return got(ctx, {"package": req.package, "what": req.what, "granted": state})


def request(ctx: ActionContext, params: Permission) -> Outcome:
    """Met once the grant is observed; else open the recovery screen (or CI-grant)."""
    req = _request(params)
    before = granted(ctx, req, "before")
    if isinstance(before, str):
        return invalid(ctx, "permission" if req.permission else "package", before)
    if before:
        ctx.recorder.note("already granted: no command sent")
        return outcome(ctx, Status.MET, target(True, True), f"{req.what} granted")
    if ctx.ci_grant:
        return _ci_grant(ctx, req)
    screen = recovery_screen(req)
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


DECLARED = (
    Method(
        "permission.check",
        Permission,
        check,
        name_target,
        summary="Check whether an app holds a runtime permission or a special access.",
        reads="dumpsys package (runtime grants) or the secure settings of listeners / DND access",
    ),
    Method(
        "permission.request",
        Permission,
        request,
        name_target,
        reconcile=reconcile,
        summary="Ask for a permission or special access: pauses until the person grants it "
        "on the phone, then verifies the grant.",
        reads="the same grant state as permission.check",
        changes="opens the settings screen where the person grants it",
    ),
)
