#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: set-up, lint, types, tests.
# Usage: scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/ensure-postgres.sh
scripts/ensure-chromium.sh
.venv/bin/ruff check daemon device tests scripts bench
.venv/bin/ruff format --check daemon device tests scripts bench
.venv/bin/mypy
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests" >&2
    exit 1
fi
if [ "$rc" -ne 0 ]; then
    exit "$rc"
fi
# The short benchmark run (bench/README.md): every section must still work end to end.
bench_out=$(mktemp -d)
.venv/bin/python bench/run.py --short --out "$bench_out"
