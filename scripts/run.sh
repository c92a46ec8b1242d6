#!/usr/bin/env bash
# Set up (first time only) and run phoned. Any arguments go to the `phoned` command.
# Usage: scripts/run.sh [phoned arguments]   e.g. scripts/run.sh doctor
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/phoned "$@"
