"""What a planner asks for, queued, and what it is told when nobody serves the queue.

``queue_spec`` is the one way a document (either ingress shape) becomes queued tasks, for
``phoned submit``, ``phoned workflow submit`` and the MCP tools alike. ``unserved_warning``
is the sentence ``phoned status``, the queueing verbs and the MCP tools give when no daemon
served the queue (or a phone) recently (``phoned.daemon.store.presence``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from phoned.daemon.config import Config
    from phoned.daemon.lifecycle.records import TaskRecord
    from phoned.daemon.store.protocol import PlannerStore


def queue_spec(
    store: PlannerStore, raw: Any, cfg: Config, *, workflow_only: bool = False
) -> tuple[list[TaskRecord], bool]:
    """Validate ``raw`` (either ingress shape) and queue it: (queued tasks, is a workflow).

    Timeouts the task does not give come from the config's ``timeouts.*``.
    """
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.config import with_default_timeouts
    from phoned.daemon.lifecycle.contract import WorkflowSpec
    from phoned.daemon.lifecycle.errors import FieldError, InvalidTask
    from phoned.daemon.lifecycle.ingress import parse_ingress

    spec = with_default_timeouts(parse_ingress(raw), cfg)
    if isinstance(spec, WorkflowSpec):
        return store.submit_workflow(spec, time.time()), True
    if workflow_only:
        raise InvalidTask([FieldError(field="steps", message="a workflow needs a list of steps")])
    return [store.submit(spec, time.time())], False


def unserved_warning(store: Any, queue: str, device: str | None = None) -> str | None:
    """The warning for a queue (or phone) no daemon served recently; None when one did or
    when the store cannot say (an answer is never held up by this check)."""
    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.lifecycle.errors import LifecycleError
    from phoned.daemon.store import presence

    try:
        rows = store.presence()
    except (LifecycleError, OSError):
        return None
    return presence.unserved_warning(queue, rows, time.time(), device)
