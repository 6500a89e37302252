#!/usr/bin/env bash
# plpgsql_check every PL/pgSQL function in schema cyclone of a freshly deployed
# database, then of a freshly deployed router (router/); fail on any
# error-level finding (warnings are printed, not fatal).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DB="cyclone_lint_$$"
RDB="cyclone_lint_router_$$"
fresh_deployed_db "$DB"
drop_db "$RDB"; create_db "$RDB"
trap "drop_db '$DB'; drop_db '$RDB'" EXIT
(cd router && sqitch_db "$RDB" deploy)

check() {
local db=$1 what=$2
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION IF NOT EXISTS plpgsql_check"
report=$(psql -X -q -At -F ' | ' -v ON_ERROR_STOP=1 -d "$db" <<'SQL'
-- The internal helpers pin no search_path: they run inside the public functions,
-- which pin this one.
SET search_path = cyclone, pg_temp;
WITH fns AS (
  SELECT p.oid, p.prorettype = 'trigger'::regtype AS is_trigger
  FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_language l ON l.oid = p.prolang
  WHERE n.nspname = 'cyclone' AND l.lanname = 'plpgsql'
), targets AS (
  -- trigger functions are checked against a table that uses them, with the
  -- names of its transition tables
  SELECT f.oid, CASE WHEN f.is_trigger THEN t.tgrelid ELSE 0 END AS relid, f.is_trigger,
         t.tgoldtable AS oldtable, t.tgnewtable AS newtable
  FROM fns f
  LEFT JOIN LATERAL (SELECT t.tgrelid, t.tgoldtable, t.tgnewtable FROM pg_trigger t WHERE t.tgfoid = f.oid
                      ORDER BY t.oid LIMIT 1) t ON f.is_trigger
)
SELECT c.level, t.oid::regprocedure, 'line ' || coalesce(c.lineno::text, '?'),
       c.sqlstate, c.message, coalesce(c.detail, ''), coalesce(c.hint, '')
FROM targets t
CROSS JOIN LATERAL public.plpgsql_check_function_tb(t.oid, coalesce(t.relid, 0)::regclass,
                                             fatal_errors => false,
                                             oldtable => t.oldtable, newtable => t.newtable) c
WHERE NOT (t.is_trigger AND t.relid IS NULL)
ORDER BY c.level, t.oid::regprocedure::text, c.lineno;
SQL
)
nfuncs=$(psql -X -At -d "$db" -c "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang WHERE n.nspname = 'cyclone' AND l.lanname = 'plpgsql'")
[[ -n "$report" ]] && echo "$report"
if grep -q '^error' <<<"$report"; then
  echo "plpgsql_check: errors found in $what" >&2
  exit 1
fi
echo "plpgsql_check: $what: $nfuncs functions, no errors"
}

check "$DB" "the engine"
check "$RDB" "the router"
