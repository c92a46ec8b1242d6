"""The UI tier's cost (issues #27, #35): ``ui.find``, ``ui.tap`` with its expectation and
``ui.type`` on the warm uiautomator2 session, next to a bare uiautomator2 script doing the
same verified work, on a simulated phone with the UI cost model on (``ui-costs:measured``:
``sim/ui/automation.py``, a session dump 50 ms and a selector lookup the same read; sources
in docs/ui-path.md). Each side's reads of the screen's tree (dumps and lookups, counted by the
simulated phone) are printed too: what the step costs the phone, whatever a read costs.

Both sides use the same warm uiautomator2 server and client on one ``Device`` (as the daemon
keeps one per phone) and act in the simulated notes app (``sim/ui/notes_app.py``),
interleaved call by call so a slow spell of the machine slows both. phoned's step reads the
keyguard and the app in front, dumps the screen, acts, then polls its expectation. The bare
script checks what phoned checks, with uiautomator2 alone: the app in front
(``app_current``), the element found (``.info``), the action, then the same expectation
observed (``.wait`` for the list a tap opens) or the typed value read back exactly
(``.get_text``); a check that fails raises, so the bare figure is never of unchecked work.
Its round trips are its uiautomator2 calls (JSON-RPC) and adb shell commands; phoned's are
those its evidence counts. No approval is asked (``ActionContext.approval_required``
false: the policy is not part of the cost). phoned runs twice per call: without a task
folder, and as the daemon runs it, with one, where each step also keeps the screen it left
(hierarchy and screenshot, ``keep_screen``: what a person reads in the report and an agent
gets back over MCP).

    .venv/bin/python scripts/bench_ui_tier.py [--runs 20] [--sdk 34] [--json out.json]
                                              [--query-ms MS]  # a lookup's cost instead

``bench/run.py`` runs the same comparison as its ``ui_tier`` section.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phoned.device.actions import Status, execute
from phoned.device.actions.base import ActionContext
from phoned.device.adb import AdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder
from phoned.device.ui_session import UiMode
from phoned.sim.ui import notes_app
from phoned.sim.ui.automation import UiCosts
from phoned.sim.ui.intents import Intent

from scripts.stack import adb_server, sim_phone
from scripts.stats import summarize

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


SIDES = ("phoned", "phoned, screen kept", "bare uiautomator2, verified")


def _phoned(device: Device, method: str, artifacts: Path | None = None) -> tuple[float, int]:
    """(wall ms, round trips) of one phoned step; it must observe its target."""
    ctx = ActionContext(Recorder(device, method), poll_interval=0.02, settle_timeout=5.0,
                        artifacts_dir=artifacts)  # fmt: skip
    started = time.perf_counter()
    out = execute(method, CALLS[method], ctx)
    ms = (time.perf_counter() - started) * 1000
    if out.status is not Status.MET:
        raise RuntimeError(f"{method}: {out.status.value}: {out.message}")
    return ms, out.evidence.round_trips


class _Counted:
    """Counts the bare script's round trips: uiautomator2's JSON-RPC calls and the adb shell
    commands its client sends (``app_current`` is one), by wrapping the two on the instance."""

    def __init__(self, client: Any) -> None:
        self.client, self.trips = client, 0
        for owner, name in ((client, "jsonrpc_call"), (client.adb_device, "shell")):
            setattr(owner, name, self._counting(getattr(owner, name)))

    def _counting(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.trips += 1
            return call(*args, **kwargs)

        return counted


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(f"bare uiautomator2: {what}")


def _bare_step(client: Any, method: str) -> None:
    """The verified work of ``method`` with uiautomator2 alone (see the module docstring)."""
    _check(client.app_current()["package"] == PKG, f"{PKG} is not in front")
    selector = {"ui.find": SAVE, "ui.tap": OPEN_LIST, "ui.type": FIELD}[method]
    element = client(resourceId=selector)
    element.info  # noqa: B018 - found, or UiObjectNotFoundError
    if method == "ui.tap":
        element.click()
        _check(client(resourceId=LIST).wait(timeout=5.0), "the list did not appear")
    elif method == "ui.type":
        element.set_text(TEXT)
        _check(client(resourceId=FIELD).get_text() == TEXT, "the text read back differs")


def _bare(counted: _Counted, method: str) -> tuple[float, int]:
    """(wall ms, round trips) of the bare script's verified step."""
    before = counted.trips
    started = time.perf_counter()
    _bare_step(counted.client, method)
    return (time.perf_counter() - started) * 1000, counted.trips - before


