"""The UI tier's cost (issue #27): ``ui.find``, ``ui.tap`` with its expectation and ``ui.type``
on the warm uiautomator2 session, next to a bare uiautomator2 script doing the same calls
without any check, on a simulated phone with the UI cost model on (``ui-costs:measured``:
``sim/ui/automation.py``, a session dump 50 ms; sources in docs/ui-path.md).

Both sides use the same warm uiautomator2 server and client on one ``Device`` (as the daemon
keeps one per phone) and act in the simulated notes app (``sim/ui/notes_app.py``),
interleaved call by call so a slow spell of the machine slows both. phoned's step reads the
keyguard and the app in front, dumps the screen, acts, then polls its expectation; the bare
script only calls ``d(resourceId=...).info`` / ``.click()`` / ``.set_text()``. No approval
is asked (``ActionContext.approval_required`` false: the policy is not part of the cost).
phoned runs twice per call: without a task folder, and as the daemon runs it, with one,
where each step also keeps the screen it left (hierarchy and screenshot, ``keep_screen``:
what a person reads in the report and an agent gets back over MCP).

    .venv/bin/python scripts/bench_ui_tier.py [--runs 20] [--sdk 34] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phoned.device.actions import Status, execute
from phoned.device.actions.base import ActionContext
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder
from phoned.device.ui_session import UiMode
from scripts.stack import adb_server, sim_phone
from scripts.stats import summarize
from phoned.sim.ui import notes_app
from phoned.sim.ui.automation import UiCosts
from phoned.sim.ui.intents import Intent

PKG = notes_app.PKG
TEXT = "Привет, 세계 👋"
SAVE, FIELD, OPEN_LIST, LIST = (notes_app.rid(n) for n in
                                ("save_button", "note_text", "open_list_button", "notes_list"))  # fmt: skip
CALLS: dict[str, dict[str, Any]] = {
    "ui.find": {"selector": {"resource_id": SAVE}, "package": PKG},
    "ui.tap": {"package": PKG, "selector": {"resource_id": OPEN_LIST},
               "expect": {"appears": {"resource_id": LIST}}},
    "ui.type": {"package": PKG, "selector": {"resource_id": FIELD}, "text": TEXT},
}  # fmt: skip


def _phoned(device: Device, method: str, artifacts: Path | None = None) -> float:
    ctx = ActionContext(Recorder(device, method), poll_interval=0.02, settle_timeout=5.0,
                        artifacts_dir=artifacts)  # fmt: skip
    started = time.perf_counter()
    out = execute(method, CALLS[method], ctx)
    ms = (time.perf_counter() - started) * 1000
    if out.status is not Status.MET:
        raise RuntimeError(f"{method}: {out.status.value}: {out.message}")
    return ms


def _bare(client: Any, method: str) -> float:
    calls: dict[str, Callable[[], Any]] = {
        "ui.find": lambda: client(resourceId=SAVE).info,
        "ui.tap": lambda: client(resourceId=OPEN_LIST).click(),
        "ui.type": lambda: client(resourceId=FIELD).set_text(TEXT),
    }
    started = time.perf_counter()
    calls[method]()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sdk", type=int, default=34)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {}
    with adb_server() as adb, sim_phone(adb, args.sdk) as phone:
        ui = phone.sim.phone.ui
        ui.automation.costs = UiCosts()  # ui-costs:measured: the cost model's defaults
        device = Device(phone.serial, AdbServer(port=adb.port), ui_mode=UiMode.AUTO)
        device.identity, device.capabilities  # noqa: B018 - probed once per connection
        client = device.ui_session.client()  # the server start is paid once, untimed
        if client is None:
            raise RuntimeError("the uiautomator2 session did not start")

        def reset() -> None:
            with ui.phone.lock:
                ui.start(Intent(component=(PKG, notes_app.MAIN)))
                ui.top().state.clear()

        folder = Path(tempfile.mkdtemp(prefix="bench-ui-tier-"))
        try:
            for _ in range(args.runs):
                for method in CALLS:
                    for side, run in (("phoned", lambda m=method: _phoned(device, m)),
                                      ("phoned, screen kept",
                                       lambda m=method: _phoned(device, m, folder)),
                                      ("bare uiautomator2", lambda m=method: _bare(client, m))):  # fmt: skip
                        reset()
                        samples.setdefault(f"{method}: {side}", []).append(run())
        finally:
            device.close()
            shutil.rmtree(folder, ignore_errors=True)
    table = {name: summarize(values) for name, values in samples.items()}
    print("| call | median ms | p90 ms | n |\n|---|---|---|---|")
    for name, stats in table.items():
        print(f"| {name} | {stats['median']:.1f} | {stats['p90']:.1f} | {stats['n']} |")
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": args.runs, "sdk": args.sdk, "ms": table,
                                         "samples": samples}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
