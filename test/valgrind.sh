#!/usr/bin/env bash
# test/valgrind.sh: the pg_regress suite with the server under Valgrind's
# memcheck (a one-off check, slow: not part of CI).
#
#   PG_CONFIG=... VALGRIND_SUPP=/path/to/valgrind.supp bash test/valgrind.sh [TEST...]
#
# VALGRIND_SUPP is PostgreSQL's src/tools/valgrind.supp (from the PostgreSQL
# source of your version).  Builds and installs simhash (normal build) into
# the installation of PG_CONFIG, starts postgres under
# `valgrind --trace-children=no` (backends are forks, which Valgrind follows),
# runs the regression tests (all, or the ones named), and reports every
# memcheck error; it fails on errors with a simhash frame in their stack.
# A stock server is not built with USE_VALGRIND, so memcheck sees the blocks
# PostgreSQL mallocs, not the palloc chunks inside them; and the server's own
# writes of uninitialised padding (WAL, relcache init file, tuplesort tapes)
# are reported under frames without names, which the suppressions cannot
# match: read the reports that have an extension frame.  Under memcheck the
# batch functions run past 10 s and print progress NOTICEs, which differ from
# the expected output.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/cluster.sh

export PG_CONFIG=${PG_CONFIG:-pg_config}
export PATH="$("$PG_CONFIG" --bindir):$PATH"
: "${VALGRIND_SUPP:?set VALGRIND_SUPP to src/tools/valgrind.supp of the PostgreSQL source}"
port=${PGPORT_WANTED:-54351}

make -s clean >/dev/null
make -s with_llvm=no WERROR=1 COPT="-O1 -g -fno-omit-frame-pointer"
make -s with_llvm=no install >/dev/null

work=$(mktemp -d /tmp/simhash-valgrind.XXXXXX)
chmod 755 "$work"
cp "$VALGRIND_SUPP" "$work/valgrind.supp"
[ "$(id -u)" = 0 ] && chown -R postgres "$work"
trap 'as_pg_user pg_ctl -D "$work/data" -m fast -w stop >/dev/null 2>&1 || true
	cp regression.diffs "$work/" 2>/dev/null || true; make -s clean >/dev/null' EXIT
as_pg_user initdb -D "$work/data" -U postgres -E UTF8 --locale=C >"$work/initdb.log" 2>&1 || { cat "$work/initdb.log"; exit 1; }
cat >>"$work/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
fsync = off
max_connections = 20
autovacuum = off
EOF
as_pg_user sh -c "valgrind --quiet --trace-children=no --track-origins=yes --read-var-info=yes \
	--num-callers=30 --suppressions='$work/valgrind.supp' --log-file='$work/valgrind.%p.log' \
	postgres -D '$work/data' >'$work/server.log' 2>&1 &"
export PGHOST=$work PGPORT=$port PGUSER=postgres PGDATABASE=postgres
for _ in $(seq 1 300); do pg_isready -q && break; sleep 1; done
pg_isready -q || { cat "$work/server.log"; exit 1; }

status=0
tests=("$@")
start=$(date +%s)
if [ ${#tests[@]} -gt 0 ]; then
	make -s with_llvm=no installcheck TAP_TESTS= REGRESS="${tests[*]}" || status=1
else
	make -s with_llvm=no installcheck TAP_TESTS= || status=1
fi
echo "valgrind.sh: suite took $(( $(date +%s) - start )) s"
as_pg_user pg_ctl -D "$work/data" -m fast -w stop >/dev/null

errors=$(cat "$work"/valgrind.*.log | grep -cE '^==[0-9]+== (Invalid|Conditional|Use of uninit|Syscall param|Source and destination)' || true)
ours=0
for f in "$work"/valgrind.*.log; do
	# frames of the extension: its library, or its files (the server's have no line info)
	if grep -qE 'simhash\.so|\((ball|ball_io|fingerprint|gin|gist|pairs|support|tokenize|type)\.c:[0-9]+\)' "$f"; then
		ours=$((ours + 1))
		echo "--- $f"
		head -60 "$f"
	fi
done
echo "valgrind.sh: $errors memcheck errors in all processes; logs with a simhash frame: $ours (in $work)"
[ $ours = 0 ] || status=1
exit $status
