"""Summaries of latency samples (milliseconds) as the table and results.json show them."""

from __future__ import annotations

import statistics
from typing import Any


def percentile(sorted_samples: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0..1) of already sorted samples."""
    return sorted_samples[min(len(sorted_samples) - 1, int(q * (len(sorted_samples) - 1)))]


def summarize(samples: list[float]) -> dict[str, Any]:
    """``{n, median, p90, p99, min, max}`` rounded to microseconds; ``{n: 0}`` when empty."""
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "median": round(statistics.median(ordered), 3),
        "p90": round(percentile(ordered, 0.9), 3),
        "p99": round(percentile(ordered, 0.99), 3),
        "min": round(ordered[0], 3),
        "max": round(ordered[-1], 3),
    }


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator`` to two decimals; None when either is missing or zero."""
    if not numerator or not denominator:
        return None
    return round(numerator / denominator, 2)
