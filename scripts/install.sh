#!/usr/bin/env bash
# Install phoned as a systemd service on the host the phones are plugged into.
#
# Usage: sudo scripts/install.sh [--dry-run] [--start] [--prefix DIR] [--root DIR]
#                               [--operator USER]... [--uninstall]
#
#   --dry-run    print every action it would take; change nothing (no root needed)
#   --start      start (or restart, when something changed) phoned.service afterwards
#   --prefix DIR where phoned and its venv live (default /opt/phoned); the unit's ExecStart
#                follows it
#   --root DIR   install into a staging root (packaging, tests): every absolute path is
#                prefixed by DIR; no user is created and systemd/udev are left alone
#   --operator USER  let USER submit to the service's queue (and point an MCP client at it):
#                adds USER to the group phoned, which shares /var/lib/phoned (mode 2770)
#   --uninstall  remove what install put in place; the config (/etc/phoned), the state
#                (/var/lib/phoned) and the user stay
#
# What it does (see docs/deploy.md): a venv in PREFIX/venv with phoned installed from this
# checkout (non-editable); the system user `phoned` (home /var/lib/phoned, no login shell,
# member of plugdev); /etc/systemd/system/phoned.service; the udev rule for ADB interfaces;
# /etc/phoned/phoned.yaml only when absent, naming the service's queue and state folder so
# every verb run by any user finds the one queue of this host; the state folder
# /var/lib/phoned (2770, group phoned); `systemctl daemon-reload` and `enable` only when
# systemd runs this host. Idempotent: a second run changes nothing and says so.
# Environment: PYTHON (default python3) creates the venv; PIP_* variables reach pip.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEFAULT_PREFIX=/opt/phoned
PREFIX=$DEFAULT_PREFIX
ROOT=/
DRY_RUN=0
UNINSTALL=0
START=0
PYTHON=${PYTHON:-python3}

UNIT=phoned.service
UNIT_DIR=/etc/systemd/system
# Not 51-android.rules: a file in /etc/udev/rules.d masks the /lib/udev/rules.d file of the
# same name, and Debian's android-sdk-platform-tools-common ships 51-android.rules there.
RULE=51-phoned-android.rules
RULE_DIR=/etc/udev/rules.d
CONFIG=/etc/phoned/phoned.yaml
SERVICE_USER=phoned
SERVICE_HOME=/var/lib/phoned
# The one queue of this host, written into the config: the service, an operator's CLI and a
# desktop MCP client all read /etc/phoned/phoned.yaml first (daemon/config.py HOST_CONFIG).
HOST_QUEUE=sqlite:///$SERVICE_HOME/queue.db
OPERATORS=()
USB_GROUP=plugdev

CHANGES=0       # actions taken (or, under --dry-run, that would be taken)
WROTE=0         # set by install_file/remove_path: 1 when they changed the file
UNIT_CHANGED=0  # the unit file was written or removed: systemd must reload
RULE_CHANGED=0  # the udev rule was written or removed: udev must reload
CODE_CHANGED=0  # the venv was (re)built: a running daemon must restart

say() { printf '%s\n' "$*"; }
die() {
    printf 'install.sh: %s\n' "$1" >&2
    exit "${2:-1}"
}
usage() { sed -n '2,13s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

# act DESCRIPTION COMMAND...: run COMMAND and count one change; under --dry-run only say so.
act() {
    local what=$1
    shift
    CHANGES=$((CHANGES + 1))
    if [ "$DRY_RUN" = 1 ]; then
        say "would: $what"
        return 0
    fi
    say "+ $what"
    "$@"
}

unchanged() { say "ok: $*"; }
skipped() { say "skip: $*"; }

# dest PATH: PATH inside the install root.
dest() { printf '%s%s' "${ROOT%/}" "$1"; }

parse_args() {
    while [ $# -gt 0 ]; do
        case $1 in
        --dry-run) DRY_RUN=1 ;;
        --start) START=1 ;;
        --uninstall) UNINSTALL=1 ;;
        --operator)
            [ $# -ge 2 ] || die "--operator needs a user name" 2
            OPERATORS+=("$2")
            shift
            ;;
        --prefix)
            [ $# -ge 2 ] || die "--prefix needs a directory" 2
            PREFIX=$2
            shift
            ;;
        --root)
            [ $# -ge 2 ] || die "--root needs a directory" 2
            ROOT=$(realpath -m -- "$2")
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *) die "unknown argument: $1 (see --help)" 2 ;;
        esac
        shift
    done
    # The prefix is written into the unit's ExecStart: an absolute path without spaces.
    [[ $PREFIX =~ ^/[A-Za-z0-9._/-]+$ ]] || die "--prefix must be an absolute path of [A-Za-z0-9._/-]: $PREFIX" 2
    PREFIX=${PREFIX%/}
    if [ "$DRY_RUN" = 0 ] && [ "$ROOT" = / ] && [ "$(id -u)" != 0 ]; then
        die "must run as root (sudo $0 ...); --dry-run shows what it would do, --root DIR stages without root"
    fi
}

