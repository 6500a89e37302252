#!/usr/bin/env bash
# The engine guard (SPEC 1), in `make test`; scripts/engine_guard.py does the comparing.
#  1. Each change's newest deploy script is a complete copy of its engine file (sql/engine/NN_<change>.sql).
#  2. A database built by `sqitch deploy` and one built from sql/engine/ alone have the same schema, object by
#     object, from the catalogs (functions, tables, indexes, constraints, views, types, triggers, sequences,
#     grants, comments, storage options, seed rows).
#  3. Reverting to the newest release tag gives the schema that deploying to that tag gives: every revert
#     since the release undoes its change exactly.
# Usage: scripts/engine-guard.sh [engine|router]     (router: router/sqitch.plan and router/sql/engine/)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
project=${1:-engine}
case "$project" in
  engine) dir=.; schemas=(cyclone) ;;
  router) dir=router; schemas=(cyclone plproxy) ;;
  *) echo "usage: scripts/engine-guard.sh [engine|router]" >&2; exit 2 ;;
esac
# Each check reports every difference it finds; the guard fails at the end if any check failed.
failed=0
guard() { "$ROOT/.venv/bin/python" scripts/engine_guard.py "$@" || failed=1; }
dsn() { echo "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$1"; }
A="cyclone_guard_sqitch_$$"
B="cyclone_guard_engine_$$"
C="cyclone_guard_tag_$$"
trap "drop_db '$A'; drop_db '$B'; drop_db '$C'" EXIT

guard copies "$dir"

for db in "$A" "$B"; do drop_db "$db"; create_db "$db"; done
(cd "$dir" && sqitch_db "$A" deploy)
scripts/load-engine.sh "$B" "$dir/sql/engine"
guard compare "$(dsn "$A")" "$(dsn "$B")" "${schemas[@]}" --left "sqitch deploy" --right "sql/engine"

tag=$(release_tag "$dir/sqitch.plan")
if [[ -n "$tag" ]]; then
  drop_db "$C"; create_db "$C"
  (cd "$dir" && sqitch_db "$C" deploy --to "$tag" && sqitch_db "$A" revert -y --to "$tag")
  guard compare "$(dsn "$A")" "$(dsn "$C")" "${schemas[@]}" --left "revert to $tag" --right "deploy to $tag"
fi
if ((failed)); then echo "engine guard ($project): failed" >&2; exit 1; fi
echo "engine guard ($project): the deploy scripts copy their engine files, sqitch deploy and sql/engine/ agree${tag:+, and a revert to $tag undoes every change since}"
