#!/usr/bin/env bash
# test/bench/bench_memory.sh: peak memory of the backend on skewed inputs, for every
# function that promises work_mem (issue 11, "Memory").
#
# On a throwaway cluster (shared_buffers = 16MB, so that the shared pages a
# backend touches add at most 16 MB to its resident set), every call runs in a
# fresh backend through bench_call(), which catches an error and then reads,
# in the same backend, its peak resident set (VmHWM of /proc/self/status), the
# CPU time the call took (utime + stime of /proc/self/stat) and its wall time.
# Peak memory is reported as VmHWM and as VmHWM minus that of a fresh backend
# that ran SELECT 1.  A backend that died (an out-of-memory kill) is reported
# as such, and the script then exits with status 1 (so that --quick can run in
# CI).
#
# Inputs (sizes of the full run; --quick in parentheses), built with fixed
# seeds before the calls, outside the measured backends:
#   one     1,000,000 copies of one fingerprint (in both runs: fewer copies
#           than work_mem holds would make simhash_pairs return n^2/2 pairs,
#           100,000 copies five billion)
#   chain   10,000,000 (200,000) rows in one cluster: a random walk on the
#           64-bit cube, each row one bit away from the previous one
#   big     one text value of 900 MB (64 MB) of distinct words (md5 hex) and
#           one of a repeated sentence, STORAGE EXTERNAL (read without
#           decompression); a LATIN1 database holds the distinct-words value
#           too (simhash converts it to UTF-8)
#   arr     arrays of 10,000,000 (1,000,000) features and as many weights,
#           STORAGE EXTERNAL
#
#   bash test/bench/bench_memory.sh [--quick]      (after make install; honours PG_CONFIG)
# Output: a markdown table on stdout and in test/out/bench_memory.md.
# The full run takes about 12 minutes on a shared 2-core machine (3.6 of CPU
# in the measured calls, the rest building the inputs); --quick about 16 s.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out
if [ "${1:-}" = --quick ]; then
	COPIES=${COPIES:-1000000} CHAIN=${CHAIN:-200000} TEXT_MB=${TEXT_MB:-64} FEATURES=${FEATURES:-1000000}
	out=test/out/bench_memory_quick.md
elif [ -z "${1:-}" ]; then
	COPIES=${COPIES:-1000000} CHAIN=${CHAIN:-10000000} TEXT_MB=${TEXT_MB:-900} FEATURES=${FEATURES:-10000000}
	out=test/out/bench_memory.md
else
	echo "usage: $0 [--quick]" >&2
	exit 2
fi
# the work_mem that the chain's per-fingerprint tables need (about 80 bytes
# per distinct fingerprint, times hash_mem_multiplier = 2), rounded up
CHAIN_WORK_MEM=$(( (CHAIN * 100 / 1048576 + 64) / 64 * 64 ))MB

source test/cluster.sh
dir=$(mktemp -d /tmp/bench_memory.XXXXXX)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-55240} start_cluster "$dir" "shared_buffers = '16MB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" "work_mem = '4MB'"

