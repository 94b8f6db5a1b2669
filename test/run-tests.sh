#!/usr/bin/env bash
# test/run-tests.sh: every test of simhash, from a fresh Debian 12 machine.
#   sudo bash test/run-tests.sh
# Installs the build dependencies, builds with -Wall -Wextra -Werror, installs
# the extension, then runs as the server's user, on a throwaway cluster:
# `make installcheck` (the pg_regress suite, sql/ and expected/, the isolation
# tests, test/isolation/, then the TAP tests, test/t/: streaming standby, crash
# recovery, concurrent writers and readers), every SQL block of README.md and doc/
# (test/readme.sh), a pg_dump and restore of an exclusion constraint
# (test/dump_restore.sh), the C-against-Python cross-check of fingerprints on
# the sample in test/data, and the Citus cluster test (test/citus.sh, skipped when Citus is
# not installed; ../shared/vendor/build-citus.sh installs it).  Without root: set PG_CONFIG to an installation you can write
# to (see README, Development).  Ends with "tests: N passed, M failed" (each
# pg_regress file and each TAP subtest counts once) and exits non-zero on any
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/cluster.sh
source test/deps.sh

prepare_machine regress

# a copy of the tree the server's user can write in (results/, tmp_check/)
mkdir -p "$work/src"
tar -c --exclude=.git . | tar -x -C "$work/src"
[ "$(id -u)" = 0 ] && chown -R postgres "$work/src"

echo "== make installcheck (pg_regress, then TAP)"
PGPORT_WANTED=54331 start_cluster "$work/regress"
(cd "$work/src" && as_pg_user make -s with_llvm=no PG_CONFIG="$PG_CONFIG" installcheck) 2>&1 | tee "$work/check.out" || true

# pg_regress and pg_isolation_regress: one line per file, "test NAME ... ok"
# (15) or "ok N - NAME" (16+)
regress_total=$(grep -cE '\.\.\. +(ok|FAILED|failed)|^(not )?ok +[0-9]+ +[-+] ' "$work/check.out" || true)
regress_failed=$(grep -cE '\.\.\. +(FAILED|failed)|^not ok +[0-9]+ +[-+] ' "$work/check.out" || true)
if [ "$regress_total" = 0 ]; then regress_failed=1; fi
[ "$regress_failed" = 0 ] || head -200 "$work/src/regression.diffs" "$work/src/output_iso/regression.diffs" 2>/dev/null || true
# TAP: prove's summary "Files=F, Tests=N" and "Failed X/Y subtests" per failing file
tap_total=$(grep -oE '^Files=[0-9]+, Tests=[0-9]+' "$work/check.out" | grep -oE '[0-9]+$' || echo 0)
tap_failed=$(grep -oE 'Failed [0-9]+/[0-9]+ subtests' "$work/check.out" | awk '{split($2, a, "/"); s += a[1]} END {print s + 0}' || true)
if ! grep -q '^Result: PASS' "$work/check.out"; then
	tap_failed=$(( tap_failed > 0 ? tap_failed : 1 ))
	tap_total=$(( tap_total > tap_failed ? tap_total : tap_failed ))
fi

failed=$(( regress_failed + tap_failed ))
total=$(( regress_total + tap_total ))

# a script's own "N passed, M failed" line, or one test that passes or fails by exit status
script_step() {
	local rc=0 counts
	"$@" 2>&1 | tee "$work/step.out" || rc=$?
	counts=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$work/step.out" | tail -n 1 || true)
	if [ -n "$counts" ]; then
		total=$(( total + $(echo "$counts" | awk '{print $1 + $3}') ))
		failed=$(( failed + $(echo "$counts" | awk '{print $3}') ))
		[ "$rc" = 0 ] || [ "$(echo "$counts" | awk '{print $3}')" != 0 ] || { total=$(( total + 1 )); failed=$(( failed + 1 )); }
	elif ! grep -q ': skipped' "$work/step.out"; then
		total=$(( total + 1 ))
		[ "$rc" = 0 ] || failed=$(( failed + 1 ))
	fi
}

echo "== README and doc/: every SQL block, in order, each page on a fresh database (test/readme.sh)"
script_step bash "$work/src/test/readme.sh"   # the copy: README as it was when the run began
echo "== META.json against the PGXN Meta Spec (test/pgxn-meta.py)"
script_step python3 test/pgxn-meta.py
echo "== pg_dump and restore of a near-duplicate exclusion constraint (test/dump_restore.sh)"
script_step bash test/dump_restore.sh
stop_cluster "$work/regress"


echo "== C against the Python reference (test/data/sample.tsv and synthetic strings)"
script_step bash test/crosscheck.sh --sample
echo "== Citus: a coordinator and two workers (skipped when Citus is not installed)"
script_step bash test/citus.sh

echo "tests: $(( total - failed )) passed, $failed failed"
[ "$failed" = 0 ]
