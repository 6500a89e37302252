#!/usr/bin/env bash
# Run the pgTAP suite: fresh database, sqitch deploy, CREATE EXTENSION pgtap,
# load fixtures, pg_prove.  Usage: scripts/pgtap.sh [TEST_FILE_OR_DIR ...]
# Fixtures (loaded in this order, never run as tests):
#   sql/tests/fixtures.sql, then sql/tests/fixtures/*.sql (sorted).
# PGTAP_JOBS=N (default 2) runs the files on N copies of that database, every Nth file on each, one
# pg_prove a copy: each file is one transaction rolled back, but two at once on one database would wait on
# each other's rows (the clock, the workflows they define), so each runs alone on its copy.
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
jobs=${PGTAP_JOBS:-2}
((jobs >= 1)) || { echo "pgtap: PGTAP_JOBS must be at least 1" >&2; exit 2; }
((jobs <= ${#tests[@]})) || jobs=${#tests[@]}
if ((jobs == 1)); then
  pg_prove --failures -d "$DB" "${tests[@]}"
  exit
fi

dbs=("$DB")
for ((j = 1; j < jobs; j++)); do dbs+=("${DB}_$j"); done
out=$(mktemp -d)
trap 'for d in "${dbs[@]}"; do drop_db "$d"; done; rm -rf "$out"' EXIT
for ((j = 1; j < jobs; j++)); do
  drop_db "${dbs[j]}"
  admin_psql -c "CREATE DATABASE \"${dbs[j]}\" TEMPLATE \"$DB\""
done
pids=()
for ((j = 0; j < jobs; j++)); do
  share=()
  for ((i = j; i < ${#tests[@]}; i += jobs)); do share+=("${tests[i]}"); done
  pg_prove --failures -d "${dbs[j]}" "${share[@]}" > "$out/$j" 2>&1 &
  pids+=($!)
done
rc=0
for ((j = 0; j < jobs; j++)); do
  wait "${pids[j]}" || rc=1
  cat "$out/$j"
done
if ((rc == 0)); then
  echo "pgtap: ${#tests[@]} files on $jobs databases: ok"
else
  echo "pgtap: ${#tests[@]} files on $jobs databases: FAILED (above)" >&2
fi
exit "$rc"
