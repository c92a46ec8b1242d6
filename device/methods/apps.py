"""``app.open`` / ``app.close`` / ``app.list``: bring an app to the front, force-stop it, and
list what can be launched.

Facts (AOSP ``platform_frameworks_base``, ``docs/apps.md``):

* ``pm path PKG`` (PackageManagerShellCommand.runPath) prints ``package:<apk>`` per APK and
  exits 1 with no output for a package that is not installed (for the calling user).
* ``pm list packages -d [FILTER]`` (runListPackages) lists only disabled packages; FILTER is
  a substring, so the exact line ``package:PKG`` is what counts.
* ``am start -W`` (ActivityManagerShellCommand.runStartActivity): ``Starting: Intent {..}``
  then, on failure, ``Error: Activity not started, unable to resolve Intent {..}`` (nothing
  handles it: not installed, disabled, no LAUNCHER activity, no filter for the URL) or
  ``Error type 3`` / ``Error: Activity class {PKG/CLS} does not exist.``; through API 32 it
  exits 0 even then, so its text is read, never its exit code alone. An activity that is not
  exported is refused by ActivityTaskSupervisor.checkStartAnyActivityPermission with a
  ``SecurityException`` (``Permission Denial: starting Intent {..} from null (pid=.., uid=2000)
  not exported from uid N``) that BasicShellCommandHandler.exec prints on stderr as
  ``Security exception: ...`` (exit 255).
* The launch without an activity is the launcher's own intent, pinned to the package:
  ``am start -W -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -p PKG``
  (the form public automation code captures ``unable to resolve`` for; ``monkey -p PKG -c
  android.intent.category.LAUNCHER 1`` is the common alternative, but it injects an event
  and says less when it fails). A deep link is ``-a android.intent.action.VIEW -d URL -p
  PKG``; an activity ``-n PKG/CLS``.
* ``am force-stop PKG`` prints nothing and exits 0 for any name, installed or not: the
  package is checked with ``pm path`` first and the result is read back from the front.
* ``cmd package resolve-activity --brief -a android.intent.action.MAIN -c
  android.intent.category.HOME`` prints the ResolveInfo line and the home app's component
  (printResolveInfo: ``flattenToShortString``); ``app.close`` refuses to stop it.
* ``cmd package query-activities --components -a android.intent.action.MAIN -c
  android.intent.category.LAUNCHER`` (runQueryIntentActivities) prints one ``PKG/.Cls`` per
  launcher activity of an enabled package, ``No activities found`` when there is none.
  No shell command prints an app's label: ``dumpsys package`` and ``query-activities``
  (without ``--components``, ``ResolveInfo.dump``) show resource ids and
  ``nonLocalizedLabel`` at most, never the resolved, localized label. The one real label
  there is is the app in front's, the title of its window in the accessibility window list
  (``phoned.device.app_labels``, with the research behind it): ``app.list`` gives it for that
  app and ``label: null`` for the others, and says so.

What is in front is the shared foreground read (``ui.foreground``: ``dumpsys window
displays``, ``windows`` before API 29), before and after, polled within the settle bound.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from phoned.device import app_labels, commands, parsers
from phoned.device.actions import ui
from phoned.device.actions.base import ActionContext, Outcome, Status, outcome
from phoned.device.actions.method import ActionsRow, Method, fixed
from phoned.device.actions.params import PACKAGE, NoParams, Params
from phoned.device.actions.reads import invalid, listed, read, target
from phoned.device.actions.setting import Change, ask
from phoned.device.commands import Argv
from pydantic import Field, field_validator, model_validator

# ---- params ------------------------------------------------------------------------------

# A Java class name as a manifest writes it: dotted identifiers ($ for nested classes), or
# relative to the package (``.MainActivity``).
ACTIVITY = re.compile(r"\.?[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*")
# Deep-link schemes a task may open: web links, map locations and store pages. Anything else
# (``intent:``, ``file:``, ``content:``, ``javascript:``, ``tel:``, ``sms:``...) is refused:
# those reach other apps' data or have their own methods.
URL_SCHEMES = ("http", "https", "geo", "market")
MAX_URL = 2048
# Never force-stopped: the system UI and the core system processes (the home app is checked
# on the phone: which one it is depends on the phone).
SYSTEM_PACKAGES = frozenset({"android", "com.android.systemui", "com.android.phone"})

_PACKAGE_FIELD = Field(
    pattern=rf"^{PACKAGE.pattern}$",
    max_length=255,
    description="Android package name",
    examples=["com.example.notes"],
)


class AppOpen(Params):
    """The app to bring to the front, optionally at an activity or a deep link."""

    package: str = _PACKAGE_FIELD
    activity: str | None = Field(
        default=None,
        pattern=rf"^{ACTIVITY.pattern}$",
        max_length=255,
        description="an activity class of the package (.Main is relative to it)",
    )
    url: str | None = Field(
        default=None,
        max_length=MAX_URL,
        description=f"a deep link the app opens ({', '.join(URL_SCHEMES)})",
    )

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise ValueError("a url must not hold whitespace or control characters")
        parts = urllib.parse.urlsplit(value)
        if parts.scheme.lower() not in URL_SCHEMES:
            raise ValueError(f"url scheme must be one of {', '.join(URL_SCHEMES)}")
        if parts.scheme.lower() in ("http", "https") and not parts.netloc:
            raise ValueError("an http(s) url needs a host")
        return value

    @model_validator(mode="after")
    def _one_target(self) -> AppOpen:
        if self.activity is not None and self.url is not None:
            raise ValueError("give at most one of activity or url")
        return self


class AppClose(Params):
    """The app to force-stop."""

    package: str = _PACKAGE_FIELD

    @field_validator("package")
    @classmethod
    def _not_system(cls, value: str) -> str:
        if value in SYSTEM_PACKAGES:
            raise ValueError(f"{value} is part of the system and is never force-stopped")
        return value


# ---- commands ----------------------------------------------------------------------------

MAIN = "android.intent.action.MAIN"
VIEW = "android.intent.action.VIEW"
LAUNCHER = "android.intent.category.LAUNCHER"
HOME = "android.intent.category.HOME"
HOME_RESOLVE: Argv = ("cmd", "package", "resolve-activity", "--brief", "-a", MAIN, "-c", HOME)
# ``cmd package query-activities --components -a MAIN -c LAUNCHER``: shared with the
# planning context's launchable apps (``commands.LAUNCHABLE``).


def pm_path(package: str) -> Argv:
    """``pm path PKG``: its APKs; exit 1 and no output when not installed."""
    return ("pm", "path", package)


def disabled_packages(package: str) -> Argv:
    """``pm list packages -d PKG``: the disabled packages whose name holds PKG."""
    return ("pm", "list", "packages", "-d", package)


def start_app(package: str, activity: str | None = None, url: str | None = None) -> Argv:
    """``am start -W``: ``-n PKG/ACT``, or ``-a VIEW -d URL -p PKG``, or the launcher intent
    ``-a MAIN -c LAUNCHER -p PKG``."""
    if activity is not None:
        return ("am", "start", "-W", "-n", f"{package}/{activity}")
    if url is not None:
        return ("am", "start", "-W", "-a", VIEW, "-d", url, "-p", package)
    return ("am", "start", "-W", "-a", MAIN, "-c", LAUNCHER, "-p", package)


def force_stop(package: str) -> Argv:
    """``am force-stop PKG``: silent, exit 0 for any name."""
    return ("am", "force-stop", package)


# ---- parsers -----------------------------------------------------------------------------

_PACKAGE_LINE = re.compile(r"^package:(\S+)\s*$", re.MULTILINE)
_SECURITY = re.compile(r"^Security exception: .*$", re.MULTILINE)
_EXCEPTION = re.compile(r"^Exception occurred while executing .*\n(.*)$", re.MULTILINE)


def parse_package_lines(text: str) -> list[str]:
    """The names of ``pm list packages`` / the paths of ``pm path`` (``package:X`` lines)."""
    return _PACKAGE_LINE.findall(text)


def start_refusal(text: str) -> str | None:
    """What ``am start`` said when it did not start anything: its ``Error:`` line, the
    ``Security exception:`` line (not exported) or the exception a bad argument raised;
    None when it reported no failure (read stdout and stderr together)."""
    if parsers.am_start_failed(text) is None and "exception" not in text.lower():
        return None
    lines = [ln for ln in text.splitlines() if ln.startswith("Error:")]
    if lines:
        return lines[-1]
    for pattern in (_SECURITY, _EXCEPTION):
        match = pattern.search(text)
        if match:
            return (match[1] if match.groups() else match[0]).strip()
    return None


# ---- actions -----------------------------------------------------------------------------


def _front(ctx: ActionContext, phase: str) -> str | None:
    found = ui.foreground(ctx, phase)
    return found.package if found is not None else None


def _absent(ctx: ActionContext, package: str) -> str | None:
    """Why ``package`` cannot be opened or closed here (not installed, disabled), else None."""
    paths = read(ctx, f"{package}:installed", pm_path(package), parse_package_lines, "before")
    if not paths:
        return f"{package} is not installed (pm path printed no APK)"
    disabled = read(
        ctx, f"{package}:disabled", disabled_packages(package), parse_package_lines, "before"
    )
    if package in disabled:
        return f"{package} is disabled (pm list packages -d lists it)"
    return None


def open_change(params: AppOpen, front: str | None) -> Change:
    """``app in front com.android.launcher -> com.example.notes/.Main``: what is in front
    now, and the app (with the activity or the deep link) that will be."""
    after = params.package
    if params.activity is not None:
        after = f"{params.package}/{params.activity}"
    elif params.url is not None:
        after = f"{params.package} at {params.url}"
    return Change("app in front", front or "-", after)


def close_change(package: str, front: str | None) -> Change:
    """``app com.example.notes in front -> force-stopped``."""
    before = "in front" if front == package else f"not in front (front: {front or '-'})"
    return Change(f"app {package}", before, "force-stopped")


def open_app(ctx: ActionContext, params: AppOpen) -> Outcome:
    """Met once ``package`` is observed in front after the launch (re-read within the settle
    bound); refused before launching when it is not installed or disabled, ``not_met`` with
    what ``am start`` said when the phone refused the start. When the owner's policy asks,
    it stops before ``am start`` with the preview ``app in front FRONT -> PKG`` read from
    the phone (``setting.ask``)."""
    package = params.package
    absent = _absent(ctx, package)
    if absent is not None:
        return invalid(ctx, "package", absent)
    before = _front(ctx, "before")
    plain = params.activity is None and params.url is None
    if plain and before == package:
        ctx.recorder.note("already in front: no command sent")
        return outcome(ctx, Status.MET, target(package, before), f"{package} is in front")
    asked = ask(
        ctx, open_change(params, before), {"front": before}, target=package,
        package=package, activity=params.activity, url=params.url,
    )  # fmt: skip
    if asked is not None:
        return asked
    argv = start_app(package, params.activity, params.url)
    result = ctx.effect("app.open", package, argv, params.model_dump())
    refusal = start_refusal(result.stdout + result.stderr)
    if refusal is not None:
        ctx.recorder.note(f"am start exited {result.exit_code}: {refusal}")
        after = _front(ctx, "after")
        return outcome(
            ctx, Status.NOT_MET, target(package, after),
            f"{package} was not started: the phone said {refusal!r}",
            field="activity" if params.activity else "url" if params.url else "package",
            phone_said=refusal, exit_code=result.exit_code, before=before, after=after,
        )  # fmt: skip
    after, ok = ctx.poll("foreground", lambda: _front(ctx, "after"), lambda p: p == package)
    return outcome(
        ctx, Status.MET if ok else Status.NOT_MET, target(package, after),
        f"{package} is in front" if ok else f"{package} is not in front (front: {after})",
        before=before, after=after,
    )  # fmt: skip


def _home_package(ctx: ActionContext) -> str | None:
    found = read(ctx, "home_app", HOME_RESOLVE, parsers.parse_components, "before")
    return found[-1][0] if found else None


def close_app(ctx: ActionContext, params: AppClose) -> Outcome:
    """Met once ``package`` is no longer in front after ``am force-stop``; the home app is
    refused (``invalid_params``), as is a package that is not installed. When the owner's
    policy asks, it stops before the force-stop with the preview ``app PKG in front ->
    force-stopped`` (``setting.ask``)."""
    package = params.package
    paths = read(ctx, f"{package}:installed", pm_path(package), parse_package_lines, "before")
    if not paths:
        return invalid(ctx, "package", f"{package} is not installed (pm path printed no APK)")
    if _home_package(ctx) == package:
        return invalid(ctx, "package", f"{package} is the home app and is never force-stopped")
    before = _front(ctx, "before")
    asked = ask(ctx, close_change(package, before), {"front": before}, target=package,
                package=package)  # fmt: skip
    if asked is not None:
        return asked
    ctx.effect("app.close", package, force_stop(package), {"package": package})
    after, ok = ctx.poll("foreground", lambda: _front(ctx, "after"), lambda p: p != package)
    block = {"expected": {"not_in_front": package}, "observed": {"front": after}, "met": ok}
    message = f"{package} is closed" if ok else f"{package} is still in front"
    return outcome(
        ctx, Status.MET if ok else Status.NOT_MET, block, message, before=before, after=after
    )


LABELS_NOTE = (
    "only the app in front has a label: its window's title in the accessibility window list "
    "(dumpsys accessibility), in the phone's language; no shell command prints the labels of "
    "the others (docs/apps.md)"
)


def front_label(ctx: ActionContext, phase: str) -> str | None:
    """The label of the app in front (``phoned.device.app_labels``), observed; None (with a note
    saying why) when the window list does not show one."""
    text = ctx.recorder.read(app_labels.LABEL_COMMAND).stdout
    label = app_labels.front_label(app_labels.parse_a11y_windows(text))
    ctx.recorder.observe("front_label", label, phase, app_labels.LABEL_COMMAND)
    if label is None:
        ctx.recorder.note(f"no label: {app_labels.no_label_reason(text)}")
    return label


def list_apps(ctx: ActionContext, params: NoParams) -> Outcome:
    """The launchable apps: each package with its launcher activity, and the app in front
    with its label (``front``); an app's ``label`` is known only while it is in front (see
    ``phoned.device.app_labels``), null otherwise."""
    found = read(ctx, "launchable", commands.LAUNCHABLE, parsers.parse_components, "read")
    now = ui.foreground(ctx, "read")
    label = front_label(ctx, "read") if now is not None and now.package else None
    in_front = now.package if now is not None else None
    apps = [
        {"package": p, "activity": a, "label": label if p == in_front else None} for p, a in found
    ]
    front = {"package": in_front, "activity": now.activity if now else None, "label": label}
    value = {"apps": apps, "front": front, "labels": LABELS_NOTE}
    return listed(ctx, len(apps), f"{len(apps)} launchable app(s)", value)


def reconcile_open(ctx: ActionContext, params: AppOpen, hint: dict[str, Any]) -> str:
    """The app in front: the open happened."""
    return "happened" if _front(ctx, "read") == params.package else "did_not_happen"


def reconcile_close(ctx: ActionContext, params: AppClose, hint: dict[str, Any]) -> str:
    """The app not in front: the close happened (a force-stop is safe to repeat)."""
    return "did_not_happen" if _front(ctx, "read") == params.package else "happened"


# ---- declaration -------------------------------------------------------------------------

_ACTIONS_ROW = ActionsRow(  # docs/actions.md
    reads=(
        "`pm path PKG`, `pm list packages -d PKG`, the foreground (`dumpsys window displays`, "
        "`windows` below API 29); `cmd package query-activities --components -a MAIN -c "
        "LAUNCHER`; `cmd package resolve-activity --brief -c HOME`; `dumpsys accessibility` (the "
        "label of the app in front)"
    ),
    effect=(
        "`am start -W -a MAIN -c LAUNCHER -p PKG` (or `-n PKG/ACT`, or `-a VIEW -d URL -p PKG`); "
        "`am force-stop PKG`"
    ),
    verified="the foreground polled until PKG is (open) or is no longer (close) in front; "
    "`am start`'s Error / Security exception lines end it `not_met` with what the phone said",
)

DECLARED = (
    Method(
        "app.open", AppOpen, open_app, fixed("app.open"), reconcile=reconcile_open,
        previews=True,
        summary="Open an app (optionally at an activity or a deep link); completed when it is "
        "observed in front.",
        reads="installed and enabled (pm), the app in front before and after",
        changes="brings the app to the front",
        emulator_params={"package": "com.android.settings"},
        actions_row=_ACTIONS_ROW,
    ),
    Method(
        "app.close", AppClose, close_app, fixed("app.closed"), reconcile=reconcile_close,
        previews=True,
        summary="Force-stop an app; completed when it is no longer in front.",
        reads="installed (pm path), the home app, the app in front before and after",
        changes="force-stops the app (its activities and processes end)",
        emulator_params={"package": "com.android.settings"},
    ),
    Method(
        "app.list", NoParams, list_apps, fixed("app.list"),
        summary="List the launchable apps (package and launcher activity) and the app in "
        "front with its label in the phone's language.",
        reads="the launcher activities of enabled packages (cmd package query-activities), the "
        "app in front and its window title (dumpsys accessibility)",
    ),
)  # fmt: skip
