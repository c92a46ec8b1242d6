"""Canonical JSON and its sha256 digest: the one form in which previews, effect inputs,
snapshots and the queue's records are hashed and stored.

The device layer digests a preview when it asks for approval and the task store digests
the ``Preview`` it keeps; both call ``digest`` here, so an approval quoted by the store
always matches the action's preview.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """A stable JSON text: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
