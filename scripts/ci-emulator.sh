#!/usr/bin/env bash
# Run phoned's device checks against a booted Android emulator (or phone). CI runs it as the
# `script:` of reactivecircus/android-emulator-runner (.github/workflows/emulator.yml); it
# works by hand too:  ANDROID_SERIAL=emulator-5554 scripts/ci-emulator.sh
#
# 1. waits for sys.boot_completed, keeps the screen on and dismisses the keyguard;
# 2. installs phoned with its test extras (pip install -e '.[test]');
# 3. runs the scenario tests marked `device` (pytest -m device) against ANDROID_SERIAL;
# 4. for each v1 method, submits one task to a fresh SQLite queue and runs
#    `phoned run --once --serial $ANDROID_SERIAL --json`, checking the SPEC exit code
#    (0 completed; 4 paused: sms.send waits in approval and is never approved here).
# Evidence (JSON per task, pytest's junit XML) goes to $CI_ARTIFACTS (default ci-artifacts/).
#
# Environment: ANDROID_SERIAL (default: the only device `adb devices` lists), PYTHON
# (default python3), ADB (default adb), BOOT_TIMEOUT seconds (default 600), CI_ARTIFACTS,
# CI_STEPS (default "boot install device-tests tasks"; e.g. "boot tasks" against a phone
# or simulated phone with phoned already installed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=${PYTHON:-python3}
ADB=${ADB:-adb}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-600}
CI_STEPS=${CI_STEPS:-boot install device-tests tasks}
ARTIFACTS=$(realpath -m -- "${CI_ARTIFACTS:-ci-artifacts}")
# 555-0100..0199 are reserved for fiction (NANPA); the emulator has no SIM to send from anyway.
SMS_TO=+15555550100

# method | params (JSON) | expected `phoned run --once` exit code (SPEC §9)
CASES=(
    'dnd.set|{"mode": "priority"}|0'
    'dnd.get|{}|0'
    'bluetooth.set|{"enabled": true}|0'
    'bluetooth.get|{}|0'
    'volume.set|{"stream": "music", "percent": 40}|0'
    'volume.get|{"stream": "music"}|0'
    'wifi.set|{"enabled": true}|0'
    'wifi.get|{}|0'
    'brightness.set|{"level": 128}|0'
    'brightness.get|{}|0'
    "sms.draft|{\"to\": \"$SMS_TO\", \"body\": \"phoned CI draft\"}|0"
    "sms.send|{\"to\": \"$SMS_TO\", \"body\": \"phoned CI send\"}|4"
    'permission.check|{"package": "com.android.shell", "special": "dnd_access"}|0'
    'permission.request|{"package": "com.android.shell", "special": "dnd_access"}|0'
    'screen.snapshot|{}|0'
)

log() { printf '[ci-emulator] %s\n' "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

wants() { [[ " $CI_STEPS " == *" $1 "* ]]; }

device_shell() { "$ADB" -s "$ANDROID_SERIAL" shell "$@" | tr -d '\r'; }

pick_serial() {
    if [ -z "${ANDROID_SERIAL:-}" ]; then
        local serials
        serials=$("$ADB" devices | awk 'NR > 1 && $2 == "device" { print $1 }')
        [ "$(printf '%s\n' "$serials" | grep -c .)" = 1 ] ||
            die "set ANDROID_SERIAL: adb lists $(printf '%s' "$serials" | grep -c .) ready devices"
        ANDROID_SERIAL=$serials
    fi
    export ANDROID_SERIAL
    log "device under test: $ANDROID_SERIAL"
}

wait_for_boot() {
    local deadline=$((SECONDS + BOOT_TIMEOUT))
    timeout "$BOOT_TIMEOUT" "$ADB" -s "$ANDROID_SERIAL" wait-for-device ||
        die "$ANDROID_SERIAL did not appear within ${BOOT_TIMEOUT}s"
    until [ "$(device_shell getprop sys.boot_completed 2>/dev/null)" = 1 ]; do
        [ "$SECONDS" -lt "$deadline" ] || die "sys.boot_completed not 1 after ${BOOT_TIMEOUT}s"
        sleep 2
    done
    log "booted: SDK $(device_shell getprop ro.build.version.sdk), $(device_shell getprop ro.product.model)"
}

prepare_device() {
    # UI flows (sms.draft, snapshots) need an awake, unlocked screen: keep it on while
    # powered, wake it and dismiss the (swipe) keyguard. Failures here are not fatal.
    device_shell svc power stayon true >&2 || true
    device_shell input keyevent KEYCODE_WAKEUP >&2 || true
    device_shell wm dismiss-keyguard >&2 || true
}

install_phoned() {
    log "installing phoned (editable, with test extras)"
    "$PYTHON" -m pip install --quiet --disable-pip-version-check -e '.[test]'
}

run_device_tests() {
    log "pytest -m device"
    local rc=0
    "$PYTHON" -m pytest -m device --junitxml="$ARTIFACTS/device-tests.xml" || rc=$?
    # 5 = nothing collected: the device scenarios went missing, which is a failure here.
    [ "$rc" = 0 ] || die "pytest -m device exited $rc"
}

# run_case INDEX METHOD PARAMS EXPECTED: one task on a fresh queue; 0 when the code matches.
run_case() {
    local index=$1 method=$2 params=$3 expected=$4
    local dir
    dir="$ARTIFACTS/tasks/$(printf '%02d' "$index")-$method"
    mkdir -p "$dir/state"
    local queue="sqlite://$dir/queue.db"
    printf '{"method": "%s", "params": %s, "conversation_id": "ci-emulator-%s", "device": "%s", "source": "cli"}\n' \
        "$method" "$params" "$method" "$ANDROID_SERIAL" >"$dir/task.json"
    export PHONED_STATE_DIR="$dir/state"
    phoned submit "$dir/task.json" --queue "$queue" --json >"$dir/submit.json" ||
        {
            log "FAIL $method: submit rejected the task ($(cat "$dir/submit.json"))"
            return 1
        }
    local rc=0
    phoned run --once --serial "$ANDROID_SERIAL" --wait 10 --queue "$queue" --json \
        >"$dir/evidence.json" 2>"$dir/stderr.log" || rc=$?
    if [ "$rc" = "$expected" ]; then
        log "ok   $method: exit $rc"
        return 0
    fi
    log "FAIL $method: exit $rc, expected $expected (evidence: $dir)"
    cat "$dir/stderr.log" >&2
    return 1
}

run_method_tasks() {
    # CI only: permission.request grants by command instead of waiting for a person.
    export PHONED_CI_GRANT_PERMISSIONS=true
    local failed=0 index=0 entry method params expected
    for entry in "${CASES[@]}"; do
        index=$((index + 1))
        IFS='|' read -r method params expected <<<"$entry"
        run_case "$index" "$method" "$params" "$expected" || failed=$((failed + 1))
    done
    [ "$failed" = 0 ] || die "$failed of ${#CASES[@]} method tasks ended with the wrong exit code"
    log "all ${#CASES[@]} method tasks ended as expected"
}

main() {
    mkdir -p "$ARTIFACTS"
    command -v "$ADB" >/dev/null || die "no adb on PATH (set ADB)"
    pick_serial
    if wants boot; then
        wait_for_boot
        prepare_device
    fi
    if wants install; then install_phoned; fi
    if wants device-tests; then run_device_tests; fi
    if wants tasks; then run_method_tasks; fi
}

main "$@"
