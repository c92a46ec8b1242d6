"""Load named SQL blocks (``-- name: NAME`` headers) from the files beside the stores."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_HEADER = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


def parse_blocks(text: str) -> dict[str, str]:
    """Split ``text`` at ``-- name: X`` headers into ``{X: sql}``; duplicates are an error."""
    blocks: dict[str, str] = {}
    parts = _HEADER.split(text)
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in blocks:
            raise ValueError(f"duplicate SQL block {name!r}")
        blocks[name] = body.strip()
    return blocks


@cache
def queries(filename: str = "queries.sql") -> dict[str, str]:
    """The named blocks of ``daemon/store/sql/<filename>``."""
    return parse_blocks(
        resources.files("phoned.daemon.store").joinpath("sql").joinpath(filename).read_text()
    )


@cache
def script(filename: str) -> str:
    """The whole text of ``daemon/store/sql/<filename>``."""
    return resources.files("phoned.daemon.store").joinpath("sql").joinpath(filename).read_text()
