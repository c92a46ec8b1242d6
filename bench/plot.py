"""A PNG of the latency distributions: one horizontal box per series, one panel per section.

Uses matplotlib (the optional ``bench`` extra: ``pip install -e '.[bench]'``); without it the
plot is skipped and the reason is returned instead of a path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def panels(results: dict[str, Any]) -> list[tuple[str, dict[str, list[float]]]]:
    """(section title, series -> samples) for every section that has samples."""
    out = []
    for sec in results["sections"].values():
        series = {k: v for k, v in sec.get("samples", {}).items() if v}
        if series:
            out.append((sec["title"], series))
    return out


def draw(results: dict[str, Any], path: Path) -> str:
    """Write the PNG to ``path``; return its path, or ``not available: REASON``."""
    try:  # lazy: matplotlib is the optional bench extra
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # lazy: once the backend is chosen
    except ImportError:
        return "not available: matplotlib is not installed (pip install -e '.[bench]')"
    found = panels(results)
    if not found:
        return "not available: no latency samples in this run"
    heights = [max(1.6, 0.32 * len(series) + 0.9) for _, series in found]
    fig, axes = plt.subplots(len(found), 1, figsize=(11, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})  # fmt: skip
    for ax, (title, series) in zip(axes[:, 0], found, strict=True):
        labels = list(series)
        ax.boxplot([series[k] for k in labels], orientation="horizontal", showfliers=True, widths=0.6,
                   flierprops={"markersize": 2})  # fmt: skip
        ax.set_yticks(range(1, len(labels) + 1), labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[-1, 0].set_xlabel("milliseconds (log scale)")
    meta = results.get("meta", {})
    fig.suptitle(f"phoned benchmark ({'short' if meta.get('short') else 'full'} run, "
                 f"{meta.get('started', '')})", fontsize=11)  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
