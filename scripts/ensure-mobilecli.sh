#!/usr/bin/env bash
# mobile-mcp's device CLI for tests/integration/test_third_party_clients.py: the npm
# package @mobilenext/mobilecli ships its native binaries inside the package (no download
# at install time), so one `npm install` from the registry (~10 s) is the whole set-up.
# Without npm or the registry this only says so: the test then skips outside CI.
set -uo pipefail
cd "$(dirname "$0")/.."
version=0.1.64
prefix=.cache/mobilecli
if [ -f "$prefix/node_modules/@mobilenext/mobilecli/package.json" ] &&
    grep -q "\"version\": \"$version\"" "$prefix/node_modules/@mobilenext/mobilecli/package.json"; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "phoned set-up: npm not found, mobilecli not installed (its test skips)" >&2
    exit 0
fi
mkdir -p "$prefix"
if ! timeout 120 npm install --silent --no-audit --no-fund --prefix "$prefix" \
    "@mobilenext/mobilecli@$version" >/dev/null 2>&1; then
    echo "phoned set-up: npm install @mobilenext/mobilecli@$version failed (its test skips)" >&2
fi
exit 0
