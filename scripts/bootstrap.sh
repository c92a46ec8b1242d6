#!/usr/bin/env bash
# Create .venv (if missing) and install phoned with its test and bench extras. Idempotent:
# re-running only reinstalls when pyproject.toml changed since the last install. Says what
# it does on stderr while it works (a first install takes about a minute), nothing when
# there is nothing to do.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
say() { printf 'phoned set-up: %s\n' "$*" >&2; }
start=$SECONDS
if [ ! -x .venv/bin/python ]; then
    say "creating .venv with $("$PYTHON" --version 2>&1) (first run only)"
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.phoned-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    say "installing phoned and its dependencies into .venv (about a minute on a first run)..."
    # pip's own output goes to a log, shown when it fails: setuptools cautions on every
    # editable install with a package-dir mapping ("folders in your working directory with
    # the same name as your package"); phoned's namespace has no such folder (docs/structure.md)
    log=.venv/pip-install.log
    if ! { .venv/bin/python -m pip install --quiet --upgrade pip &&
           .venv/bin/python -m pip install --quiet -e '.[test,bench]'; } >"$log" 2>&1; then
        cat "$log" >&2
        say "installing failed (the log above is in $log)"
        exit 1
    fi
    touch "$stamp"
    say "done in $((SECONDS - start)) s"
fi
# mypy reads the phoned namespace from links (pyproject.toml, [tool.mypy]): the folders as
# the build maps them, phoned.daemon -> daemon/ and so on.
mkdir -p .venv/phoned-src/phoned
for top in daemon device sim android_data foundation; do
    ln -sfn "../../../$top" ".venv/phoned-src/phoned/$top"
done
