#!/usr/bin/env bash
# test/bench/bench_pgvector.sh: the hamming index beside pgvector's binary
# indexes, on the same rows in the same run (PostgreSQL 18, pgvector 0.8).
#
# What it measures
#   A table of N rows (default 1,000,000): a uniformly random 64-bit
#   fingerprint per row, stored twice, as simhash (fp) and as pgvector's
#   bit(64) (v), and 30 queries, each with one planted neighbour at every
#   distance 0..16 (SQL random(), fixed seed).  Indexes, each built alone
#   (time and size): hamming on fp; HNSW (bit_hamming_ops, m = 16,
#   ef_construction = 64) and IVFFlat (bit_hamming_ops, lists = N / 1000) on
#   v.  One backend, max_parallel_workers_per_gather = 0, jit off, the table
#   and indexes in shared buffers.  For each query, untimed once, then timed
#   (the median of the 30 queries' milliseconds inside the backend):
#     - WHERE distance <= k, k = 3, 9, 16: hamming `fp <~> q <= k`;
#       pgvector `v <~> q <= k ORDER BY v <~> q LIMIT 1000` (its only way:
#       an ordered scan with a filter), HNSW and IVFFlat with iterative scans
#       (hnsw.iterative_scan = relaxed_order, ivfflat.iterative_scan =
#       relaxed_order, ivfflat.probes = 10; their default limits,
#       hnsw.max_scan_tuples = 20000 and ivfflat.max_probes = all lists), and
#       the exact scan (no index);
#     - ORDER BY distance LIMIT 10, the same methods (HNSW ef_search 40,
#       IVFFlat probes 10: pgvector's defaults and its documented setting);
#   recall against the exact answer: rows found within k over rows within k;
#   for LIMIT 10, result distances at most the exact 10th distance, over 10.
#
# How to run (as root on Debian with PostgreSQL 18; it installs
# postgresql-18, postgresql-18-pgvector and the build dependencies, builds
# and installs simhash; Debian 13 and later package pgvector for their
# PostgreSQL):
#   SIMHASH_PG_MAJOR=18 bash test/bench/bench_pgvector.sh [ROWS]
# Output: a markdown table on stdout and in test/out/bench_pgvector.md.
set -euo pipefail

rows=${1:-1000000}
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/../.." && pwd))
cd "$root"
mkdir -p test/out

source test/cluster.sh
source test/deps.sh
SIMHASH_PACKAGES="$SIMHASH_PACKAGES postgresql-$SIMHASH_PG_MAJOR-pgvector"
install_deps
build_and_install
dir=$(mktemp -d /tmp/bench_pgvector.XXXXXX)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-5496} start_cluster "$dir" "shared_buffers = '2GB'" \
	"max_parallel_workers_per_gather = 0" "max_parallel_maintenance_workers = 0" "jit = off" \
	"maintenance_work_mem = '1GB'" "work_mem = '64MB'"

q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

q -v rows="$rows" <<'SQL'
CREATE EXTENSION simhash;
CREATE EXTENSION vector;
CREATE EXTENSION pg_prewarm;
SELECT setseed(0.42);
CREATE TABLE docs (id bigint, fp simhash, v bit(64));
INSERT INTO docs (id, fp)
	SELECT g, ((floor(random() * 4294967296)::bigint << 32) | floor(random() * 4294967296)::bigint)::simhash
	FROM generate_series(1, :rows) g;
CREATE TABLE queries (j int, fp simhash, v bit(64));
INSERT INTO queries (j, fp)
	SELECT g, ((floor(random() * 4294967296)::bigint << 32) | floor(random() * 4294967296)::bigint)::simhash
	FROM generate_series(1, 30) g;
