"""One queue seen from a daemon and from planners, and ``phoned serve`` in this process:
what the worker contract (``test_worker_contract.py``) runs over."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
import yaml

from phoned.daemon.server.app import create_app
from phoned.daemon.server.auth import Role, TokenBook, make_token
from phoned.daemon.server.settings import ServerSettings
from phoned.daemon.store.protocol import PlannerStore, WorkerStore


@dataclass
class Queue:
    """One queue seen from both sides: ``worker`` (a daemon's ``WorkerStore``), ``planner``
    and ``approver`` (``PlannerStore``s: the same SQL store, or the plane's API with a
    planner's and an approver's token); ``artifact(value)`` reads an artifact a document
    names, as a reader of that store would."""

    kind: str
    worker: WorkerStore
    planner: PlannerStore
    approver: PlannerStore
    artifact: Callable[[str], bytes]


class ServedPlane:
    """``phoned serve``'s app over a real SQLite queue, in this process (uvicorn on a free
    loopback port, started and stopped like the real server)."""

    def __init__(self, tmp: Path) -> None:
        entries: list[Any] = []
        self.tokens: dict[str, str] = {}
        for role, devices in (("daemon", ("*",)), ("planner", ()), ("approver", ())):
            token, entry = make_token(Role(role), devices, name=f"contract-{role}")
            self.tokens[role] = token
            entries.extend(yaml.safe_load(entry))
        tokens_path = tmp / "tokens.yaml"
        tokens_path.write_text(yaml.safe_dump({"tokens": entries}))
        settings = ServerSettings(
            queue_url=f"sqlite:///{tmp / 'plane-queue.db'}",
            state_dir=tmp / "serve",
            tokens_path=tokens_path,
            sweep_interval=3600,  # the contract drives time itself
        )
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(
            create_app(settings, TokenBook.load(tokens_path)),
            host="127.0.0.1",
            port=port,
            log_level="warning",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="serve", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("phoned serve (in process) did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
