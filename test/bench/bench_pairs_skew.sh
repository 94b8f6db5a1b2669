#!/usr/bin/env bash
# test/bench/bench_pairs_skew.sh: simhash_clusters / simhash_dedup / simhash_pairs on
# skewed inputs (many rows sharing one fingerprint), with work_mem = 4MB.
# Run by "bash test/bench/bench_pairs.sh --skew"; also runs on its own.
#
# Tables (id bigint, fp simhash), built with fixed seeds:
#   dup10k   10,000 rows, all with one fingerprint
#   skew1m   1,000,000 rows, 100,000 of them (every 10th) with one fingerprint,
#            the others uniformly random
#   rand1m   1,000,000 uniformly random fingerprints, 1% near copies (1-3 bits)
#   one1m    1,000,000 copies of one fingerprint
#   ball     BALL_ROWS rows (default 10,000,000) drawn from the 43,745
#            fingerprints within 3 bits of one centre: one cluster at k = 3
# Each call runs in a fresh backend (statement_timeout 120 s; a cancelled call
# is reported as "> 120 s"), twice more when it took less than 5 s (then the
# median of 3 is reported).  simhash_pairs runs on dup10k and rand1m only
# (elsewhere it has billions of pairs to return).  Peak memory is VmHWM of the
# backend of the first run (/proc/self/status, read after the call) minus
# VmHWM of a fresh backend that only read the table.  A digest of each result
# (rows, distinct clusters, kept rows, sum of the result ids) shows whether
# two builds answer the same.
#
#   bash test/bench/bench_pairs_skew.sh [TABLE...]     default: all five
# Output: a markdown table on stdout and in test/out/bench_pairs_skew.md.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out
tables=${*:-"dup10k skew1m rand1m one1m ball"}
BALL_ROWS=${BALL_ROWS:-10000000}
out=test/out/bench_pairs_skew.md

source test/cluster.sh
dir=$(mktemp -d)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-55210} start_cluster "$dir" "shared_buffers = '512MB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" "work_mem = '4MB'"

q() { as_pg_user psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
q -c "CREATE EXTENSION simhash"
rnd="((floor(random() * 4294967296)::bigint << 32) | floor(random() * 4294967296)::bigint)"
for t in $tables; do
	case $t in
	dup10k) q -c "CREATE TABLE dup10k AS SELECT g::bigint AS id, '0123456789abcdef'::simhash AS fp FROM generate_series(1, 10000) g" ;;
	skew1m) q -c "SELECT setseed(0.5); CREATE TABLE skew1m AS SELECT g::bigint AS id, CASE WHEN g % 10 = 0 THEN '0123456789abcdef'::simhash ELSE $rnd::simhash END AS fp FROM generate_series(1, 1000000) g" ;;
	rand1m) q -c "SELECT setseed(0.5); CREATE TABLE rand1m AS SELECT g::bigint AS id, $rnd::simhash AS fp FROM generate_series(1, 990000) g" \
			-c "SELECT setseed(0.25); INSERT INTO rand1m SELECT 990000 + g, (r.fp::bigint # ((1::bigint << floor(random() * 64)::integer) | (1::bigint << floor(random() * 64)::integer) | (1::bigint << floor(random() * 64)::integer)))::simhash FROM generate_series(1, 10000) g JOIN rand1m r ON r.id = 1 + (g * 97) % 990000" ;;
	one1m) q -c "CREATE TABLE one1m AS SELECT g::bigint AS id, 'fedcba9876543210'::simhash AS fp FROM generate_series(1, 1000000) g" ;;
	ball) q -c "CREATE TABLE ball_fps AS SELECT row_number() OVER () AS n, ('0123456789abcdef'::simhash::bigint # m)::simhash AS fp FROM (SELECT 0::bigint AS m UNION ALL SELECT 1::bigint << a FROM generate_series(0, 63) a UNION ALL SELECT (1::bigint << a) | (1::bigint << b) FROM generate_series(0, 63) a, generate_series(0, 63) b WHERE a < b UNION ALL SELECT (1::bigint << a) | (1::bigint << b) | (1::bigint << c) FROM generate_series(0, 63) a, generate_series(0, 63) b, generate_series(0, 63) c WHERE a < b AND b < c) s" \
			-c "SELECT setseed(0.5); CREATE TABLE ball AS SELECT g::bigint AS id, f.fp FROM generate_series(1, $BALL_ROWS) g JOIN ball_fps f ON f.n = 1 + (hashint8(g) & 2147483647) % 43745" ;;
	*) echo "unknown table $t" >&2; exit 2 ;;
	esac
	q -c "VACUUM ANALYZE $t"
done

hwm="(SELECT substring(pg_read_file('/proc/self/status') FROM 'VmHWM:\\s*(\\d+)')::bigint)"
digest_pairs="SELECT format('%s pairs', count(*)) FROM simhash_pairs('SELECT id, fp FROM %T', 3)"
digest_clusters="SELECT format('%s rows, %s clusters, sum %s', count(*), count(DISTINCT cluster_id), sum(cluster_id)) FROM simhash_clusters('SELECT id, fp FROM %T', 3)"
digest_dedup="SELECT format('%s rows, %s kept, sum %s', count(*), count(*) FILTER (WHERE duplicate_of IS NULL), sum(duplicate_of)) FROM simhash_dedup('SELECT id, fp FROM %T', 3)"

# times one call and reads the backend's peak memory in the same backend
q -c "CREATE FUNCTION bench_call(sql text, OUT seconds float8, OUT peak_kb bigint, OUT digest text) LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	BEGIN
		EXECUTE sql INTO digest;
	EXCEPTION WHEN query_canceled THEN
		digest := 'cancelled';
	WHEN OTHERS THEN
		digest := 'error ' || SQLSTATE || ': ' || SQLERRM;
	END;
	seconds := extract(epoch FROM clock_timestamp() - t0);
	peak_kb := $hwm;
END \$\$"

median3() { sort -g | sed -n 2p; }
{
	echo "| table | call | seconds | peak memory above a scan | result |"
	echo "|---|---|---:|---:|---|"
} | tee "$out"
for t in $tables; do
	base=$(q -c "SELECT count(*) FROM (SELECT id, fp FROM $t OFFSET 0) s" -c "SELECT $hwm" | tail -1)
	fns="clusters dedup"
	# simhash_pairs returns n^2/2 pairs for n copies: only where that is small
	case $t in dup10k|rand1m) fns="$fns pairs" ;; esac
	for fn in $fns; do
		var=digest_$fn
		sql=${!var//%T/$t}
		sqllit=$(q -c "SELECT quote_literal(\$q\$$sql\$q\$)")
		res=$(q -c "SET statement_timeout = '120s'" -c "SELECT concat_ws('|', seconds, peak_kb, digest) FROM bench_call($sqllit)")
		secs=${res%%|*}; rest=${res#*|}; peak=${rest%%|*}; digest=${rest#*|}
		if [ "$digest" != cancelled ] && awk "BEGIN{exit !($secs < 5)}"; then
			s2=$(q -c "SELECT seconds FROM bench_call($sqllit)")
			s3=$(q -c "SELECT seconds FROM bench_call($sqllit)")
			secs=$(printf '%s\n' "$secs" "$s2" "$s3" | median3)
		fi
		if [ "$digest" = cancelled ]; then secs="> 120"; else secs=$(printf '%.3f' "$secs"); fi
		echo "| $t | simhash_$fn(..., 3) | $secs | $(( (peak - base) / 1024 )) MB | $digest |" | tee -a "$out"
	done
done