# systemd_running: this host booted with systemd and we install into its real root (sd_booted(3)
# checks /run/systemd/system; https://www.freedesktop.org/software/systemd/man/sd_booted.html).
systemd_running() { [ "$ROOT" = / ] && [ -d /run/systemd/system ]; }
udev_running() { [ "$ROOT" = / ] && [ -S /run/udev/control ] && command -v udevadm >/dev/null; }

# install_file SRC PATH MODE: put SRC at PATH (inside the root) unless identical with that
# mode; WROTE says whether it did (a status would switch off set -e inside the callee).
install_file() {
    local src=$1 path=$2 mode=$3 dst
    dst=$(dest "$path")
    WROTE=0
    if [ -f "$dst" ] && cmp -s "$src" "$dst" && [ "$(stat -c %a "$dst")" = "${mode#0}" ]; then
        unchanged "$dst"
        return 0
    fi
    act "install $dst (mode $mode)" install -D -m "$mode" "$src" "$dst"
    WROTE=1
}

# remove_path PATH: delete PATH (inside the root) if present; WROTE says whether it did.
remove_path() {
    local dst
    dst=$(dest "$1")
    WROTE=0
    if [ ! -e "$dst" ] && [ ! -L "$dst" ]; then
        unchanged "$dst already absent"
        return 0
    fi
    act "remove $dst" rm -rf -- "$dst"
    WROTE=1
}

