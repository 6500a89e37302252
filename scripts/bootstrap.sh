#!/usr/bin/env bash
# Install what `make test` / `make demo` need on Debian 12, then the Python venv.
# plproxy: the router of a sharded deployment (docs/scaling.md); graphviz: the console's DAG pictures (dot); chromium: its browser tests, which
# Playwright drives as /usr/bin/chromium (no browser is downloaded); nodejs and npm: the TypeScript worker (clients/typescript).
# faketime (and its libfaketime): workers whose clock runs ahead of or behind the database's (tests/test_clock_skew.py).
# Idempotent and quiet: a second run installs nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DEB_PACKAGES=(
  postgresql-15 postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl sqitch libdbd-pg-perl
  postgresql-15-cron postgresql-15-plpgsql-check postgresql-15-plproxy python3.11 python3.11-venv
  graphviz chromium fonts-dejavu-core faketime
)

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "installed" ]] || missing+=("$pkg")
done
# Node (18, Debian 12's, or later) only when none is on the PATH: one from elsewhere (NodeSource, nvm) will do.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "bootstrap: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "bootstrap: missing Debian packages; run:" >&2
    echo "sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

PYTHON=${PYTHON:-python3.11}
STAMP=.venv/.bootstrap-stamp
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
  rm -f "$STAMP"
fi
if [[ ! -f "$STAMP" || pyproject.toml -nt "$STAMP" ]]; then
  echo "bootstrap: pip install -e '.[test]'"
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
  touch "$STAMP"
fi
