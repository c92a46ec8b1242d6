# Sourced (not run) by scripts/ensure-postgres.sh and scripts/ensure-prometheus.sh: what an
# install of a Debian server package for the tests needs, kept once. A server package starts
# its service on install; the tests start throwaway servers of their own, so the packaged
# service must never run.
#
#   need_root NAME MESSAGE   exit 1 with "NAME: MESSAGE" unless run as root (apt needs it)
#   block_service_starts     an /usr/sbin/policy-rc.d that refuses every service start
#                            (invoke-rc.d's exit 101), unless the machine already has one
#   unblock_service_starts   remove that policy again, if this script wrote it (call it
#                            from the EXIT trap)

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "$1: $2" >&2
        exit 1
    fi
}

policy=/usr/sbin/policy-rc.d
restore_policy=false

block_service_starts() {
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
        restore_policy=true
    fi
}

unblock_service_starts() {
    if $restore_policy; then rm -f "$policy"; fi
}
