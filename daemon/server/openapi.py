"""The OpenAPI document of the control plane, as ``/openapi.json`` serves it.

``phoned methods --write`` (or ``python -m phoned.daemon.server.openapi > docs/openapi.json``)
refreshes the copy kept in the repository (a test fails when it is stale).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import TokenBook
from phoned.daemon.server.settings import ServerSettings


def openapi_document() -> dict[str, Any]:
    """The document, built without starting the app (no store is opened)."""
    tmp = Path(tempfile.gettempdir()) / "phoned-openapi"  # never written: the app is not started
    settings = ServerSettings(queue_url=f"sqlite:///{tmp}/queue.db", state_dir=tmp, tokens_path=tmp)
    app = create_app(settings, TokenBook({}))
    return app.openapi()


def openapi_text() -> str:
    """The document as the repository keeps it: indented, keys in order, newline at end."""
    return json.dumps(openapi_document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(openapi_text(), end="")
