#!/usr/bin/env bash
# Run the pgTAP suite: fresh database, sqitch deploy, CREATE EXTENSION pgtap,
# load fixtures, pg_prove.  Usage: scripts/pgtap.sh [TEST_FILE_OR_DIR ...]
# Fixtures (loaded in this order, never run as tests):
#   sql/tests/fixtures.sql, then sql/tests/fixtures/*.sql (sorted).
# PGTAP_JOBS=N runs pg_prove with -j N (default 1).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DB="cyclone_pgtap_$$"
fresh_deployed_db "$DB"
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS pgtap"

fixtures=()
[[ -f sql/tests/fixtures.sql ]] && fixtures+=(sql/tests/fixtures.sql)
if [[ -d sql/tests/fixtures ]]; then
  while IFS= read -r f; do fixtures+=("$f"); done < <(find sql/tests/fixtures -name '*.sql' | LC_ALL=C sort)
fi
for f in "${fixtures[@]}"; do
  psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$f"
done

targets=("$@")
((${#targets[@]})) || targets=(sql/tests)
tests=()
while IFS= read -r f; do tests+=("$f"); done < <(
  find "${targets[@]}" -type f -name '*.sql' \
    -not -path 'sql/tests/fixtures/*' -not -path 'sql/tests/fixtures.sql' | LC_ALL=C sort)
if ((${#tests[@]} == 0)); then
  echo "pgtap: no tests under ${targets[*]}" >&2
  exit 1
fi
pg_prove --failures -j "${PGTAP_JOBS:-1}" -d "$DB" "${tests[@]}"
