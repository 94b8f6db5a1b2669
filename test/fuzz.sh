#!/usr/bin/env bash
# test/fuzz.sh: builds the libFuzzer targets of test/fuzz/ (clang, with
# AddressSanitizer and UndefinedBehaviorSanitizer) against the extension's C
# files and the PostgreSQL installation's headers and libpgcommon, replays
# every saved input (test/fuzz/corpus/TARGET/: seeds and past crashes), then
# fuzzes each target for FUZZ_SECONDS (default 60).  Exits non-zero on any
# crash, sanitizer report or failed check; the input that caused it is left
# in test/out/fuzz/.
#
#   PG_CONFIG=... FUZZ_SECONDS=60 bash test/fuzz.sh [TARGET...]
#   FUZZ_RUNS=10000000 bash test/fuzz.sh fuzz_simhash_in   # a number of executions instead
#
# Needs clang with libFuzzer (Debian: clang, libclang-rt-14-dev) and
# libxxhash-dev.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_CONFIG=${PG_CONFIG:-pg_config}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
CC=${FUZZ_CC:-clang}
out=test/out/fuzz
mkdir -p "$out"

command -v "$CC" >/dev/null || { echo "fuzz.sh: $CC not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
inc=$("$PG_CONFIG" --includedir-server)
pgcommon=
for dir in "$("$PG_CONFIG" --libdir)" "$("$PG_CONFIG" --pkglibdir)"; do
	[ -f "$dir/libpgcommon.a" ] && { pgcommon=$dir; break; }
done
[ -n "$pgcommon" ] || { echo "fuzz.sh: libpgcommon.a not found next to $PG_CONFIG" >&2; exit 1; }

# each target and the extension files it links
declare -A sources=(
	[fuzz_simhash_in]="src/type.c"
	[fuzz_ball_in]="src/type.c src/ball_io.c"
	[fuzz_fingerprint]="src/fingerprint.c src/accumulator.c src/tokenize.c"
	[fuzz_accumulate]="src/fingerprint.c src/accumulator.c src/tokenize.c"
)
# longest input tried: the parsers need little; texts up to 16 kB stay far
# below the point where the feature table would spill to a tuplesort
declare -A max_len=([fuzz_simhash_in]=64 [fuzz_ball_in]=96 [fuzz_fingerprint]=16384 [fuzz_accumulate]=4096)

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_simhash_in fuzz_ball_in fuzz_fingerprint fuzz_accumulate)

cflags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-Wall -Wno-unused-command-line-argument -Wno-ignored-attributes
	-I src -I test/fuzz -I "$inc")
status=0
for t in "${targets[@]}"; do
	[ -n "${sources[$t]:-}" ] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
	echo "== $t: build"
	# shellcheck disable=SC2086
	"$CC" "${cflags[@]}" -o "$out/$t" "test/fuzz/$t.c" test/fuzz/stubs.c ${sources[$t]} \
		"$pgcommon/libpgcommon.a" "$pgcommon/libpgport.a" -lm

	seeds=test/fuzz/corpus/$t
	work=$out/corpus-$t
	mkdir -p "$seeds" "$work"
	echo "== $t: replay of $(ls "$seeds" | wc -l) saved inputs"
	if [ -n "$(ls "$seeds")" ]; then
		"$out/$t" -runs=0 "$seeds" >"$out/$t.replay.log" 2>&1 || { tail -30 "$out/$t.replay.log"; status=1; continue; }
	fi

	if [ -n "${FUZZ_RUNS:-}" ]; then
		limit=(-runs="$FUZZ_RUNS")
		echo "== $t: fuzzing for $FUZZ_RUNS executions"
	else
		limit=(-max_total_time="$FUZZ_SECONDS")
		echo "== $t: fuzzing for $FUZZ_SECONDS s"
	fi
	if "$out/$t" "${limit[@]}" -max_len="${max_len[$t]}" -print_final_stats=1 \
		-artifact_prefix="$out/$t-" "$work" "$seeds" >"$out/$t.log" 2>&1; then
		grep -E "^stat::(number_of_executed_units|average_exec_per_sec)|cov: " "$out/$t.log" | tail -3
	else
		tail -40 "$out/$t.log"
		echo "fuzz.sh: $t failed; the input is in $out/$t-*" >&2
		status=1
	fi
done
exit $status
