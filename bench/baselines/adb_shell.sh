#!/usr/bin/env bash
# The way users script a phone without phoned: one `adb -s SERIAL shell ...` per command.
#
#   ADB=/path/to/adb SERIAL=127.0.0.1:7401 [ANDROID_ADB_SERVER_PORT=N] [PHONE_SDK=34] \
#       bench/baselines/adb_shell.sh METHOD [ARGS...]
#
# METHOD: dnd.get | dnd.set MODE | bluetooth.set on|off | volume.get STREAM_NO |
#         volume.set STREAM_NO LEVEL | sms.draft NUMBER BODY | screen.fingerprint
#
# Each method does the same verified work as phoned's action (read before, apply, read back
# until settled) with the same shell commands (device/commands.py; tests/unit/
# test_bench_baselines.py checks that the phone receives the same commands from both).
# Prints `value=...` and `round_trips=N` (one per `adb shell`); exits 0 when the target was
# observed, 1 when it was not, 2 on a usage error. PHONE_SDK picks the per-release commands,
# as a user who knows their phone would (phoned probes them once per connection instead).
#
# `adb shell A B C` joins its arguments with spaces and does not quote them (adb
# client/commandline.cpp, "We don't escape here, just like ssh(1)"), so text values are
# single-quoted for the phone's shell by q().
set -u

ADB=${ADB:?set ADB to the adb binary}
SERIAL=${SERIAL:?set SERIAL to the device serial}
PHONE_SDK=${PHONE_SDK:-34}
POLL_S=${POLL_S:-0.05}
SETTLE_S=${SETTLE_S:-5}
TRIPS=0
OUT=""
RC=0

# One adb round trip: the command's stdout in OUT, its exit code in RC.
adb_sh() {
    TRIPS=$((TRIPS + 1))
    OUT=$("$ADB" -s "$SERIAL" shell "$@")
    RC=$?
}

# Single-quote one word for the phone's shell (' becomes '\'').
q() {
    local s=${1//\'/\'\\\'\'}
    printf "'%s'" "$s"
}

now_us() { echo "${EPOCHREALTIME/./}"; }

deadline_passed() { (($(now_us) >= $1)); }

deadline_in() {
    local us
    us=$(awk -v s="$1" 'BEGIN { printf "%d", s * 1000000 }')
    echo $(($(now_us) + us))
}

finish() {
    echo "value=$1"
    echo "round_trips=$TRIPS"
    exit "$2"
}

# ---- Do Not Disturb: settings get global zen_mode / cmd notification set_dnd -------------
read_zen() {
    adb_sh settings get global zen_mode
    ZEN=${OUT//[$'\r\n']/}
}

dnd_get() {
    read_zen
    case $ZEN in
        0) finish off 0 ;; 1) finish priority 0 ;; 2) finish total_silence 0 ;; 3) finish alarms 0 ;;
        *) finish "unreadable:$ZEN" 1 ;;
    esac
}

dnd_set() {
    local mode=$1 want word deadline
    case $mode in
        off) want=0 word=off ;; priority) want=1 word=priority ;;
        alarms) want=3 word=alarms ;; total_silence) want=2 word=none ;;
        *) echo "unknown mode $mode" >&2; exit 2 ;;
    esac
    read_zen
    [[ $ZEN == "$want" ]] && finish "$mode" 0
    ((PHONE_SDK >= 29)) || finish unsupported 1
    adb_sh cmd notification set_dnd "$word"
    [[ $RC == 0 && $OUT != *"Error occurred"* ]] || finish "set_dnd failed" 1
    deadline=$(deadline_in "$SETTLE_S")
    while read_zen; [[ $ZEN != "$want" ]]; do
        deadline_passed "$deadline" && finish "zen_mode=$ZEN" 1
        sleep "$POLL_S"
    done
    sleep "$POLL_S"
    read_zen  # still there one interval later (ZenModeHelper may put its own value back)
    [[ $ZEN == "$want" ]] && finish "$mode" 0
    finish "zen_mode=$ZEN" 1
}

# ---- Bluetooth: dumpsys bluetooth_manager + settings get global bluetooth_on -------------
read_bt() {
    adb_sh dumpsys bluetooth_manager
    BT_STATE=$(sed -n 's/^  state: \([A-Z_]*\).*/\1/p' <<<"$OUT" | head -n 1)
    adb_sh settings get global bluetooth_on
    BT_ON=${OUT//[$'\r\n']/}
}

bt_settled() { [[ $BT_STATE == "$1" && $BT_ON == "$2" ]]; }

bluetooth_set() {
    local state on verb deadline
    case $1 in
        on) state=ON on=1 verb=enable ;; off) state=OFF on=0 verb=disable ;;
        *) echo "bluetooth.set on|off" >&2; exit 2 ;;
    esac
    read_bt
    [[ -z $BT_STATE ]] && finish "no bluetooth_manager" 1
    bt_settled "$state" "$on" && finish "$state" 0
    if ((PHONE_SDK >= 33)); then adb_sh cmd bluetooth_manager "$verb"; else adb_sh svc bluetooth "$verb"; fi
    deadline=$(deadline_in "$SETTLE_S")
    while read_bt; ! bt_settled "$state" "$on"; do
        deadline_passed "$deadline" && finish "state=$BT_STATE bluetooth_on=$BT_ON" 1
        sleep "$POLL_S"
    done
    finish "$state" 0
}

# ---- Volume: cmd media_session volume (API 30+) / media volume ---------------------------
volume_tool() {
    if ((PHONE_SDK >= 30)); then VOL=(cmd media_session volume); else VOL=(media volume); fi
}

