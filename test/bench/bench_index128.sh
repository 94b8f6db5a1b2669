#!/usr/bin/env bash
# test/bench/bench_index128.sh: latency of exact Hamming search over simhash128,
# the hamming index against a sequential scan, in one backend.
#
# A table (id integer, fp simhash128) of N rows (default 1,000,000) of
# md5-derived fingerprints (uniformly random for this purpose), and 5 query
# fingerprints taken from the table.  For k = 0, 16, 28, 30 and 40, the
# median over the queries and 3 rounds of the execution time (EXPLAIN
# ANALYZE, TIMING OFF; no parallel workers) of "WHERE fp <~> q <= k" and of
# "ORDER BY fp <~> q LIMIT 10", by a sequential scan and by the hamming index;
# and of the radius searches by probes of two 64-bit hamming indexes on the
# halves (a copy of the table with indexes on simhash128_high(fp) and
# simhash128_low(fp), "(high within k / 2 OR low within k / 2) AND fp <~> q
# <= k", a BitmapOr); every answer is compared with the sequential scan's.
# Also k = 20 and 26, the radii of shingle_simhash128.  Uses the installed
# extension (PG_CONFIG selects the installation).
#
#   bash test/bench/bench_index128.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/cluster.sh
n=${1:-1000000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/simhash-bench128.XXXXXX")
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
PGPORT_WANTED=5497 start_cluster "$dir" "shared_buffers = 256MB" "max_parallel_workers_per_gather = 0" "jit = off"
psql -X -q -v ON_ERROR_STOP=1 <<EOF2
CREATE EXTENSION simhash;
CREATE TABLE b128 (id integer, fp simhash128);
INSERT INTO b128 SELECT i, md5(i::text)::simhash128 FROM generate_series(1, $n) i;
VACUUM ANALYZE b128;
CREATE TABLE b128h AS SELECT * FROM b128;
SET maintenance_work_mem = '2GB';
\timing on
CREATE INDEX b128_fp ON b128 USING hamming (fp);
CREATE INDEX b128h_high ON b128h USING hamming (simhash128_high(fp));
CREATE INDEX b128h_low ON b128h USING hamming (simhash128_low(fp));
\timing off
VACUUM ANALYZE b128h;
SELECT pg_size_pretty(pg_relation_size('b128')) AS heap, pg_size_pretty(pg_relation_size('b128_fp')) AS index,
	   pg_size_pretty(pg_relation_size('b128h_high') + pg_relation_size('b128h_low')) AS halves_indexes;
CREATE FUNCTION run_ms(q text, plan text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE line text; ms float8;
BEGIN
	IF plan = 'seq' THEN
		SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = on;
	ELSIF plan = 'halves' THEN
		SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = on; SET LOCAL enable_indexscan = off;
	ELSE
		SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = on;
	END IF;
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF) ' || q LOOP
		IF line LIKE 'Execution Time:%' THEN ms := substring(line FROM '([0-9.]+) ms')::float8; END IF;
		IF plan <> 'seq' AND line LIKE '%Seq Scan%' THEN RAISE EXCEPTION 'no index scan: %', q; END IF;
	END LOOP;
	RETURN ms;
END \$\$;
CREATE FUNCTION answer(q text, plan text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE r text;
BEGIN
	IF plan = 'seq' THEN
		SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = on;
	ELSIF plan = 'halves' THEN
		SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = on; SET LOCAL enable_indexscan = off;
	ELSE
		SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = on;
	END IF;
	EXECUTE 'SELECT string_agg(d::text, '','') FROM (' || q || ') s(d)' INTO r;
	RETURN r;
END \$\$;
CREATE TEMP TABLE queries AS
	SELECT format('SELECT fp <~> %L::simhash128 FROM b128 WHERE fp <~> %L::simhash128 <= %s ORDER BY 1', fp, fp, k) AS answer_q,
		   format('SELECT id FROM b128 WHERE fp <~> %L::simhash128 <= %s', fp, k) AS q, 'radius ' || k AS what, k AS ord,
		   format('SELECT fp <~> %L::simhash128 FROM b128h WHERE (simhash128_high(fp) <~> simhash128_high(%L) <= %s '
				  'OR simhash128_low(fp) <~> simhash128_low(%L) <= %s) AND fp <~> %L::simhash128 <= %s ORDER BY 1',
				  fp, fp, k / 2, fp, k / 2, fp, k) AS halves_answer_q,
		   format('SELECT id FROM b128h WHERE (simhash128_high(fp) <~> simhash128_high(%L) <= %s '
				  'OR simhash128_low(fp) <~> simhash128_low(%L) <= %s) AND fp <~> %L::simhash128 <= %s',
				  fp, k / 2, fp, k / 2, fp, k) AS halves_q
	FROM (SELECT fp FROM b128 WHERE id % ($n / 5) = 1 LIMIT 5) f, unnest(ARRAY[0, 16, 20, 26, 28, 30, 40]) k
	UNION ALL
	SELECT format('SELECT fp <~> %L::simhash128 FROM b128 ORDER BY 1 LIMIT 10', fp, fp),
		   format('SELECT id FROM b128 ORDER BY fp <~> %L::simhash128 LIMIT 10', fp), 'ORDER BY ... LIMIT 10', 999, NULL, NULL
	FROM (SELECT fp FROM b128 WHERE id % ($n / 5) = 1 LIMIT 5) f;
SELECT count(*) FILTER (WHERE answer(answer_q, 'seq') IS DISTINCT FROM answer(answer_q, 'index')) AS wrong_answers,
	   count(*) FILTER (WHERE halves_q IS NOT NULL AND answer(answer_q, 'seq') IS DISTINCT FROM answer(halves_answer_q, 'halves')) AS wrong_halves_answers
FROM queries;
CREATE TEMP TABLE times AS
	SELECT what, ord, plan, run_ms(CASE plan WHEN 'halves' THEN halves_q ELSE q END, plan) AS ms
	FROM queries, generate_series(1, 3) round, unnest(ARRAY['seq', 'index', 'halves']) plan
	WHERE plan <> 'halves' OR halves_q IS NOT NULL;
\pset format aligned
SELECT what AS query,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE plan = 'seq')::numeric, 1) AS seq_ms,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE plan = 'index')::numeric, 1) AS index_ms,
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE plan = 'seq') /
			  percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE plan = 'index'))::numeric, 1) AS ratio,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE plan = 'halves')::numeric, 2) AS halves_ms
FROM times GROUP BY what, ord ORDER BY ord;
EOF2
