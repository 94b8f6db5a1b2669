#!/usr/bin/env bash
# test/bench/bench_lookup.sh: a verified lookup of one document in a table of
# N generated documents (default 10,000,000): "which rows are near-copies of
# this text?", answered by one SQL statement, for the 256-bit, 128-bit and
# 64-bit pipelines side by side.
#
#   bash test/bench/bench_lookup.sh [N]
#   LOOKUP_DOCS=docs.tsv LOOKUP_TRUTH=truth.tsv bash test/bench/bench_lookup.sh N
#
# The documents come from test/bench/gen_corpus.py (two generators of N / 2
# in parallel, streamed into the table by COPY; nothing is written to disk
# but the database), or from a corpus made before by the recipe in
# doc/scale.md (LOOKUP_DOCS and LOOKUP_TRUTH, files the server can read, ids
# 1..N).  The table keeps three fingerprints, computed as rows arrive:
# fp = shingle_simhash128(body, 3, 'words') and fp1, its part 1, each with two
# 64-bit hamming indexes on its halves, and fp64 = simhash(body) with a
# hamming index.  The queries are the texts of 50 planted near-copies (edit
# rates 0.01 .. 0.05); each lookup computes the query's fingerprint, takes
# the candidates from the indexes (k = 49 of 256 bits by the four quarters at
# 12, k = 26 of 128 bits by the two halves at 13, k = 16 for fp64) and keeps
# those whose 3-shingle Jaccard similarity with the query is >= 0.8:
#
#   SELECT id FROM docs, (SELECT shingle_simhash128($1, 3, 'words') AS f) q
#   WHERE (simhash128_high(fp) <~> simhash128_high(q.f) <= 13
#          OR simhash128_low(fp) <~> simhash128_low(q.f) <= 13)
#     AND fp <~> q.f <= 26 AND shingle_similarity(body, $1, 3, 'words') >= 0.8;
#
# Reported: the median and 90th percentile of the whole statement's time
# (each query run twice, the second timed, in one backend with cached
# plans), candidates and verified rows per lookup.  Every lookup's
# candidates are compared with a sequential scan's for the first 10 queries.
# As root it installs what it needs, as test/run-tests.sh does.  Output in
# test/out/bench_lookup.md.  At 10M rows: about 13 GB of text generated,
# 40-60 minutes on 2 cores, 25 GB of disk.
set -euo pipefail

start_time=$SECONDS
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out
n=${1:-10000000}
half=$((n / 2))

source test/cluster.sh
source test/deps.sh
install_deps
build_and_install
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_lookup.XXXXXX")
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-5493} start_cluster "$dir" "shared_buffers = '4GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" "max_wal_size = '16GB'" \
	"maintenance_work_mem = '2GB'" "autovacuum = off"
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

psql -X -q -v ON_ERROR_STOP=1 <<'EOF'
CREATE EXTENSION simhash;
CREATE UNLOGGED TABLE docs (
	id bigint,
	body text,
	fp simhash128 GENERATED ALWAYS AS (shingle_simhash128(body, 3, 'words')) STORED,
	fp1 simhash128 GENERATED ALWAYS AS (shingle_simhash128(body, 3, 'words', 1)) STORED,
	fp64 simhash GENERATED ALWAYS AS (simhash(body)) STORED);
EOF
t0=$SECONDS
if [ -n "${LOOKUP_DOCS:-}" ]; then
	psql -X -q -v ON_ERROR_STOP=1 -c "COPY docs (id, body) FROM '$LOOKUP_DOCS'"
	cp "$LOOKUP_TRUTH" "$dir/truth.tsv"
else
	"$py" test/bench/gen_corpus.py "$half" --seed 11 --truth "$dir/t11.tsv" \
		| psql -X -q -v ON_ERROR_STOP=1 -c "COPY docs (id, body) FROM STDIN" &
	"$py" test/bench/gen_corpus.py "$half" --seed 12 --truth "$dir/t12.tsv" \
		| awk -F'\t' -v OFS='\t' -v s="$half" '{ $1 += s; print }' \
		| psql -X -q -v ON_ERROR_STOP=1 -c "COPY docs (id, body) FROM STDIN"
	wait
	{ cat "$dir/t11.tsv"; awk -F'\t' -v OFS='\t' -v s="$half" '{ $1 += s; $2 += s; print }' "$dir/t12.tsv"; } >"$dir/truth.tsv"