q() { as_pg_user psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

echo "building the inputs ($COPIES copies, a chain of $CHAIN rows, $TEXT_MB MB texts, $FEATURES features)" >&2
q -c "CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
for db in postgres latin1; do
	q -d $db -c "CREATE EXTENSION simhash" -c "CREATE FUNCTION bench_call(sql text, OUT seconds float8, OUT cpu float8, OUT peak_kb bigint, OUT result text)
LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
	c0 float8 := (SELECT split_part(s, ' ', 14)::float8 + split_part(s, ' ', 15)::float8 FROM pg_read_file('/proc/self/stat') s);
	st text;
	msg text;
	detail text;
	hint text;
BEGIN
	BEGIN
		EXECUTE sql INTO result;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL,
			hint = PG_EXCEPTION_HINT;
		result := concat_ws(' ', format('error %s: %s.', st, msg), nullif(detail, ''), nullif(hint, ''));
	END;
	seconds := extract(epoch FROM clock_timestamp() - t0);
	cpu := (SELECT split_part(s, ' ', 14)::float8 + split_part(s, ' ', 15)::float8 FROM pg_read_file('/proc/self/stat') s) - c0;
	cpu := cpu / 100;	-- clock ticks
	peak_kb := substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\\s*(\\d+)')::bigint;
END \$\$"
done
q -c "CREATE TABLE one AS SELECT g::bigint AS id, 'fedcba9876543210'::simhash AS fp FROM generate_series(1, $COPIES) g"
q -c "SELECT setseed(0.5)" -c "CREATE TABLE chain AS
	SELECT g::bigint AS id,
		   ('0123456789abcdef'::simhash::bigint # bit_xor(1::bigint << floor(random() * 64)::integer) OVER (ORDER BY g))::simhash AS fp
	FROM generate_series(1, $CHAIN) g"
words=$(( TEXT_MB * 1048576 / 33 ))
for db in postgres latin1; do
	q -d $db -c "CREATE TABLE big (kind text, body text)" -c "ALTER TABLE big ALTER body SET STORAGE EXTERNAL" \
		-c "INSERT INTO big SELECT 'distinct words', string_agg(md5(g::text), ' ') FROM generate_series(1, $words) g"
done
q -c "INSERT INTO big SELECT 'one sentence', repeat('The quick brown fox jumps over the lazy dog. ', $(( TEXT_MB * 1048576 / 45 )))"
q -c "CREATE TABLE arr (f text[], w float8[])" -c "ALTER TABLE arr ALTER f SET STORAGE EXTERNAL, ALTER w SET STORAGE EXTERNAL" \
	-c "INSERT INTO arr SELECT array_agg(g::text ORDER BY g), array_agg(1.0::float8 / g ORDER BY g) FROM generate_series(1, $FEATURES) g"
q -c "VACUUM ANALYZE"
sizes=$(q -c "SELECT format('%s MB, %s MB; arrays %s MB and %s MB', (SELECT pg_column_size(body) / 1048576 FROM big WHERE kind = 'distinct words'),
	(SELECT pg_column_size(body) / 1048576 FROM big WHERE kind = 'one sentence'), pg_column_size(f) / 1048576, pg_column_size(w) / 1048576) FROM arr")
echo "texts $sizes" >&2

base=$(q -c "SELECT 1" -c "SELECT substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\\s*(\\d+)')::bigint" | tail -1)

# measure LABEL DB WORK_MEM SQL: one call in a fresh backend, one table row
measure() {
	local label=$1 db=$2 wm=$3 sql=$4 res secs cpu peak result
	if res=$(q -d "$db" -c "SET work_mem = '$wm'" -c "SET client_min_messages = warning" \
			-c "SELECT concat_ws('|', round(seconds::numeric, 1), round(cpu::numeric, 1), peak_kb, result) FROM bench_call(\$bench\$$sql\$bench\$)" 2>"$dir/stderr"); then
		IFS='|' read -r secs cpu peak result <<<"$res"
		echo "| $label | $wm | $result | $(( peak / 1024 )) MB | $(( (peak - base) / 1024 )) MB | $cpu s | $secs s |"
	else
		echo "| $label | $wm | backend died: $(tr '\n' ' ' <"$dir/stderr") | | | | |"
		died=1
	fi >>"$out"
	tail -1 "$out"
}
died=0

{
	echo "| input, call | work_mem | result | peak RSS (VmHWM) | above a fresh backend | CPU | wall |"
	echo "|---|---|---|---:|---:|---:|---:|"
} | tee "$out"
c=$COPIES
measure "$c copies of one fingerprint: simhash_clusters(..., 3)" postgres 4MB \
	"SELECT format('%s rows, %s clusters', count(*), count(DISTINCT cluster_id)) FROM simhash_clusters('SELECT id, fp FROM one', 3)"
measure "$c copies of one fingerprint: simhash_dedup(..., 3)" postgres 4MB \
	"SELECT format('%s rows, %s kept', count(*), count(*) FILTER (WHERE duplicate_of IS NULL)) FROM simhash_dedup('SELECT id, fp FROM one', 3)"
measure "$c copies of one fingerprint: simhash_pairs(..., 3)" postgres 4MB \
	"SELECT format('%s pairs', count(*)) FROM simhash_pairs('SELECT id, fp FROM one', 3)"
measure "$c copies of one fingerprint: simhash_pairs of the groups (README recipe)" postgres 4MB \
	"SELECT format('%s pairs', count(*)) FROM simhash_pairs('SELECT min(id), fp FROM one GROUP BY fp', 3)"
c=$CHAIN
for wm in 4MB $CHAIN_WORK_MEM; do
	measure "chain of $c rows, one cluster: simhash_clusters(..., 3)" postgres $wm \
		"SELECT format('%s rows, %s clusters', count(*), count(DISTINCT cluster_id)) FROM simhash_clusters('SELECT id, fp FROM chain', 3)"
	measure "chain of $c rows, one cluster: simhash_dedup(..., 3)" postgres $wm \
		"SELECT format('%s rows, %s kept', count(*), count(*) FILTER (WHERE duplicate_of IS NULL)) FROM simhash_dedup('SELECT id, fp FROM chain', 3)"
done
measure "chain of $c rows, one cluster: simhash_pairs(..., 3)" postgres 4MB \
	"SELECT format('%s pairs', count(*)) FROM simhash_pairs('SELECT id, fp FROM chain', 3)"
for kind in 'distinct words' 'one sentence'; do
	measure "$TEXT_MB MB text, $kind: simhash(body)" postgres 4MB "SELECT simhash(body)::text FROM big WHERE kind = '$kind'"
done
measure "$TEXT_MB MB text, distinct words: simhash_ngram(body)" postgres 4MB "SELECT simhash_ngram(body)::text FROM big WHERE kind = 'distinct words'"
measure "$TEXT_MB MB text, distinct words: simhash(body, 3, 'tf')" postgres 4MB "SELECT simhash(body, 3, 'tf')::text FROM big WHERE kind = 'distinct words'"
measure "$TEXT_MB MB text, distinct words, LATIN1 database: simhash(body)" latin1 4MB "SELECT simhash(body)::text FROM big"
measure "$TEXT_MB MB text, distinct words: length(body) (reading it)" postgres 4MB "SELECT length(body)::text FROM big WHERE kind = 'distinct words'"
c=$FEATURES
measure "$c features: simhash(text[])" postgres 4MB "SELECT simhash(f)::text FROM arr"
measure "$c features: simhash(text[], float8[])" postgres 4MB "SELECT simhash(f, w)::text FROM arr"
measure "$c features: cardinality(f) + cardinality(w) (reading them)" postgres 4MB "SELECT (cardinality(f) + cardinality(w))::text FROM arr"
measure "$c rows: simhash_agg(feature, weight)" postgres 4MB \
	"SELECT simhash_agg(g::text, 1.0 / g)::text FROM generate_series(1, $c) g"
echo "(a fresh backend: $(( base / 1024 )) MB; texts $sizes)" | tee -a "$out"
exit $died
