"""The one table ``bench/run.py`` prints (Markdown), from the results dict."""

from __future__ import annotations

from typing import Any

HEADER = (
    "| section | measurement | adb round trips | median ms | p90 ms | n | value / note |",
    "|---|---|---|---|---|---|---|",
)


def _num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.1f}" if value >= 10 else f"{value:.2f}"
    return str(value)


def _trips(value: Any) -> str:
    return "" if value is None else f"{value:g}"


def format_row(title: str, r: dict[str, Any]) -> str:
    """One table line; empty cells for what the row does not have."""
    tail = "; ".join(part for part in (r.get("value"), r.get("note")) if part)
    cells = (
        title,
        r["label"],
        _trips(r.get("trips")),
        _num(r.get("median_ms")),
        _num(r.get("p90_ms")),
        _num(r.get("n")),
        tail,
    )
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def render(results: dict[str, Any]) -> str:
    """Every section's rows in run order under one header; a failed section says why."""
    lines = list(HEADER)
    for sec in results["sections"].values():
        rows = sec["rows"] or [{"label": "-", "value": sec["status"]}]
        if sec["status"].startswith("error") and sec["rows"]:
            rows = [*rows, {"label": "section status", "value": sec["status"]}]
        lines.extend(format_row(sec["title"], r) for r in rows)
    return "\n".join(lines)
