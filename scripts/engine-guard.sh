#!/usr/bin/env bash
# The engine guard (SPEC 1): a database built by `sqitch deploy` and one built from sql/engine/ alone have the
# same schema, object by object (scripts/engine_guard.py reads both from the catalogs).
# Usage: scripts/engine-guard.sh            the engine's project (sqitch.plan, sql/engine/)
#        scripts/engine-guard.sh router     the router's project (router/sqitch.plan, router/sql/engine/)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
project=${1:-engine}
case "$project" in
  engine) dir=. ;;
  router) dir=router ;;
  *) echo "usage: scripts/engine-guard.sh [engine|router]" >&2; exit 2 ;;
esac
A="cyclone_guard_sqitch_$$"
B="cyclone_guard_engine_$$"
trap "drop_db '$A'; drop_db '$B'" EXIT
drop_db "$A"; create_db "$A"
drop_db "$B"; create_db "$B"
(cd "$dir" && sqitch_db "$A" deploy)
# The engine alone: every file of sql/engine/ in name order, in one transaction, as psql -f would load it.
scripts/load-engine.sh "$B" "$dir/sql/engine"
schemas=(cyclone)
[[ "$project" == router ]] && schemas=(cyclone plproxy)
dsn() { echo "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$1"; }
"$ROOT/.venv/bin/python" scripts/engine_guard.py "$(dsn "$A")" "$(dsn "$B")" "${schemas[@]}"
echo "engine guard ($project): sqitch deploy and sql/engine/ agree"
