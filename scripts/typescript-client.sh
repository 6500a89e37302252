#!/usr/bin/env bash
# Build the TypeScript worker (clients/typescript) into its dist/ and run its unit tests, before make test
# runs the conformance kit against it: `npm ci` only when node_modules is missing or older than
# package-lock.json, then `npm run build` (tsc), then `node --test test/` without CYCLONE_TEST_DSN (the
# end-to-end test is skipped: no database is needed). Node 18 or later (scripts/bootstrap.sh installs it).
# Idempotent and quiet: a step's output is shown only when it fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../clients/typescript"

for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "typescript-client: $tool not found; run make bootstrap" >&2; exit 1; }
done

# Run a command quietly; when it fails, show all it printed and stop.
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    echo "typescript-client: '$*' failed in clients/typescript:" >&2
    printf '%s\n' "$out" >&2
    exit 1
  fi
}

# npm ci empties node_modules first, so a failed install leaves no stamp and the next run tries again.
STAMP=node_modules/.cyclone-stamp
if [[ ! -f "$STAMP" || package-lock.json -nt "$STAMP" ]]; then
  echo "typescript-client: npm ci"
  quiet npm ci --no-audit --no-fund
  touch "$STAMP"
fi
quiet npm run build
quiet env -u CYCLONE_TEST_DSN node --test test/
