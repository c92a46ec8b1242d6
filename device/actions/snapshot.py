"""Stale-state snapshots: what the phone showed when a task paused, to compare on resume.

Two levels, by cost:

* ``fingerprint``: screen on (``dumpsys power``), keyguard (``dumpsys window policy``) and
  the foreground package/activity/user (``dumpsys window displays`` from API 29, ``windows``
  before): three shell round trips.
* ``full``: the fingerprint plus the hierarchy (through the phone's UI session: one
  uiautomator2 call, or ``rm``, ``uiautomator dump`` and ``cat``), giving the orientation,
  a digest of the app window normalised so the
  clock, the status bar and focus changes do not count, and the texts a task depends on
  (for SMS: app in front, recipient shown, the compose text in its redacted form, which
  tells a changed draft without holding it). With an artifacts directory the
  hierarchy XML and a screenshot are kept too. A hierarchy that cannot be read leaves the
  digest None and ``texts = {"unreadable": raw output}``, which never equals a real read.

A task that depends on the screen (``sms.*``) takes a full snapshot; others a fingerprint.
``compare(old, new, fields)`` gives the difference of the fields a task depends on. A field
that could not be read (None) on either side counts as changed: two unknowns are not the same
screen, so a resume after them re-checks instead of trusting the old plan.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from phoned.device import phone_numbers, private, ui_hierarchy
from phoned.device.actions import recipient, ui
from phoned.device.actions.base import ActionContext
from phoned.device.actions.composer import observed_draft
from phoned.device.actions.params import is_phone_number
from phoned.device.errors import UiDumpFailed

# What each kind of task depends on, compared between the pause and the resume.
FINGERPRINT_FIELDS = ("foreground", "screen_on", "locked")
SCREEN_FIELDS = (*FINGERPRINT_FIELDS, "hierarchy_digest", "texts")
# Fields every snapshot reads: None there means the phone's output could not be read.
UNKNOWN_MEANS_CHANGED = frozenset(FINGERPRINT_FIELDS)


@dataclass(frozen=True)
class Snapshot:
    """One reading of the phone's screen state (stable JSON via ``to_json``)."""

    level: str  # "fingerprint" or "full"
    taken_at: float  # wall-clock seconds
    foreground: dict[str, Any] | None  # parsers.Foreground.to_json(); None: could not be read
    screen_on: bool | None
    locked: bool | None
    orientation: int | None = None  # full only (the hierarchy's rotation)
    hierarchy_digest: str | None = None  # full only
    texts: dict[str, Any] = field(default_factory=dict)  # full only: what the task reads
    window_packages: list[str] = field(default_factory=list)  # full only: app window owners
    window_path: str | None = None  # full only: which reader read the hierarchy
    artifacts: dict[str, str] = field(default_factory=dict)
    round_trips: int = 0
    duration_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        known: dict[str, Any] = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def _depends_on_screen(method: str) -> bool:
    # lazy: the registry imports every method module, screen.py among them, which imports this one
    from phoned.device.actions import registry

    return method in registry.SCREEN_METHODS


def level_for(method: str) -> str:
    """The snapshot a task of ``method`` needs: ``full`` when it depends on the screen."""
    return "full" if _depends_on_screen(method) else "fingerprint"


def fields_for(method: str) -> tuple[str, ...]:
    return SCREEN_FIELDS if _depends_on_screen(method) else FINGERPRINT_FIELDS


def _recipient(ctx: ActionContext, params: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """The number the task's ``to`` stands for and the contact names the composer may show
    for it: as given (no names), or the contact a name resolves to now (the phone book read
    once); ("", ()) when the name fits none or several."""
    to, contact = str(params.get("to", "")), params.get("contact")
    if not to:
        return to, ()
    if is_phone_number(to) and contact is None:
        try:  # as the task sends it: E.164 in the phone's region
            return phone_numbers.canonical(to, recipient.region(ctx)), ()
        except phone_numbers.NumberRefused:
            return to, ()
    found = recipient.resolve(ctx, to, str(contact) if contact else None)
    if not isinstance(found, recipient.Recipient):
        return "", ()
    return found.number, (found.name,) if found.name else ()


def _texts(
    ctx: ActionContext, method: str, params: dict[str, Any], screen: ui.Screen
) -> dict[str, Any]:
    if not _depends_on_screen(method):
        return {}
    app = screen.packages[0] if screen.packages else ""
    seen = observed_draft(screen, app, *_recipient(ctx, params), region=recipient.regions(ctx))
    text = seen["compose_text"]
    return {
        "front_app": app,
        "recipient_shown": seen["recipient_shown"],
        # kept redacted (``device.private``): equal texts have equal forms, so a resume
        # still tells whether the draft changed, and no snapshot holds the message
        "compose_text": private.redact_text(text) if text is not None else None,
    }


def take(
    ctx: ActionContext, method: str, params: dict[str, Any], level: str | None = None
) -> Snapshot:
    """Read a snapshot through ``ctx`` (every command lands in its evidence)."""
    level = level or level_for(method)
    started, before = time.monotonic(), len(ctx.recorder.commands)
    front = ui.foreground(ctx, "snapshot")
    base: dict[str, Any] = {
        "foreground": front.to_json() if front is not None else None,
        "screen_on": ui.screen_on(ctx, "snapshot"),
        "locked": ui.keyguard_showing(ctx, "snapshot"),
    }
    if level == "full":
        try:
            screen = ui.dump(ctx, "snapshot", artifact="snapshot_hierarchy")
        except UiDumpFailed as exc:  # no hierarchy: the texts say so and differ from any read
            base.update(texts={"unreadable": exc.to_json()})
        else:
            ui.screenshot(ctx, "snapshot_screenshot")  # kept as an artifact when there is a dir
            base.update(
                orientation=ui_hierarchy.rotation(screen.xml),
                hierarchy_digest=screen.digest,
                texts=_texts(ctx, method, params, screen),
                window_packages=screen.packages,
                window_path=screen.path.value,
                artifacts={
                    k: v for k, v in ctx.recorder.artifacts.items() if k.startswith("snapshot_")
                },
            )
    return Snapshot(
        level=level,
        taken_at=time.time(),
        round_trips=len(ctx.recorder.commands) - before,
        duration_ms=round((time.monotonic() - started) * 1000, 3),
        **base,
    )


def compare(old: Snapshot, new: Snapshot, fields: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """``{field: {"before": ..., "after": ...}}`` for every field that differs."""
    diff = {}
    for name in fields:
        before, after = getattr(old, name), getattr(new, name)
        if name == "hierarchy_digest" and (before is None or after is None):
            continue  # a fingerprint-level snapshot has no hierarchy to compare
        if name in UNKNOWN_MEANS_CHANGED and (before is None or after is None):
            diff[name] = {"before": before, "after": after, "unknown": True}
        elif before != after:
            diff[name] = {"before": before, "after": after}
    return diff
