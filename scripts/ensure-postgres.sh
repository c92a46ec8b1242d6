#!/usr/bin/env bash
# Make Debian's PostgreSQL server binaries (initdb, pg_ctl) available for the postgres
# tests (tests/postgres_server.py starts throwaway clusters from them). Idempotent and
# quiet: does nothing when initdb is already there. Never starts the packaged cluster
# service: policy-rc.d refuses service starts during the install, and any cluster the
# package created is stopped again.
set -euo pipefail
# shellcheck source=scripts/apt-install-quietly.sh
. "$(dirname "$0")/apt-install-quietly.sh"

have_initdb() {
    compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null
}

if have_initdb; then
    exit 0
fi
need_root ensure-postgres "initdb not found; run as root to install Debian's postgresql"
block_service_starts
cleanup() { unblock_service_starts; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends postgresql >/dev/null

# the package may have created (not started, thanks to policy-rc.d) a default cluster;
# stop it anyway in case a service manager started it
if command -v pg_lsclusters >/dev/null; then
    pg_lsclusters --no-header 2>/dev/null | while read -r version name _; do
        pg_ctlcluster "$version" "$name" stop >/dev/null 2>&1 || true
    done
fi

have_initdb || { echo "ensure-postgres: initdb still missing after install" >&2; exit 1; }