fi
load_s=$((SECONDS - t0))
# the queries: planted copies at small edit rates, 25 from each half of the ids
awk -F'\t' -v s="$half" '$3 ~ /^0\.0[1-5]/ { h = $2 > s; if (n[h] < 25) { print $2; n[h]++ } }' "$dir/truth.tsv" >"$dir/queries.txt"
chmod 644 "$dir/queries.txt"

t0=$SECONDS
psql -X -q -v ON_ERROR_STOP=1 <<'EOF'
CREATE INDEX docs_high ON docs USING hamming (simhash128_high(fp));
CREATE INDEX docs_low ON docs USING hamming (simhash128_low(fp));
CREATE INDEX docs_high1 ON docs USING hamming (simhash128_high(fp1));
CREATE INDEX docs_low1 ON docs USING hamming (simhash128_low(fp1));
CREATE INDEX docs_fp64 ON docs USING hamming (fp64);
VACUUM ANALYZE docs;
EOF
index_s=$((SECONDS - t0))

psql -X -q -v ON_ERROR_STOP=1 -v qfile="$dir/queries.txt" <<'EOF' >"$dir/result.txt"
CREATE TEMP TABLE qids (id bigint);
COPY qids FROM :'qfile';
CREATE TEMP TABLE queries AS SELECT row_number() OVER (ORDER BY d.id) AS j, d.id, d.body FROM docs d JOIN qids USING (id);
CREATE FUNCTION pg_temp.lookup(method text, q text, verified bool) RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE r bigint[];
BEGIN
	-- the query's fingerprint is computed once (an InitPlan), the candidates come from the index
	IF method = 'simhash256' THEN
		-- d0 + d1 <= 49 puts one of the four 64-bit quarters within 12
		WITH s AS MATERIALIZED (SELECT shingle_simhash128(q, 3, 'words') AS f, shingle_simhash128(q, 3, 'words', 1) AS f1)
		SELECT array_agg(id ORDER BY id) INTO r FROM docs
		WHERE (simhash128_high(fp) <~> simhash128_high((SELECT f FROM s)) <= 12
			   OR simhash128_low(fp) <~> simhash128_low((SELECT f FROM s)) <= 12
			   OR simhash128_high(fp1) <~> simhash128_high((SELECT f1 FROM s)) <= 12
			   OR simhash128_low(fp1) <~> simhash128_low((SELECT f1 FROM s)) <= 12)
		  AND (fp <~> (SELECT f FROM s)) + (fp1 <~> (SELECT f1 FROM s)) <= 49
		  AND (NOT verified OR shingle_similarity(body, q, 3, 'words') >= 0.8);
	ELSIF method = 'simhash128' THEN
		WITH s AS MATERIALIZED (SELECT shingle_simhash128(q, 3, 'words') AS f)
		SELECT array_agg(id ORDER BY id) INTO r FROM docs
		WHERE (simhash128_high(fp) <~> simhash128_high((SELECT f FROM s)) <= 13
			   OR simhash128_low(fp) <~> simhash128_low((SELECT f FROM s)) <= 13)
		  AND fp <~> (SELECT f FROM s) <= 26
		  AND (NOT verified OR shingle_similarity(body, q, 3, 'words') >= 0.8);
	ELSE
		SELECT array_agg(id ORDER BY id) INTO r FROM docs
		WHERE fp64 <~> (SELECT simhash(q)) <= 16
		  AND (NOT verified OR shingle_similarity(body, q, 3, 'words') >= 0.8);
	END IF;
	RETURN coalesce(r, '{}');
END $$;
-- the plans use the indexes
EXPLAIN (COSTS OFF) WITH s AS MATERIALIZED (SELECT shingle_simhash128('x', 3, 'words') AS f, shingle_simhash128('x', 3, 'words', 1) AS f1)
SELECT id FROM docs
WHERE (simhash128_high(fp) <~> simhash128_high((SELECT f FROM s)) <= 12
	   OR simhash128_low(fp) <~> simhash128_low((SELECT f FROM s)) <= 12
	   OR simhash128_high(fp1) <~> simhash128_high((SELECT f1 FROM s)) <= 12
	   OR simhash128_low(fp1) <~> simhash128_low((SELECT f1 FROM s)) <= 12)
  AND (fp <~> (SELECT f FROM s)) + (fp1 <~> (SELECT f1 FROM s)) <= 49 AND shingle_similarity(body, 'x', 3, 'words') >= 0.8;
