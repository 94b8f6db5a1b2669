#!/usr/bin/env bash
# test/run-tests.sh: every test of simhash, from a fresh Debian 12 machine.
#   sudo bash test/run-tests.sh
# Installs the build dependencies, builds with -Wall -Wextra -Werror, installs
# the extension, runs the pg_regress suite (sql/, expected/) on a throwaway
# cluster, then the TAP tests (test/t/: streaming standby, crash recovery,
# concurrent writers and readers).  Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/cluster.sh
source test/deps.sh

prepare_machine regress

echo "== pg_regress"
PGPORT_WANTED=54331 start_cluster "$work/regress"
status=0
make -s with_llvm=no installcheck 2>&1 | tee "$work/regress.out" || true
stop_cluster "$work/regress"
# one line per test: "test NAME ... ok" (PostgreSQL 15) or "ok N - NAME" (16+)
regress_total=$(grep -cE '\.\.\. +(ok|FAILED|failed)|^(not )?ok +[0-9]+' "$work/regress.out" || true)
regress_failed=$(grep -cE '\.\.\. +(FAILED|failed)|^not ok +[0-9]+' "$work/regress.out" || true)
if [ "$regress_total" = 0 ] || [ "$regress_failed" != 0 ]; then
	status=1
	regress_failed=$(( regress_failed > 0 ? regress_failed : 1 ))
	cat regression.diffs 2>/dev/null | head -200
fi

echo "== TAP"
# the TAP framework starts its own clusters, so it runs as the server's user
mkdir -p "$work/tap" && cp -r test/t "$work/tap/" && chown -R postgres "$work/tap" 2>/dev/null || true
pgxs=$(dirname "$("$PG_CONFIG" --pgxs)")/..
tap_total=$(ls test/t/*.pl | wc -l)
tap_failed=0
(cd "$work/tap" && as_pg_user env TESTDIR="$work/tap" PG_REGRESS="$pgxs/test/regress/pg_regress" \
	prove -I "$pgxs/test/perl" t/*.pl) | tee "$work/prove.out" || true
grep -q "^Result: PASS" "$work/prove.out" ||
	{ status=1; tap_failed=$(grep -oE "Failed [0-9]+/" "$work/prove.out" | grep -oE "[0-9]+" || echo "$tap_total"); }

failed=$(( ${regress_failed:-0} + tap_failed ))
total=$(( ${regress_total:-0} + tap_total ))
[ "$failed" = 0 ] || status=1
echo "tests: $(( total - failed )) passed, $failed failed"
exit $status
