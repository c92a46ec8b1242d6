"""UI path: ``sms.draft``, ``sms.send`` and ``screen.snapshot`` through the warm uiautomator2
session and through the ``uiautomator dump`` fallback, on a simulated phone whose UI costs
what a real one does (``sim/ui/automation.py``: server start 2 s, ``uiautomator
dump`` 1.5 s, a session dump 50 ms; sources cited there and in docs/ui-path.md).

One ``Device`` serves every call, as the daemon keeps one per phone: the server starts once
(its cost is its own row) and stays warm. ``sms.send`` is timed from the approved call (the
call that returns ``needs_approval`` first runs untimed). Every call must be ``met``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.config import Config
from bench.sections import Section, row, section
from phoned.device.actions import Status, execute
from phoned.device.actions.base import ActionContext
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder
from phoned.device.ui_session import UiMode
from scripts.stack import adb_server, sim_phone
from scripts.stats import ratio, summarize
from phoned.sim.ui.automation import UiCosts

TITLE = "UI path (simulated phone, UI cost model on)"
TO, BODY = "+15551234567", "Bench UI path, line one\nline two"
METHODS = ("sms.draft", "sms.send", "screen.snapshot")
PATHS = {"uiautomator2 warm session": UiMode.AUTO, "uiautomator dump fallback": UiMode.SHELL}


def _call(device: Device, method: str) -> tuple[float, int, bool]:
    """(wall ms, round trips, met) of one call; ``sms.send`` after an untimed approval."""
    params: dict[str, Any] = {} if method == "screen.snapshot" else {"to": TO, "body": BODY}
    approval = None
    if method == "sms.send":
        first = execute(method, params, ActionContext(Recorder(device, method), poll_interval=0.05))
        approval = first.detail.get("preview_digest")
    ctx = ActionContext(Recorder(device, method), poll_interval=0.05, approval_digest=approval)
    started = time.perf_counter()
    out = execute(method, params, ctx)
    return (
        (time.perf_counter() - started) * 1000,
        out.evidence.round_trips,
        out.status is Status.MET,
    )


def run(cfg: Config) -> Section:
    """``cfg.ui_runs`` calls of each method on each path, the paths one after the other."""
    walls: dict[str, list[float]] = {}
    trips: dict[str, list[int]] = {}
    failures = 0
    with adb_server() as adb, sim_phone(adb, cfg.sdk) as phone:
        ui = phone.sim.phone.ui
        ui.automation.costs = UiCosts()  # the cost model's defaults
        device = Device(phone.serial, AdbServer(port=adb.port))
        device.identity, device.capabilities  # noqa: B018 - probed once per connection
        started = time.perf_counter()
        device.ui_session.client()
        start_ms = (time.perf_counter() - started) * 1000
        try:
            for label, mode in PATHS.items():
                device.ui_session.set_mode(mode)
                device.ui_session.client()  # warm (a restart after the shell path stopped it)
                for _ in range(cfg.ui_runs):
                    for method in METHODS:
                        with ui.phone.lock:
                            ui.go_home()
                        ms, n, ok = _call(device, method)
                        walls.setdefault(f"{method}: {label}", []).append(ms)
                        trips.setdefault(f"{method}: {label}", []).append(n)
                        failures += 0 if ok else 1
        finally:
            device.close()
    rows = [row("uiautomator2 server start (once per phone)", ms=summarize([start_ms]))]
    for method in METHODS:
        fallback = statistics.median(walls[f"{method}: uiautomator dump fallback"])
        for label in PATHS:
            key = f"{method}: {label}"
            wall = summarize(walls[key])
            note = (
                ""
                if label.startswith("uiautomator dump")
                else f"{ratio(fallback, wall['median'])}x faster"
            )
            rows.append(row(key, trips=statistics.median(trips[key]), ms=wall, note=note))
    data = {
        "costs": vars(UiCosts()),
        "server_start_ms": start_ms,
        "series": {
            k: {"trips": statistics.median(trips[k]), "wall_ms": summarize(v)}
            for k, v in walls.items()
        },
    }
    status = "ok" if not failures else f"error: {failures} calls missed their target"
    return section(TITLE, rows, {f"ui {k}": v for k, v in walls.items()}, data, status)