# source_digest: a digest of everything that goes into the installed package.
source_digest() {
    (cd "$SRC" && find pyproject.toml README.md daemon device sim android_data foundation -type f \
        ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 |
        LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# build_venv VENV: create VENV if missing, then install a clean copy of the checkout into it
# (a copy, so pip's in-tree build never writes build/ or *.egg-info into the checkout).
build_venv() {
    local venv=$1 copy=$WORK/src
    [ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
    mkdir -p "$copy"
    (cd "$SRC" && tar --exclude=__pycache__ --exclude='*.pyc' --exclude='*.egg-info' \
        -cf - pyproject.toml README.md daemon device sim android_data foundation) | tar -xf - -C "$copy"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$copy"
    printf '%s\n' "$DIGEST" >"$venv/.phoned-source"
}

install_venv() {
    local venv
    venv=$(dest "$PREFIX")/venv
    DIGEST=$(source_digest)
    if [ -x "$venv/bin/phoned" ] && [ "$(cat "$venv/.phoned-source" 2>/dev/null)" = "$DIGEST" ]; then
        unchanged "$venv (phoned from $SRC, source ${DIGEST:0:12})"
        return
    fi
    act "build venv $venv and pip install phoned from $SRC (source ${DIGEST:0:12})" build_venv "$venv"
    CODE_CHANGED=1
}

install_docs() {
    install_file "$SRC/README.md" "$PREFIX/README.md" 0644
    install_file "$SRC/docs/deploy.md" "$PREFIX/docs/deploy.md" 0644
}

install_unit() {
    local rendered=$WORK/$UNIT
    # The unit names /opt/phoned; a different --prefix is written into ExecStart and
    # Documentation (paths only: the prefix was checked to hold no sed metacharacters).
    sed "s#$DEFAULT_PREFIX#$PREFIX#g" "$SRC/systemd/$UNIT" >"$rendered"
    install_file "$rendered" "$UNIT_DIR/$UNIT" 0644
    UNIT_CHANGED=$WROTE
    if [ "$WROTE" = 1 ]; then say "  with $(grep -m1 '^ExecStart=' "$rendered")"; fi
}

install_rule() {
    install_file "$SRC/systemd/51-android.rules" "$RULE_DIR/$RULE" 0644
    RULE_CHANGED=$WROTE
}

install_config() {
    local dst rendered=$WORK/phoned.yaml
    dst=$(dest "$CONFIG")
    if [ -e "$dst" ]; then
        unchanged "$dst exists (a config is never overwritten; compare with $SRC/config/phoned.yaml)"
        if grep -Eq '^queue: *("")? *$' "$dst" || ! grep -Eq '^queue:' "$dst"; then
            say "warning: $dst names no queue: the CLI and MCP clients of other users then use a"
            say "  queue of their own; add these two lines to it so every door finds the service's:"
            say "    queue: \"$HOST_QUEUE\""
            say "    state_dir: \"$SERVICE_HOME\""
        fi
        return
    fi
    sed -e "s#^queue: \"\"#queue: \"$HOST_QUEUE\"  \# written by scripts/install.sh: this host's one queue#" \
        -e "s#^state_dir: \"\"#state_dir: \"$SERVICE_HOME\"  \# written by scripts/install.sh#" \
        "$SRC/config/phoned.yaml" >"$rendered"
    act "install $dst (mode 0644; queue $HOST_QUEUE)" install -D -m 0644 "$rendered" "$dst"
}

# The state folder, shared with the group phoned (setgid: what is created in it stays the
# group's; foundation/private_files.py makes the queue 0660 there, artifacts 0600).
install_state_dir() {
    local dst
    dst=$(dest "$SERVICE_HOME")
    if [ "$ROOT" != / ]; then
        if [ -d "$dst" ]; then unchanged "$dst"; else act "create $dst (mode 2770)" install -d -m 2770 "$dst"; fi
        return
    fi
    if [ -d "$dst" ] && [ "$(stat -c '%a %U %G' "$dst")" = "2770 $SERVICE_USER $SERVICE_USER" ]; then
        unchanged "$dst (2770, $SERVICE_USER:$SERVICE_USER)"
        return
    fi
    act "create $dst (mode 2770, owner $SERVICE_USER, group $SERVICE_USER)" \
        install -d -m 2770 -o "$SERVICE_USER" -g "$SERVICE_USER" "$dst"
}

# --operator USER: USER may submit to the service's queue (group phoned).
add_operators() {
    local user
    for user in "${OPERATORS[@]+"${OPERATORS[@]}"}"; do
        if [ "$ROOT" != / ]; then
            skipped "operator $user is not added under --root $ROOT (usermod -aG $SERVICE_USER $user on the target)"
        elif ! getent passwd "$user" >/dev/null; then
            die "--operator $user: no such user"
        elif id -nG "$user" | tr ' ' '\n' | grep -qx "$SERVICE_USER"; then
            unchanged "operator $user is in group $SERVICE_USER"
        else
            act "add operator $user to group $SERVICE_USER (takes effect at their next login)" \
                usermod -a -G "$SERVICE_USER" "$user"
        fi
    done
}

nologin_shell() {
    local shell
    for shell in /usr/sbin/nologin /sbin/nologin /usr/bin/false; do
        if [ -x "$shell" ]; then
            printf '%s' "$shell"
            return
        fi
    done
    printf '/usr/sbin/nologin'
}

ensure_user() {
    if [ "$ROOT" != / ]; then
        skipped "user $SERVICE_USER and group $USB_GROUP are not created under --root $ROOT (create them on the target)"
        return
    fi
    if getent group "$USB_GROUP" >/dev/null; then
        unchanged "group $USB_GROUP exists"
    else
        act "create system group $USB_GROUP" groupadd --system "$USB_GROUP"
    fi
    if ! getent passwd "$SERVICE_USER" >/dev/null; then
        act "create system user $SERVICE_USER (home $SERVICE_HOME, no login shell, in $USB_GROUP)" \
            useradd --system --user-group --home-dir "$SERVICE_HOME" --no-create-home \
            --shell "$(nologin_shell)" --groups "$USB_GROUP" "$SERVICE_USER"
    elif id -nG "$SERVICE_USER" | tr ' ' '\n' | grep -qx "$USB_GROUP"; then
        unchanged "user $SERVICE_USER exists and is in $USB_GROUP"
    else
        act "add user $SERVICE_USER to group $USB_GROUP" usermod -a -G "$USB_GROUP" "$SERVICE_USER"
    fi
}

reload_udev() {
    [ "$RULE_CHANGED" = 1 ] || return 0
    if udev_running; then
        act "reload udev rules and re-trigger USB devices" \
            sh -c 'udevadm control --reload-rules && udevadm trigger --subsystem-match=usb --action=change'
    else
        skipped "udev reload (udev is not running here, or --root)"
    fi
}

enable_service() {
    if ! systemd_running; then
        skipped "systemctl daemon-reload/enable (systemd is not PID 1 here, or --root)"
        return
    fi
    if [ "$UNIT_CHANGED" = 1 ]; then act "systemctl daemon-reload" systemctl daemon-reload; fi
    if systemctl is-enabled --quiet "$UNIT" 2>/dev/null; then
        unchanged "$UNIT is enabled"
    else
        act "systemctl enable $UNIT" systemctl enable --quiet "$UNIT"
    fi
}

start_service() {
    [ "$START" = 1 ] || return 0
    systemd_running || die "--start needs systemd as PID 1 on this host (and no --root)"
    if ! systemctl is-active --quiet "$UNIT"; then
        act "systemctl start $UNIT" systemctl start "$UNIT"
    elif [ $((UNIT_CHANGED + CODE_CHANGED)) -gt 0 ]; then
        act "systemctl restart $UNIT (it changed)" systemctl restart "$UNIT"
    else
        unchanged "$UNIT is running"
    fi
}

do_install() {
    install_venv
    install_docs
    ensure_user
    install_unit
    install_rule
    install_config
    install_state_dir
    add_operators
    reload_udev
    enable_service
    start_service
}

do_uninstall() {
    if systemd_running && systemctl cat "$UNIT" >/dev/null 2>&1; then
        act "systemctl disable --now $UNIT" systemctl disable --now --quiet "$UNIT"
    fi
    remove_path "$UNIT_DIR/$UNIT"
    UNIT_CHANGED=$WROTE
    remove_path "$RULE_DIR/$RULE"
    RULE_CHANGED=$WROTE
    remove_path "$PREFIX/venv"
    remove_path "$PREFIX/README.md"
    remove_path "$PREFIX/docs/deploy.md"
    local dir
    for dir in "$PREFIX/docs" "$PREFIX"; do
        if [ -d "$(dest "$dir")" ] && [ -z "$(ls -A "$(dest "$dir")")" ]; then
            act "remove empty $(dest "$dir")" rmdir -- "$(dest "$dir")"
        fi
    done
    reload_udev
    if [ "$UNIT_CHANGED" = 1 ] && systemd_running; then act "systemctl daemon-reload" systemctl daemon-reload; fi
    say "kept: $(dest "$CONFIG") (config), $(dest "$SERVICE_HOME") (state) and user $SERVICE_USER (userdel $SERVICE_USER removes it)"
}

summary() {
    if [ "$CHANGES" = 0 ]; then
        say "nothing to do: phoned is already $([ "$UNINSTALL" = 1 ] && echo removed || echo installed and up to date) under $ROOT"
    elif [ "$DRY_RUN" = 1 ]; then
        say "dry run: $CHANGES action(s) would be taken; nothing was changed"
    else
        say "done: $CHANGES change(s)"
    fi
}

main() {
    parse_args "$@"
    WORK=$(mktemp -d)
    trap 'rm -rf -- "$WORK"' EXIT
    if [ "$UNINSTALL" = 1 ]; then do_uninstall; else do_install; fi
    summary
}

main "$@"
