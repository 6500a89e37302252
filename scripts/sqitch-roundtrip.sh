#!/usr/bin/env bash
# On an empty database: sqitch deploy && revert -y && deploy && verify, then
# revert to the release before the newest changes and deploy again (the reworks' reverts);
# then the same round trip of the router's project.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DB="cyclone_roundtrip_$$"
drop_db "$DB"; create_db "$DB"
trap "drop_db '$DB'" EXIT
sqitch_db "$DB" deploy
sqitch_db "$DB" revert -y
# Revert must leave nothing of ours behind (roles are cluster-wide and may stay).
left=$(psql -X -At -d "$DB" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'cyclone'")
if [[ "$left" != 0 ]]; then echo "sqitch-roundtrip: schema cyclone still exists after revert" >&2; exit 1; fi
sqitch_db "$DB" deploy
sqitch_db "$DB" verify
# The newest tag with changes after it (lib.sh).
tag=$(release_tag)
if [[ -n "$tag" ]]; then
  sqitch_db "$DB" revert -y --to "$tag"
  sqitch_db "$DB" deploy
  sqitch_db "$DB" verify
fi
echo "sqitch round trip: ok${tag:+ (and back to $tag)}"

# The router's project (router/, docs/scaling.md), likewise on a database of its own.
RDB="cyclone_roundtrip_router_$$"
drop_db "$RDB"; create_db "$RDB"
trap "drop_db '$DB'; drop_db '$RDB'" EXIT
(
  cd router
  sqitch_db "$RDB" deploy
  sqitch_db "$RDB" revert -y
  left=$(psql -X -At -d "$RDB" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'cyclone'")
  left=$((left + $(psql -X -At -d "$RDB" -c "SELECT count(*) FROM pg_proc WHERE pronamespace = 'plproxy'::regnamespace AND proname LIKE 'get_cluster%'")))
  if [[ "$left" != 0 ]]; then echo "sqitch-roundtrip: the router's objects remain after revert" >&2; exit 1; fi
  sqitch_db "$RDB" deploy
  sqitch_db "$RDB" verify
)
echo "sqitch round trip of the router: ok"