EXPLAIN (COSTS OFF) WITH s AS MATERIALIZED (SELECT shingle_simhash128('x', 3, 'words') AS f)
SELECT id FROM docs
WHERE (simhash128_high(fp) <~> simhash128_high((SELECT f FROM s)) <= 13
	   OR simhash128_low(fp) <~> simhash128_low((SELECT f FROM s)) <= 13)
  AND fp <~> (SELECT f FROM s) <= 26 AND shingle_similarity(body, 'x', 3, 'words') >= 0.8;
EXPLAIN (COSTS OFF) SELECT id FROM docs
WHERE fp64 <~> (SELECT simhash('x'::text)) <= 16 AND shingle_similarity(body, 'x', 3, 'words') >= 0.8;
CREATE TEMP TABLE timing (method text, j bigint, ms float8, candidates int, verified int);
DO $$
DECLARE m text; rec record; t0 timestamptz; ms float8; pass int; v bigint[]; c bigint[];
BEGIN
	FOREACH m IN ARRAY ARRAY['simhash256', 'simhash128', 'simhash'] LOOP
		FOR pass IN 1..2 LOOP
			FOR rec IN SELECT * FROM queries ORDER BY j LOOP
				t0 := clock_timestamp();
				v := pg_temp.lookup(m, rec.body, true);
				ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
				IF pass = 2 THEN
					c := pg_temp.lookup(m, rec.body, false);
					INSERT INTO timing VALUES (m, rec.j, ms, cardinality(c), cardinality(v));
				END IF;
			END LOOP;
		END LOOP;
	END LOOP;
END $$;
\pset format unaligned
\pset fieldsep '\t'
\pset tuples_only on
SELECT 'RESULT', method, count(*),
	   round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
	   round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms)::numeric, 2),
	   round(avg(candidates - 1)::numeric, 2), round(avg(verified - 1)::numeric, 2),
	   count(*) FILTER (WHERE verified >= 2)
FROM timing GROUP BY method ORDER BY method DESC;
-- candidates by the index = by a sequential scan (first 10 queries)
SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE seq AS SELECT m AS method, j, pg_temp.lookup(m, body, false) AS c
	FROM queries, unnest(ARRAY['simhash256', 'simhash128', 'simhash']) m WHERE j <= 10;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT 'CHECK', count(*), count(*) FILTER (WHERE s.c = pg_temp.lookup(s.method, q.body, false))
FROM seq s JOIN queries q USING (j);
SELECT 'SIZE', pg_size_pretty(pg_total_relation_size('docs')),
	   pg_size_pretty(pg_relation_size('docs_high') + pg_relation_size('docs_low')
	                  + pg_relation_size('docs_high1') + pg_relation_size('docs_low1')),
	   pg_size_pretty(pg_relation_size('docs_fp64'));
EOF

# both plans read an index
[ "$(grep -c 'Index Scan \(on\|using\) docs_\(high\|low\|fp64\)' "$dir/result.txt")" = 7 ] \
	|| { cat "$dir/result.txt"; echo "bench_lookup.sh: a lookup is not planned with its index" >&2; exit 1; }

{
	echo "## A verified lookup in $n generated documents"
	echo
	echo "Load (generation or reading, COPY and the fingerprints): ${load_s} s; five indexes: ${index_s} s."
	awk -F'\t' '$1 == "SIZE" { printf "Table with TOAST %s; the four half indexes %s; the 64-bit index %s.\n", $2, $3, $4 }' "$dir/result.txt"
	awk -F'\t' '$1 == "CHECK" { printf "Candidates equal to a sequential scan'"'"'s: %s of %s lookups.\n", $3, $2 }' "$dir/result.txt"
	echo
	echo "| fingerprint, radius | lookups | median ms | 90th percentile ms | candidates / lookup | verified / lookup | lookups with a verified near-copy |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	awk -F'\t' '$1 == "RESULT" {
		name = $2 == "simhash256" ? "256 bits (parts 0 and 1), k = 49, four half indexes" : $2 == "simhash128" ? "`shingle_simhash128(body, 3, '"'"'words'"'"')`, k = 26, two half indexes" : "`simhash(body)`, k = 16"
		printf "| %s | %s | %s | %s | %s | %s | %s |\n", name, $3, $4, $5, $6, $7, $8 }' "$dir/result.txt"
	echo
	echo "(Candidates and verified rows exclude the query's own row. Wall time of test/bench/bench_lookup.sh $n: $((SECONDS - start_time)) s.)"
} | tee test/out/bench_lookup.md
