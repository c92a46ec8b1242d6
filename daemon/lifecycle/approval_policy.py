"""Which tasks wait for a person's approval before their effect (seed 000, issue #26).

One decision, ``needs_approval(method, task, policy)``, used by the executor for every
attempt (``phoned.daemon.runtime.attempt.records.Attempt.step_context``):

* a read-only method (its declaration ``changes`` nothing) never asks;
* a method whose effect always waits (``sms.send``: ``approval=True``) always asks;
* any other changing method asks when the task says ``require_approval: true``, when the
  owner's config names the method (``approval.methods``) or the task's source
  (``approval.sources``, e.g. every change from ``source: voice``);
* a changing step of the UI tier (``ui.tap``, ``ui.type``, ``ui.swipe``, ``ui.scroll``,
  ``ui.key``: ``docs/ui-tier.md``) asks by default, unless the app it acts in (its
  ``package`` param) is one the owner allows (``approval.ui_allow_packages``).

A method that asks shows a preview of its change read from the phone at that moment
(``Method.previews``: the setting methods, ``bluetooth.set``, ``app.open``, ``app.close``
and ``permission.request``, all through ``phoned.device.actions.setting.ask``; ``sms.draft`` with
``sms.send``'s shape: recipient, text, app). A changing method
that cannot show one yet is
refused where it can be: a ``require_approval`` at the door (``contract.validate_task``,
naming the field), a method in ``approval.methods`` in the config (naming the key); one
only the source policy catches is not run at all (``unpreviewable``): an approval the
person could not be shown what it approves is never asked for, nor skipped.

The policy is the config of the daemon that runs the task (``phoned run``, embedded or
with ``--queue URL`` against a plane): it guards the phone it drives.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from phoned.device.actions import registry as methods_registry  # REGISTRY read at call time

if TYPE_CHECKING:
    from phoned.device.actions.method import Method

# Sources a policy may name (the task contract's ``source``).
SOURCES = ("cloud", "voice", "cli", "schedule")
UI_TIER = "ui."  # the UI tier's methods: their changing steps ask by default


@dataclass(frozen=True)
class ApprovalPolicy:
    """The owner's approval policy: methods and sources whose changes wait for a person, and
    the apps whose UI-tier steps do not."""

    methods: frozenset[str] = frozenset()
    sources: frozenset[str] = frozenset()
    ui_allow_packages: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, methods: Iterable[str] = (), sources: Iterable[str] = (),
        ui_allow_packages: Iterable[str] = (),
    ) -> ApprovalPolicy:  # fmt: skip
        return cls(frozenset(methods), frozenset(sources), frozenset(ui_allow_packages))


NO_POLICY = ApprovalPolicy()


def changes_phone(method: Method[Any]) -> bool:
    """Whether ``method`` changes anything on the phone (a read does not)."""
    return bool(method.changes)


def needs_approval(method: Method[Any], task: Any, policy: ApprovalPolicy) -> bool:
    """Whether ``task``'s effect waits for a person's approval of its preview.

    ``task`` is a ``TaskRecord`` (its ``source`` and its submitted ``spec``)."""
    if not changes_phone(method):
        return False
    if method.approval:
        return True
    spec = getattr(task, "spec", None) or {}
    if (
        bool(spec.get("require_approval"))
        or method.name in policy.methods
        or task.source in policy.sources
    ):
        return True
    return ui_step_asks(method, getattr(task, "params", None) or {}, policy)


def asks_by_default(method: Method[Any]) -> bool:
    """Whether ``method`` asks for approval under the default policy: a changing UI-tier
    step (the catalogue and the MCP tools say so), besides the always-asking ones."""
    return method.approval or (method.name.startswith(UI_TIER) and changes_phone(method))


def ui_step_asks(method: Method[Any], params: dict[str, Any], policy: ApprovalPolicy) -> bool:
    """A changing UI-tier step asks unless its app is in ``approval.ui_allow_packages``."""
    if method.approval or not asks_by_default(method):
        return False
    return params.get("package") not in policy.ui_allow_packages


def unpreviewable(method: Method[Any], task: Any, policy: ApprovalPolicy) -> str | None:
    """Why ``task`` cannot run: it needs an approval ``method`` has no preview for yet;
    None when it can (no approval needed, or the method shows its own)."""
    if method.approval or method.previews or not needs_approval(method, task, policy):
        return None
    return (
        f"the approval policy asks for a person's approval of {method.name} "
        f"(source {task.source}), but {method.name} cannot show a preview of its change "
        "yet: nothing was done"
    )


def policy_method_error(name: str) -> str | None:
    """Why ``name`` cannot be in ``approval.methods`` (unknown, a read, no preview), or None."""

    method = methods_registry.REGISTRY.get(name)
    if method is None:
        return f"unknown method {name!r}; one of {', '.join(sorted(methods_registry.REGISTRY))}"
    if not changes_phone(method):
        return f"{name} only reads the phone: a read-only method never asks for approval"
    if not (method.approval or method.previews):
        askable = sorted(
            n for n, m in methods_registry.REGISTRY.items() if m.approval or m.previews
        )
        return f"{name} cannot show a preview of its change yet; one of {', '.join(askable)}"
    return None