@dataclass
class Measured:
    """Samples by ``"<method>: <side>"``: wall ms, round trips, and reads of the screen's
    tree the phone's uiautomator2 server made (dumps and selector lookups, counted on the
    simulated phone: what a step costs the phone, whatever the cost model charges)."""

    walls: dict[str, list[float]] = field(default_factory=dict)
    trips: dict[str, list[int]] = field(default_factory=dict)
    reads: dict[str, list[int]] = field(default_factory=dict)


def measure(runs: int, sdk: int, query_s: float | None = None) -> Measured:
    """``runs`` rounds of every step on every side, interleaved. Each call starts from the
    notes app's first screen. ``query_s``: what a selector lookup costs, instead of the cost
    model's default (how far the ratios depend on it)."""
    out = Measured()
    with adb_server() as adb, sim_phone(adb, sdk) as phone:
        ui = phone.sim.phone.ui
        ui.automation.costs = UiCosts()  # ui-costs:measured: the cost model's defaults
        if query_s is not None:
            ui.automation.costs.u2_query_s = query_s
        device = Device(phone.serial, AdbServer(port=adb.port), ui_mode=UiMode.AUTO)
        device.identity, device.capabilities  # noqa: B018 - probed once per connection
        client = device.ui_session.client()  # the server start is paid once, untimed
        if client is None:
            raise RuntimeError("the uiautomator2 session did not start")
        counted = _Counted(client)
        folder = Path(tempfile.mkdtemp(prefix="bench-ui-tier-"))
        sides: dict[str, Callable[[str], tuple[float, int]]] = {
            "phoned": lambda m: _phoned(device, m),
            "phoned, screen kept": lambda m: _phoned(device, m, folder),
            "bare uiautomator2, verified": lambda m: _bare(counted, m),
        }
        try:
            for _ in range(runs):
                for method in CALLS:
                    for side, run in sides.items():
                        with ui.phone.lock:
                            ui.start(Intent(component=(PKG, notes_app.MAIN)))
                            ui.top().state.clear()
                        read_before = ui.automation.tree_reads
                        ms, n = run(method)
                        key = f"{method}: {side}"
                        out.walls.setdefault(key, []).append(ms)
                        out.trips.setdefault(key, []).append(n)
                        out.reads.setdefault(key, []).append(ui.automation.tree_reads - read_before)
        finally:
            device.close()
            shutil.rmtree(folder, ignore_errors=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sdk", type=int, default=34)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--query-ms", type=float, default=None,
                        help="what a selector lookup costs (default: the cost model's)")  # fmt: skip
    args = parser.parse_args()
    query_s = None if args.query_ms is None else args.query_ms / 1000
    got = measure(args.runs, args.sdk, query_s)
    table = {name: summarize(values) for name, values in got.walls.items()}
    print("| call | median ms | p90 ms | round trips | tree reads | n |")
    print("|---|---|---|---|---|---|")
    for name, stats in table.items():
        n, reads = statistics.median(got.trips[name]), statistics.median(got.reads[name])
        print(f"| {name} | {stats['median']:.1f} | {stats['p90']:.1f} | {n:g} | {reads:g} "
              f"| {stats['n']} |")  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": args.runs, "sdk": args.sdk, "ms": table,
                                         "trips": got.trips, "reads": got.reads,
                                         "samples": got.walls}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
