#!/usr/bin/env bash
# Load an engine directory (sql/engine/ by default) into database $1: every *.sql file in name order, in one
# transaction, stopping at the first error. What the engine guard compares with `sqitch deploy`.
# Usage: scripts/load-engine.sh DATABASE [ENGINE_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
db=$1
dir=${2:-sql/engine}
args=()
while IFS= read -r f; do args+=(-f "$f"); done < <(find "$dir" -maxdepth 1 -name '*.sql' | LC_ALL=C sort)
if ((${#args[@]} == 0)); then echo "load-engine: no *.sql in $dir" >&2; exit 1; fi
psql -X -q -v ON_ERROR_STOP=1 -1 -d "$db" "${args[@]}"
