#!/usr/bin/env bash
# test/run-tests.sh: every test of simhash, from a fresh Debian 12 machine.
#   sudo bash test/run-tests.sh
# Installs the build dependencies, builds with -Wall -Wextra -Werror, installs
# the extension, runs the pg_regress suite (sql/, expected/) on a throwaway
# cluster, then the TAP tests (test/t/: streaming standby, crash recovery,
# concurrent writers and readers).  Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/deps.sh
source test/cluster.sh

install_deps
build_and_install

work=$(mktemp -d /tmp/simhash-tests.XXXXXX)
chmod 755 "$work"
trap 'stop_cluster "$work/regress"; rm -rf "$work"' EXIT

echo "== pg_regress"
PGPORT_WANTED=54331 start_cluster "$work/regress"
status=0
make -s with_llvm=no installcheck || { status=1; cat regression.diffs 2>/dev/null | head -200; }
stop_cluster "$work/regress"

echo "== TAP"
# the TAP framework starts its own clusters, so it runs as the server's user
mkdir -p "$work/tap" && cp -r test/t "$work/tap/" && chown -R postgres "$work/tap" 2>/dev/null || true
pgxs=$(dirname "$(pg_config --pgxs)")/..
(cd "$work/tap" && as_pg_user env TESTDIR="$work/tap" PG_REGRESS="$pgxs/test/regress/pg_regress" \
	prove -I "$pgxs/test/perl" t/*.pl) || status=1

if [ $status = 0 ]; then echo "all tests passed"; else echo "TESTS FAILED"; fi
exit $status
