#!/usr/bin/env bash
# Make Debian's Chromium (/usr/bin/chromium) available for the monitor page's browser test
# (tests/integration/test_monitor_browser.py runs it headless). Idempotent and quiet: does
# nothing when /usr/bin/chromium is already there; otherwise installs it with apt-get as
# root (plus one font, so screenshots show readable text).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-chromium: /usr/bin/chromium not found; run as root to install Debian's chromium" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi

[ -x /usr/bin/chromium ] || { echo "ensure-chromium: /usr/bin/chromium still missing after install" >&2; exit 1; }
