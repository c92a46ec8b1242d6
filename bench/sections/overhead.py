"""The action layer's own cost per command: what phoned adds on top of ``Device.run``.

Each call runs one method through ``phoned.device.actions.execute`` on a warmed simulated phone
with ``poll_interval=0`` (no deliberate sleeps), so its wall time is the commands'
``Device.run`` time (the recorder times each one around the call) plus the action layer:
recording, redaction, parsing, observing, building the evidence. The row is that
difference divided by the commands the call sent (issue #16: under 0.5 ms per command).
"""

from __future__ import annotations

import time
from typing import Any

from bench.config import Config
from bench.sections import Section, row, section
from phoned.device.actions import execute
from phoned.device.actions.base import ActionContext
from phoned.device.evidence import Recorder
from scripts.stack import adb_server, sim_phone
from scripts.stats import summarize

TITLE = "action layer per command"
GOAL_MS = 0.5
# each method alternates between two targets so every call does real work
CASES: tuple[tuple[str, tuple[dict[str, Any], ...]], ...] = (
    ("dnd.get", ({},)),
    ("volume.get", ({"stream": "music"},)),
    ("dnd.set", ({"mode": "priority"}, {"mode": "off"})),
    ("volume.set", ({"stream": "music", "level": 9}, {"stream": "music", "level": 3})),
    ("bluetooth.set", ({"enabled": True}, {"enabled": False})),
)


def run(cfg: Config) -> Section:
    """Per method: median and p90 over calls of (wall - Device.run time) / commands."""
    rows, samples, data = [], {}, {}
    with adb_server() as adb, sim_phone(adb, cfg.sdk) as phone:
        for method, targets in CASES:
            per_command: list[float] = []
            commands = 0
            for i in range(cfg.method_runs * 5):
                recorder = Recorder(phone.device, method)
                ctx = ActionContext(recorder, poll_interval=0.0)
                started = time.perf_counter()
                execute(method, targets[i % len(targets)], ctx)
                wall_ms = (time.perf_counter() - started) * 1000
                run_ms = sum(c.duration_ms for c in recorder.commands)
                if recorder.commands:
                    per_command.append((wall_ms - run_ms) / len(recorder.commands))
                    commands += len(recorder.commands)
            summary = summarize(per_command)
            label = f"{method}: action layer over Device.run, per command"
            met = cfg.verdict(bool(summary["n"]) and summary["median"] < GOAL_MS)
            note = f"{commands} commands; goal < {GOAL_MS} ms (median): {met}"
            rows.append(row(label, trips=commands / max(1, len(per_command)), ms=summary,
                            note=note))  # fmt: skip
            samples[f"action layer per command {method}"] = per_command
            data[method] = {"per_command_ms": summary, "commands": commands}
    return section(TITLE, rows, samples, data)
