#!/usr/bin/env bash
# One host, one queue (issue #23), run as a new host is set up: scripts/install.sh as root,
# the service's daemon started as systemd starts it (user phoned, the unit's environment
# and umask), then an operator (alice, added with --operator) submits with the CLI and a
# desktop MCP client (the SDK's stdio client, which passes only its default environment)
# calls a tool; both reach the service's queue.
#
# Runs inside a private mount namespace (tests/integration/test_host_one_queue.py starts it
# with `unshare -m`): /etc, /opt, /var/lib and /home are bind mounts of folders under $T,
# so the users, the config and the install it makes vanish with the namespace.
# Usage: host_one_queue.sh T SRC ADB_PORT ; prints one "STEP <name> <json or text>" per step.
set -euo pipefail
T=$1 SRC=$2 ADB_PORT=$3

mount --make-rprivate /
cp -a /etc "$T/etc"
mkdir -p "$T/opt" "$T/varlib" "$T/home"
mount --bind "$T/etc" /etc
mount --bind "$T/opt" /opt
mount --bind "$T/varlib" /var/lib
mount --bind "$T/home" /home

useradd --create-home --home-dir /home/alice --shell /bin/bash alice
PYTHON=/usr/bin/python3 bash "$SRC/scripts/install.sh" --operator alice >"$T/install.log" 2>&1 \
    || { cat "$T/install.log"; exit 1; }
echo "STEP install $(grep -c '' "$T/install.log") lines"
echo "STEP config $(grep -E '^(queue|state_dir):' /etc/phoned/phoned.yaml | tr '\n' ' ')"
# test isolation only: the suite runs many adb servers; this host's is on a free port
printf 'adb_port: %s\n' "$ADB_PORT" >>/etc/phoned/phoned.yaml

as_alice() {  # a desktop session's user: her own HOME, a plain PATH, her home as cwd
    runuser -u alice -- env -i HOME=/home/alice USER=alice LOGNAME=alice SHELL=/bin/bash \
        PATH=/usr/bin:/bin bash -c "cd /home/alice && $*"
}
phoned=/opt/phoned/venv/bin/phoned

# Before any daemon runs: the operator's submit says at once that nobody serves the queue.
# A status run first, as the baseline of a verb that waits for nothing (its start-up and
# one look at the queue), on this machine at this moment.
start=$(date +%s%N)
as_alice "$phoned status --json" >/dev/null 2>&1 || true
end=$(date +%s%N)
echo "STEP status_unserved_ms $(((end - start) / 1000000))"
start=$(date +%s%N)
as_alice "$phoned submit --method dnd.set --param mode=priority --conversation ops" \
    >"$T/submit.out" 2>"$T/submit.err"
end=$(date +%s%N)
echo "STEP submit_unserved $(cat "$T/submit.out") $(((end - start) / 1000000)) ms"
echo "STEP submit_warning $(cat "$T/submit.err")"

# The service, as systemd starts phoned.service (User=, UMask=, Environment=, cwd /).
(cd / && umask 077 && exec setpriv --reuid phoned --regid phoned --init-groups \
    env -i HOME=/var/lib/phoned STATE_DIRECTORY=/var/lib/phoned \
    PHONED_CONFIG=/etc/phoned/phoned.yaml ANDROID_ADB_SERVER_PORT="$ADB_PORT" \
    PATH=/usr/bin:/bin "$phoned" run --sim >"$T/daemon.log" 2>&1) &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT

task=$(cat "$T/submit.out")
for _ in $(seq 1 150); do
    state=$(as_alice "$phoned show $task --json" 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["task"]["state"])' || true)
    [ "$state" = completed ] && break
    sleep 0.2
done
echo "STEP operator_task $state"
for _ in $(seq 1 25); do  # the daemon says which phone it serves within a second or two
    status=$(as_alice "$phoned status --json" | tr -d "\n")
    served=$(printf '%s' "$status" | /usr/bin/python3 -c \
        'import json,sys; print(any(d["serial"] for d in json.load(sys.stdin)["daemons"]))')
    [ "$served" = True ] && break
    sleep 0.2
done
echo "STEP status $status"
echo "STEP modes $(stat -c '%a %U %G %n' /var/lib/phoned /var/lib/phoned/queue.db* | tr '\n' ';')"

cat >/home/alice/client.py <<'EOF'
import anyio, json
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    # no env: the SDK passes only its default environment (HOME, PATH, USER, ...)
    server = StdioServerParameters(command="/opt/phoned/venv/bin/phoned",
                                   args=["mcp", "--conversation", "desk"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("dnd_get", {})
            print(json.dumps(result.structured_content))

anyio.run(main)
EOF
chown alice /home/alice/client.py
echo "STEP mcp $(as_alice "/opt/phoned/venv/bin/python /home/alice/client.py" 2>"$T/mcp.err")"
echo "STEP daemon_log $(grep -c '' "$T/daemon.log") lines: $(grep -m1 'ready:' "$T/daemon.log")"
