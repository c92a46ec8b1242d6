#!/usr/bin/env python3
"""Run the fault matrix and print its table: ``scripts/fault_matrix.py [--full] [--out FILE]``.

The short matrix (default) is what the normal suite and CI run: every crash point on an
idempotent and a non-idempotent task, a few phone drops, an adb server restart with a network
phone, a second daemon started on the same phone. ``--full``
adds a phone drop after every command of the attempt. The table is printed at the end and
written to ``--out`` (default ``build/fault_matrix.md``). Exit code: pytest's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST = "tests/integration/test_fault_matrix.py"


def main(argv: list[str] | None = None) -> int:
    """Run pytest on the matrix module with the mode and output file set in its environment."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every drop point, not the short set")
    parser.add_argument("--out", default=str(REPO / "build" / "fault_matrix.md"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        PHONED_FAULT_MATRIX="full" if args.full else "short",
        PHONED_FAULT_MATRIX_OUT=str(out),
    )
    cmd = [sys.executable, "-m", "pytest", TEST, "-q", "-p", "no:cacheprovider", "-rxX"]
    code = subprocess.call(cmd, cwd=REPO, env=env)
    if out.exists():
        print(f"\nmatrix written to {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
