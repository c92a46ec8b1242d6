"""Snapshot costs (as scripts/bench_snapshot.py): fingerprint, full (hierarchy) and full with a
screenshot, through ``phoned.device.actions.snapshot.take`` with the SMS composer in front."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from bench.config import Config
from bench.sections import Section, row, section
from phoned.device import commands
from phoned.device.actions.base import ActionContext
from phoned.device.actions.snapshot import take
from phoned.device.evidence import Recorder
from scripts.stack import SimPhone, adb_server, sim_phone
from scripts.stats import summarize

TITLE = "snapshot costs"
PARAMS = {"to": "+15551234567", "body": "hello"}


def run(cfg: Config) -> Section:
    """``cfg.snapshot_runs`` snapshots of each kind; round trips include the screenshot pull."""
    rows: list[dict[str, Any]] = []
    samples: dict[str, list[float]] = {}
    data: dict[str, Any] = {}
    with (
        adb_server() as adb,
        sim_phone(adb, cfg.sdk) as phone,
        tempfile.TemporaryDirectory(prefix="phoned-bench-snap-") as tmp,
    ):
        phone.device.run(
            commands.sms_compose(PARAMS["to"], PARAMS["body"], _sms_app(phone, cfg.sdk))
        )
        kinds = (
            ("fingerprint", "fingerprint", None),
            ("full (hierarchy)", "full", None),
            ("full + screenshot", "full", Path(tmp)),
        )
        for label, level, shots in kinds:
            times, trips = [], []
            for _ in range(cfg.snapshot_runs):
                ctx = ActionContext(recorder=Recorder(phone.device, "bench"), artifacts_dir=shots)
                snap = take(ctx, "sms.send", PARAMS, level)
                times.append(snap.duration_ms)
                trips.append(snap.round_trips + (1 if shots else 0))  # + the sync pull
            summary = summarize(times)
            rows.append(row(label, trips=max(trips), ms=summary))
            samples[f"snapshot {label}"] = times
            data[label] = {"trips": max(trips), "ms": summary}
    return section(TITLE, rows, samples, data)


def _sms_app(phone: SimPhone, sdk: int) -> str:
    """The default SMS package of the simulated phone (the composer's ``-p`` target)."""
    out = phone.device.run(commands.sms_default_app(sdk)).stdout
    return out.strip().splitlines()[0]
