#!/usr/bin/env bash
# test/sanitize.sh: the whole test suite against the extension built with
# AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   PG_CONFIG=/path/to/pg_config bash test/sanitize.sh [--no-tap]
#
# Builds simhash with -fsanitize=$SANITIZERS (default address,undefined; gcc,
# or SANITIZE_CC), installs it into the PostgreSQL installation of PG_CONFIG
# (use a copy of your installation: the sanitized build stays installed until
# the next `make install`), starts the stock server with the sanitizer runtime
# preloaded, runs the pg_regress suite, then the TAP tests (their servers
# inherit the preload), and fails on any failed test and on any sanitizer
# report in any server log.  Leak detection is off: PostgreSQL frees memory by
# discarding whole contexts and at exit, by design.
#
# AddressSanitizer needs its runtime preloaded into the uninstrumented
# postgres binary.  With some builds that deadlocks before main() is done
# (Debian 12's PostgreSQL links libldap -> gnutls -> p11-kit, whose
# constructor leaves glibc's locale locks inconsistent under the preloaded
# runtime: postgres hangs in bindtextdomain()).  The script checks first; if
# the preload hangs it runs with UndefinedBehaviorSanitizer alone and says
# so, or fails when SANITIZE_REQUIRE_ASAN=1.
set -euo pipefail
cd "$(dirname "$0")/.."
source test/cluster.sh

export PG_CONFIG=${PG_CONFIG:-pg_config}
export PATH="$("$PG_CONFIG" --bindir):$PATH"
CC=${SANITIZE_CC:-gcc}
SANITIZERS=${SANITIZERS:-address,undefined}
run_tap=1
[ "${1:-}" = --no-tap ] && run_tap=0

sanitize_env=(
	ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:print_stacktrace=1:disable_coredump=1"
	UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:abort_on_error=1"
)
if [[ ,$SANITIZERS, == *,address,* ]]; then
	runtime=$(readlink -f "$("$CC" -print-file-name=libasan.so)")
	[ -f "$runtime" ] || { echo "sanitize.sh: no libasan.so for $CC" >&2; exit 1; }
	if timeout 20 env LD_PRELOAD="$runtime" ASAN_OPTIONS=detect_leaks=0 postgres -V >/dev/null 2>&1; then
		sanitize_env+=(LD_PRELOAD="$runtime")
	elif [ "${SANITIZE_REQUIRE_ASAN:-0}" = 1 ]; then
		echo "sanitize.sh: postgres does not start with $runtime preloaded" >&2
		exit 1
	else
		echo "sanitize.sh: WARNING: postgres hangs with $runtime preloaded; AddressSanitizer left out" >&2
		SANITIZERS=$(echo ",$SANITIZERS," | sed 's/,address,/,/; s/^,//; s/,$//')
	fi
fi
[ -n "$SANITIZERS" ] || { echo "sanitize.sh: no sanitizer left to run" >&2; exit 1; }

echo "== build with -fsanitize=$SANITIZERS ($CC)"
make -s clean >/dev/null
make -s with_llvm=no WERROR=1 CC="$CC" \
	COPT="-fsanitize=$SANITIZERS -fno-sanitize-recover=all -fno-omit-frame-pointer -O1"
make -s with_llvm=no CC="$CC" install >/dev/null

work=$(mktemp -d /tmp/simhash-sanitize.XXXXXX)
chmod 755 "$work"
trap 'stop_cluster "$work/regress"; make -s clean >/dev/null; rm -rf "$work"' EXIT
status=0

echo "== pg_regress, server started with: ${sanitize_env[*]}"
mkdir -p "$work/regress"
[ "$(id -u)" = 0 ] && chown postgres "$work/regress"
as_pg_user initdb -D "$work/regress/data" -U postgres -E UTF8 --locale=C >"$work/regress/initdb.log" 2>&1 ||
	{ cat "$work/regress/initdb.log"; exit 1; }
cat >>"$work/regress/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work/regress'
port = ${PGPORT_WANTED:-54341}
fsync = off
EOF
as_pg_user env "${sanitize_env[@]}" pg_ctl -D "$work/regress/data" -l "$work/regress/server.log" -w start >/dev/null ||
	{ cat "$work/regress/server.log"; exit 1; }
export PGHOST=$work/regress PGPORT=${PGPORT_WANTED:-54341} PGUSER=postgres PGDATABASE=postgres
make -s with_llvm=no installcheck TAP_TESTS= 2>&1 | tee "$work/regress.out" || true
stop_cluster "$work/regress"
grep -qE '\.\.\. +(FAILED|failed)|^not ok' "$work/regress.out" && { status=1; head -100 regression.diffs 2>/dev/null || true; }
grep -qE 'tests passed|^# All [0-9]+ tests passed' "$work/regress.out" || status=1

if [ $run_tap = 1 ]; then
	echo "== TAP, every server started with: ${sanitize_env[*]}"
	# the TAP tests and what they read (test/upgrade), where the server's user can write
	mkdir -p "$work/tap/test" && cp -r test/t test/upgrade "$work/tap/test/"
	[ "$(id -u)" = 0 ] && chown -R postgres "$work/tap"
	pgxs=$(dirname "$("$PG_CONFIG" --pgxs)")/..
	(cd "$work/tap" && as_pg_user env "${sanitize_env[@]}" TESTDIR="$work/tap" \
		PG_REGRESS="$pgxs/test/regress/pg_regress" prove -I "$pgxs/test/perl" test/t/*.pl) 2>&1 |
		tee "$work/prove.out" || true
	grep -q "^Result: PASS" "$work/prove.out" || status=1
fi

echo "== sanitizer reports in the server logs"
reports=$(grep -lE 'ERROR: AddressSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer' \
	"$work/regress/server.log" $(find "$work/tap" -name '*.log' 2>/dev/null) 2>/dev/null || true)
if [ -n "$reports" ]; then
	status=1
	for f in $reports; do
		echo "--- $f"
		grep -E -B2 -A30 'ERROR: AddressSanitizer|runtime error:' "$f" | head -80
	done
else
	echo "none"
fi
[ $status = 0 ] && echo "sanitize.sh: passed with -fsanitize=$SANITIZERS" || echo "sanitize.sh: FAILED" >&2
exit $status
