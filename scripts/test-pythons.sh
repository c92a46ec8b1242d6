#!/usr/bin/env bash
# phoned on every Python it declares (requires-python >=3.10). It snapshots the work tree
# (so edits made meanwhile cannot mix into a run), then for each interpreter: a venv with
# phoned installed from the snapshot with its test extra; the installed package imports and
# `phoned --help` runs (outside the sources); the unit tests (tests/unit) pass.
# Usage: scripts/test-pythons.sh [PYTHON ...]   (a version such as 3.12, looked up in
#        $PYENV_ROOT/versions then on PATH, or an interpreter's path; default: 3.10 3.13)
# Environment: PHONED_PYTHONS_DIR keeps the venvs there for the next run (default: a
#        temporary folder, removed at the end); PHONED_TEST_WORKERS (pytest-xdist workers,
#        default 2); PIP_* variables reach pip.
set -euo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$SRC"

find_python() {  # a version like 3.10, or a path / command name
    local want=$1 root=${PYENV_ROOT:-$HOME/.pyenv} found
    if [[ $want =~ ^3\.[0-9]+$ ]]; then
        found=$(ls -d "$root"/versions/"$want".*/bin/python"$want" 2>/dev/null | sort -V | tail -n1 || true)
        if [ -n "$found" ]; then echo "$found"; return; fi
        want=python$want
    fi
    command -v "$want" || { echo "test-pythons: no interpreter $want" >&2; return 1; }
}

if [ $# -eq 0 ]; then set -- 3.10 3.13; fi
if [ -n "${PHONED_PYTHONS_DIR:-}" ]; then
    work=$PHONED_PYTHONS_DIR
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
tree=$work/tree
rm -rf "$tree"
mkdir -p "$tree"
tar -C "$SRC" -c --exclude=./.git --exclude=./.venv --exclude='*.egg-info' --exclude=__pycache__ \
    --exclude=.pytest_cache --exclude=.mypy_cache --exclude=.ruff_cache --exclude=.hypothesis \
    --exclude=./build --exclude=./dist . | tar -C "$tree" -x
status=0
for want in "$@"; do
    python=$(find_python "$want")
    version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    venv=$work/py$version
    start=$SECONDS
    echo "== Python $version ($python)"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    # from a copy of the snapshot: pip's in-tree build leaves build/ and *.egg-info behind
    rm -rf "$work/build-src" && cp -r "$tree" "$work/build-src"
    if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work/build-src[test]"; then
        echo "FAIL  Python $version: pip install" >&2
        status=1
        continue
    fi
    if ! (cd "$work" && "$venv/bin/python" -c 'import phoned.daemon.cli, phoned.device.adb' &&
        "$venv/bin/phoned" --help >/dev/null); then
        echo "FAIL  Python $version: the installed package does not import or run" >&2
        status=1
        continue
    fi
    # the snapshot's sources (python -m puts the working directory first on sys.path)
    if ! (cd "$tree" && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
        -n "${PHONED_TEST_WORKERS:-2}" tests/unit); then
        echo "FAIL  Python $version: unit tests (after $((SECONDS - start)) s)" >&2
        status=1
        continue
    fi
    echo "ok    Python $version in $((SECONDS - start)) s"
done
rm -rf "$work/build-src" "$tree"
exit "$status"
