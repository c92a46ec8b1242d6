"""One module per benchmark section; each ``run(cfg)`` returns a section result.

A section result is a dict: ``title``, ``status`` (``ok``, ``not available: REASON`` or
``error: ...``), ``rows`` (see ``bench.report.Row``), ``samples`` (series label -> latency
samples in ms, for the plot) and ``data`` (the raw figures, for results.json).
"""

from __future__ import annotations

from typing import Any

Section = dict[str, Any]


def section(
    title: str,
    rows: list[dict[str, Any]],
    samples: dict[str, list[float]] | None = None,
    data: dict[str, Any] | None = None,
    status: str = "ok",
) -> Section:
    """A section result in the shape ``bench.report`` and ``bench.plot`` read."""
    return {
        "title": title,
        "status": status,
        "rows": rows,
        "samples": samples or {},
        "data": data or {},
    }


def unavailable(title: str, reason: str) -> Section:
    """A section that could not run here, with one row saying why."""
    status = f"not available: {reason}"
    return section(title, [{"label": title, "value": status}], status=status)


def row(
    label: str,
    *,
    trips: float | None = None,
    ms: dict[str, Any] | None = None,
    value: str | None = None,
    note: str = "",
) -> dict[str, Any]:
    """One table row: round trips, a latency summary (``scripts.stats.summarize``) or a value."""
    out: dict[str, Any] = {"label": label, "note": note}
    if trips is not None:
        out["trips"] = trips
    if ms is not None:
        out["median_ms"], out["p90_ms"], out["n"] = ms.get("median"), ms.get("p90"), ms["n"]
    if value is not None:
        out["value"] = value
    return out
