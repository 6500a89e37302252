# Shared helpers for scripts/*.sh (sourced, not run).  Targets the checkout's
# embedded cluster (started if needed) and puts PG 15 client tools first on PATH.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CYCLONE="$ROOT/.venv/bin/cyclone"
[[ -x "$CYCLONE" ]] || "$ROOT/scripts/bootstrap.sh"
"$CYCLONE" dev-db start
eval "$("$CYCLONE" dev-db env)"
export PATH="/usr/lib/postgresql/15/bin:$PATH"
export PGOPTIONS="${PGOPTIONS:---client-min-messages=warning}"

# psql against the maintenance database, quiet, stop on error.
admin_psql() { psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

create_db() { admin_psql -c "CREATE DATABASE \"$1\""; }

drop_db() { admin_psql -c "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" || true; }

# sqitch <command> against database $1, quiet (errors still print).
sqitch_db() {
  local db=$1; shift
  sqitch --quiet "$@" "db:pg:$db"
}

# A fresh database with the schema deployed; dropped when the script exits.
fresh_deployed_db() {
  local db=$1
  drop_db "$db"
  create_db "$db"
  trap "drop_db '$db'" EXIT
  sqitch_db "$db" deploy
}

# The newest tag of a plan with changes after it ("" if none): the plan ends with a tag once a release is
# cut, and reverting to that one would revert nothing. Usage: release_tag [PLAN_FILE]
release_tag() {
  local plan=${1:-sqitch.plan} last
  last=$(grep -v '^[[:space:]]*$' "$plan" | tail -1)
  grep -o '^@[^ ]*' "$plan" | { if [[ "$last" == @* ]]; then head -n -1; else cat; fi; } | tail -1
}
