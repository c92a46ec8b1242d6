#!/usr/bin/env bash
# Make Debian's Prometheus server and promtool (/usr/bin/prometheus, /usr/bin/promtool)
# available for the metrics tests (tests/integration/test_prometheus.py starts a throwaway
# server of its own on a free loopback port). Idempotent and quiet: does nothing when both
# are already there. Never starts the packaged service: policy-rc.d refuses service starts
# during the install, and a service the package started anyway is stopped again.
set -euo pipefail
# shellcheck source=scripts/apt-install-quietly.sh
. "$(dirname "$0")/apt-install-quietly.sh"

have_prometheus() {
    [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]
}

if have_prometheus; then
    exit 0
fi
need_root ensure-prometheus "/usr/bin/prometheus not found; run as root to install Debian's prometheus"
block_service_starts
log=$(mktemp)
cleanup() {
    rm -f "$log"
    unblock_service_starts
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus; } >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
# in case a service manager started the packaged server anyway
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    systemctl stop prometheus >/dev/null 2>&1 || true
fi

have_prometheus || { echo "ensure-prometheus: prometheus still missing after install" >&2; exit 1; }
