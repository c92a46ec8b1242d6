#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: set-up, lint, types, tests.
# Usage: scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
# Python keeps compiled modules (and pytest its rewritten test modules) in __pycache__. An
# environment that turns that off (PYTHONDONTWRITEBYTECODE, set in some CI images) makes
# every phoned process the suite starts compile phoned again (measured: `phoned submit`
# 1.07 -> 1.49 s CPU) and every xdist worker rewrite every test file's asserts anew
# (collecting took 9 s of CPU with the cache, 25 s without).
unset PYTHONDONTWRITEBYTECODE
scripts/bootstrap.sh
scripts/ensure-postgres.sh
scripts/ensure-chromium.sh
scripts/ensure-prometheus.sh
scripts/ensure-mobilecli.sh
.venv/bin/ruff check daemon device sim android_data foundation tests scripts bench
.venv/bin/ruff format --check daemon device sim android_data foundation tests scripts bench
.venv/bin/mypy
.venv/bin/lint-imports
# The short benchmark run (bench/README.md): every section must still work end to end. It
# runs beside the tests (its figures judge nothing; about 50 s of CPU over 2 minutes, most
# of it waiting on its phones and daemons), and its table follows theirs.
bench_out=$(mktemp -d)
.venv/bin/python bench/run.py --short --out "$bench_out" >"$bench_out/run.log" 2>&1 &
bench_pid=$!
set +e
# Three pytest-xdist workers on two cores: most tests wait on real processes (adb, phoned,
# simulators, PostgreSQL), so the wall time halves (13 min -> 7 min). Each worker starts
# its own adb server and throwaway PostgreSQL on free ports. PHONED_TEST_WORKERS=0 runs
# in one process; `pytest -m device` against one emulator is run directly, not in parallel.
# worksteal: a worker that ran out of tests takes pending ones from the others, so the run
# does not end on one worker's queue behind a long test.
.venv/bin/python -m pytest -n "${PHONED_TEST_WORKERS:-3}" --dist worksteal "$@"
rc=$?
wait "$bench_pid"
bench_rc=$?
set -e
echo "-- the short benchmark run (bench/run.py --short)"
cat "$bench_out/run.log"
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests" >&2
    exit 1
fi
if [ "$rc" -ne 0 ]; then
    exit "$rc"
fi
exit "$bench_rc"