-- one planted neighbour of every query at every distance 0..16, over distinct rows
CREATE FUNCTION flip(fp simhash, d integer) RETURNS simhash LANGUAGE plpgsql AS $$
DECLARE mask bigint := 0;
BEGIN
	WHILE bit_count(mask::bit(64)) < d LOOP
		mask := mask | (1::bigint << floor(random() * 64)::integer);
	END LOOP;
	RETURN (fp::bigint # mask)::simhash;
END $$;
UPDATE docs SET fp = flip(q.fp, ((docs.id - 1) % 17)::integer)
	FROM queries q WHERE docs.id <= 30 * 17 AND q.j = (docs.id - 1) / 17 + 1;
UPDATE docs SET v = fp::bigint::bit(64);
UPDATE queries SET v = fp::bigint::bit(64);
VACUUM ANALYZE docs;
VACUUM ANALYZE queries;
SQL

# build each index, time and size
declare -A build size
for ix in "ham:CREATE INDEX docs_ham ON docs USING hamming (fp)" \
		  "hnsw:CREATE INDEX docs_hnsw ON docs USING hnsw (v bit_hamming_ops)" \
		  "ivf:CREATE INDEX docs_ivf ON docs USING ivfflat (v bit_hamming_ops) WITH (lists = $(( rows / 1000 > 1 ? rows / 1000 : 1 )))"; do
	name=${ix%%:*}
	t0=$(date +%s.%N)
	q -c "${ix#*:}"
	build[$name]=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')
	size[$name]=$(q -c "SELECT pg_relation_size('docs_$name')")
done
q -c "SELECT pg_prewarm('docs'), pg_prewarm('docs_ham'), pg_prewarm('docs_hnsw'), pg_prewarm('docs_ivf')" >/dev/null

# bench(method, k): per query "j<TAB>ms<TAB>ids" (k = -1: LIMIT 10), after one untimed round
q <<'SQL'
CREATE FUNCTION bench(method text, k integer) RETURNS TABLE (j int, ms float8, ids bigint[]) LANGUAGE plpgsql AS $$
DECLARE
	qq record;
	t0 timestamptz;
	sql text;
	pass int;
BEGIN
	sql := CASE
		WHEN method = 'ham' AND k >= 0 THEN 'SELECT array_agg(id) FROM docs WHERE fp <~> $1 <= $3'
		WHEN method = 'ham' THEN 'SELECT array_agg(id) FROM (SELECT id FROM docs ORDER BY fp <~> $1 LIMIT 10) s'
		WHEN k >= 0 THEN 'SELECT array_agg(id) FROM (SELECT id FROM docs WHERE v <~> $2 <= $3 ORDER BY v <~> $2 LIMIT 1000) s'
		ELSE 'SELECT array_agg(id) FROM (SELECT id FROM docs ORDER BY v <~> $2 LIMIT 10) s' END;
	PERFORM set_config('enable_indexscan', (method <> 'exact')::text, true);
	PERFORM set_config('enable_bitmapscan', (method <> 'exact')::text, true);
	PERFORM set_config('enable_seqscan', (method = 'exact')::text, true);
	PERFORM set_config('hnsw.iterative_scan', 'relaxed_order', true);
	PERFORM set_config('ivfflat.iterative_scan', 'relaxed_order', true);
	PERFORM set_config('ivfflat.probes', '10', true);
	FOR pass IN 1..2 LOOP
		FOR qq IN SELECT * FROM queries ORDER BY queries.j LOOP
			t0 := clock_timestamp();
			EXECUTE sql INTO ids USING qq.fp, qq.v, k;
			ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
			j := qq.j;
			IF pass = 2 THEN RETURN NEXT; END IF;
		END LOOP;
	END LOOP;
END $$;
-- the plan each method gets (an index of the other kind is dropped inside the transaction)
CREATE TABLE results (method text, k int, j int, ms float8, ids bigint[]);
SQL
for k in 3 9 16 -1; do
	for m in ham hnsw ivf exact; do
		case $m in
			ham) drop="DROP INDEX docs_hnsw, docs_ivf;" ;;
			hnsw) drop="DROP INDEX docs_ham, docs_ivf;" ;;
			ivf) drop="DROP INDEX docs_ham, docs_hnsw;" ;;
			exact) drop="" ;;
		esac
		q -F $'\t' -c "BEGIN; $drop SELECT '$m', $k, b.j, b.ms, coalesce(b.ids, '{}') FROM bench('$m', $k) b; ROLLBACK;" |
			q -c "COPY results FROM STDIN"
		# the plan, once, for the record
		[ $m = exact ] && drop="SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;"
		q -c "BEGIN; $drop EXPLAIN (COSTS OFF) $(case $m:$k in
			ham:-1) echo "SELECT id FROM docs ORDER BY fp <~> (SELECT fp FROM queries WHERE j = 1) LIMIT 10" ;;
			ham:*) echo "SELECT id FROM docs WHERE fp <~> (SELECT fp FROM queries WHERE j = 1) <= $k" ;;
			*:-1) echo "SELECT id FROM docs ORDER BY v <~> (SELECT v FROM queries WHERE j = 1) LIMIT 10" ;;
			*) echo "SELECT id FROM docs WHERE v <~> (SELECT v FROM queries WHERE j = 1) <= $k ORDER BY v <~> (SELECT v FROM queries WHERE j = 1) LIMIT 1000" ;;
		esac); ROLLBACK;" | tr '\n' ' ' | sed "s/^/plan $m k=$k: /"; echo
	done
done

# the report: build and size, then latency and recall against the exact answers
{
echo "Rows: $rows (2 cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); PostgreSQL $(q -c 'SHOW server_version' | cut -d' ' -f1), pgvector $(q -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'"))"
echo
echo "| index | build s | size MB | bytes a row |"
echo "|---|---:|---:|---:|"
for m in ham hnsw ivf; do
	awk -v m="$m" -v b="${build[$m]}" -v s="${size[$m]}" -v n="$rows" 'BEGIN { printf "| %s | %.1f | %.1f | %.0f |\n", m, b, s / 1048576, s / n }'
done
echo
echo "| query | method | median ms | vs hamming | recall |"
echo "|---|---|---:|---:|---:|"
q -F ' | ' <<'SQL'
WITH e AS (
	SELECT r.k, r.j, r.method, r.ms,
		   (SELECT count(*) FROM unnest(r.ids) f(id) JOIN docs d USING (id) JOIN queries qq ON qq.j = r.j
			WHERE d.fp <~> qq.fp <= r.k) AS good,
		   (SELECT count(*) FROM unnest(r.ids) f(id) JOIN docs d USING (id) JOIN queries qq ON qq.j = r.j
			WHERE d.fp <~> qq.fp <= (SELECT max(d2.fp <~> qq.fp) FROM unnest(x.ids) g(id) JOIN docs d2 USING (id))) AS within10,
		   cardinality(x.ids) AS exact_n
	FROM results r JOIN results x ON x.method = 'exact' AND x.k = r.k AND x.j = r.j)
SELECT '| ' || CASE WHEN k < 0 THEN 'ORDER BY LIMIT 10' ELSE 'k = ' || k END,
	   method,
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3),
	   round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) /
			  (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY e2.ms) FROM e e2 WHERE e2.k = e.k AND e2.method = 'ham'))::numeric, 2) || 'x',
	   round(CASE WHEN k < 0 THEN sum(least(within10, 10))::numeric / sum(10)
				  ELSE sum(good)::numeric / nullif(sum(exact_n), 0) END, 4) || ' |'
FROM e GROUP BY k, method
ORDER BY CASE WHEN k < 0 THEN 99 ELSE k END, array_position(ARRAY['ham', 'hnsw', 'ivf', 'exact'], method);
SQL
} | tee test/out/bench_pgvector.md