read_volume() {
    adb_sh "${VOL[@]}" --stream "$1" --get
    LEVEL=$(sed -n 's/.*volume is \([0-9]*\) in range.*/\1/p' <<<"$OUT")
}

volume_get() {
    volume_tool
    read_volume "$1"
    [[ -n $LEVEL ]] && finish "$LEVEL" 0
    finish unreadable 1
}

volume_set() {
    local stream=$1 level=$2 deadline
    volume_tool
    read_volume "$stream"
    [[ -z $LEVEL ]] && finish unreadable 1
    [[ $LEVEL == "$level" ]] && finish "$level" 0
    adb_sh "${VOL[@]}" --stream "$stream" --set "$level"
    deadline=$(deadline_in 2)
    while read_volume "$stream"; [[ $LEVEL != "$level" ]]; do
        deadline_passed "$deadline" && finish "level=$LEVEL" 1
        sleep "$POLL_S"
    done
    finish "$level" 0
}

# ---- SMS draft: default app, screen, keyguard, am start, uiautomator dump + cat ----------
# The hierarchy escapes attribute text the XmlSerializer way; newline as &#10;. The
# replacements are quoted: bash 5.2's patsub_replacement makes a bare & the matched text.
xml_escape() {
    local s=$1
    s=${s//&/'&amp;'} s=${s//</'&lt;'} s=${s//>/'&gt;'} s=${s//\"/'&quot;'}
    printf '%s' "${s//$'\n'/'&#10;'}"
}

dump_ui() {  # a left uiautomator2 server ends first; the old file: a failed dump writes none
    local line
    adb_sh ps -A -o PID,USER,ARGS
    while read -r line; do
        if [[ $line == *" com.wetest.uia2.Main"* ]]; then adb_sh kill "${line%% *}"; fi
    done <<<"${OUT//$'\r'/}"
    adb_sh rm -f /sdcard/window_dump.xml
    adb_sh uiautomator dump /sdcard/window_dump.xml
    adb_sh cat /sdcard/window_dump.xml
    XML=$OUT
}

recipient_shown() {  # a text whose digits end with the number's last 7 (the app formats it)
    local want=${1//[^0-9]/} text digits
    want=${want: -7}
    while read -r text; do
        digits=${text//[^0-9]/}
        [[ ${#digits} -ge 7 && $digits == *"$want" ]] && return 0
    done < <(grep -o 'text="[^"]*"' <<<"$XML")
    return 1
}

draft_shown() {  # app in front, recipient shown, compose field holds exactly the body
    local pkg=$1 to=$2 body
    body=$(xml_escape "$3")
    local front='<hierarchy[^>]*><node [^>]*package="([^"]*)"'
    [[ $XML =~ $front && ${BASH_REMATCH[1]} == "$pkg" ]] &&
        recipient_shown "$to" &&
        [[ $XML == *'text="'"$body"'" resource-id="'"$pkg"':id/compose_message_text"'* ]]
}

sms_draft() {
    local to=$1 body=$2 pkg
    if ((PHONE_SDK >= 31)); then  # get-role-holders exists from Android 12
        adb_sh cmd role get-role-holders android.app.role.SMS
    else
        adb_sh settings get secure sms_default_application
    fi
    pkg=$(head -n 1 <<<"${OUT//$'\r'/}")
    [[ -z $pkg || $pkg == null ]] && finish "no default SMS app" 1
    adb_sh dumpsys power
    [[ $OUT == *"mWakefulness=Awake"* ]] || adb_sh input keyevent KEYCODE_WAKEUP
    adb_sh dumpsys window policy
    [[ $OUT =~ showing=true|mShowingLockscreen=true ]] && finish locked 1
    dump_ui
    draft_shown "$pkg" "$to" "$body" && finish "$pkg" 0
    adb_sh am start -W -a android.intent.action.SENDTO -d "$(q "smsto:$to")" \
        --es sms_body "$(q "$body")" -p "$(q "$pkg")"
    dump_ui
    draft_shown "$pkg" "$to" "$body" && finish "$pkg" 0
    finish "draft not shown" 1
}

# ---- Screen fingerprint: foreground, screen on, keyguard ---------------------------------
screen_fingerprint() {
    local front on locked
    # the focus lines moved to `dumpsys window displays` in API 29 (appium/appium#13420)
    if ((PHONE_SDK >= 29)); then adb_sh dumpsys window displays; else adb_sh dumpsys window windows; fi
    front=$(sed -n 's/.*mCurrentFocus=Window{[^ ]* [^ ]* \([^/ }]*\/[^ }]*\)}.*/\1/p' <<<"$OUT" | head -n 1)
    adb_sh dumpsys power
    on=$(sed -n 's/.*mWakefulness=\([A-Za-z]*\).*/\1/p' <<<"$OUT")
    adb_sh dumpsys window policy
    locked=$(sed -n 's/^ *showing=\([a-z]*\).*/\1/p; s/.*mShowingLockscreen=\([a-z]*\).*/\1/p' <<<"$OUT" | head -n 1)
    [[ -n $front && -n $on && -n $locked ]] || finish "unreadable" 1
    finish "front=$front wakefulness=$on locked=$locked" 0
}

main() {
    local method=${1:-}
    shift || true
    case $method in
        dnd.get) dnd_get ;;
        dnd.set) dnd_set "$@" ;;
        bluetooth.set) bluetooth_set "$@" ;;
        volume.get) volume_get "$@" ;;
        volume.set) volume_set "$@" ;;
        sms.draft) sms_draft "$@" ;;
        screen.fingerprint) screen_fingerprint ;;
        *) echo "usage: $0 METHOD [ARGS...]" >&2; exit 2 ;;
    esac
}

main "$@"
