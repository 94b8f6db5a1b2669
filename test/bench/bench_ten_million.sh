#!/usr/bin/env bash
# test/bench/bench_ten_million.sh: the whole table and a lookup at ten
# million documents (or N), with two parallel workers: one call of
# simhash_mark_duplicates, then CREATE INDEX on the text column and 300
# lookups through it.
#
#   MARK_DOCS=docs.tsv bash test/bench/bench_ten_million.sh [N]
#
# MARK_DOCS is a file of id <TAB> body that the server can read, N lines
# (default 10,000,000), such as the two corpora of doc/scale.md
# ("Reproducing") put together; without it, test/bench/gen_corpus.py N
# --seed 1 makes one (slowly: one process).  The table docs (id bigint
# PRIMARY KEY, body text, dup bigint) holds them.  Steps, each timed:
#
# 1. SELECT simhash_mark_duplicates('docs', 'body', 'dup') with
#    max_parallel_workers_per_gather = 2 and maintenance_work_mem = 4GB,
#    its DEBUG lines (fingerprints, bands, verification, marks) kept;
# 2. CREATE INDEX ON docs USING hamming (body) with
#    max_parallel_maintenance_workers = 2, and its size;
# 3. SELECT array_agg(id) FROM docs WHERE body ~= $1 for 200 rows of the
#    table (every row whose id is 7 modulo 1,000, in md5 order) and 100
#    documents of gen_corpus.py 100 --seed 99 (not in the table), each run
#    twice in one backend, the second timed, after pg_prewarm of the index:
#    median and 90th percentile.
#
# shared_buffers is a quarter of the machine's memory.
#
# As root it installs what it needs, as test/run-tests.sh does.  Output in
# test/out/bench_ten_million.md.  At ten million documents: 12.5 GB of text,
# about 25 GB of disk and 40 minutes on 2 cores.
set -euo pipefail

cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
source test/bench/mark_common.sh "${1:-10000000}"
out=test/out/bench_ten_million.md
# shared_buffers a quarter of the memory, the usual advice (huge pages when
# the kernel has some: vm.nr_hugepages)
mark_start 5497 "max_worker_processes = 8" "max_parallel_workers = 8" \
	"shared_buffers = '$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 4))kB'"
$py test/bench/gen_corpus.py 100 --seed 99 >"$work/unrelated.tsv"
[ "$(id -u)" = 0 ] && chmod 644 "$work/unrelated.tsv" && chmod 755 "$work"

psql -X -q -v ON_ERROR_STOP=1 -v docs="$docs" -v unrelated="$work/unrelated.tsv" <<'EOF'
CREATE EXTENSION simhash;
CREATE UNLOGGED TABLE docs (id bigint PRIMARY KEY, body text, dup bigint);
COPY docs (id, body) FROM :'docs';
VACUUM ANALYZE docs;
CREATE TABLE unrelated (id bigint, body text);
COPY unrelated FROM :'unrelated';
EOF
{
	mark_header "The whole table and a lookup in $n generated documents, with two parallel workers" \
		"| step | seconds | what it reported |" "|---|---:|---|"
} >"$out"

t0=$(date +%s.%N)
PGOPTIONS="-c max_parallel_workers_per_gather=2 -c maintenance_work_mem=4GB -c client_min_messages=debug1" \
	psql -X -At -c "SELECT simhash_mark_duplicates('docs', 'body', 'dup')" >"$work/marked" 2>"$work/debug"
s=$(echo "$(date +%s.%N) - $t0" | bc)
cp "$work/debug" test/out/bench_ten_million.debug
printf '| simhash_mark_duplicates | %.1f | %s rows marked; %s |\n' "$s" "$(cat "$work/marked")" \
	"$(grep -o 'simhash_[a-z_]*: .*' "$work/debug" | paste -sd ';' | sed 's/|/\\|/g')" >>"$out"

t0=$(date +%s.%N)
PGOPTIONS="-c max_parallel_maintenance_workers=2 -c maintenance_work_mem=4GB -c client_min_messages=debug1" \
	psql -X -q -c "CREATE INDEX docs_body ON docs USING hamming (body)" 2>"$work/debug"
s=$(echo "$(date +%s.%N) - $t0" | bc)
printf '| CREATE INDEX ON docs USING hamming (body) | %.1f | %s bytes, %s bytes a row; %s |\n' "$s" \
	"$(psql -X -At -c "SELECT pg_relation_size('docs_body')")" \
	"$(psql -X -At -c "SELECT round(pg_relation_size('docs_body')::numeric / count(*), 1) FROM docs")" \
	"$(grep -o 'building hamming index.*' "$work/debug" | head -1)" >>"$out"

psql -X -q -v ON_ERROR_STOP=1 <<'EOF' >>"$out"
VACUUM ANALYZE docs;
CREATE EXTENSION pg_prewarm;
SELECT pg_prewarm('docs_body') > 0 AS index_read;
CREATE TABLE queries AS
SELECT row_number() OVER (ORDER BY kind, o) AS j, kind, body FROM (
	(SELECT 'row of the table' AS kind, md5(id::text) AS o, body FROM docs WHERE id % 1000 = 7 ORDER BY md5(id::text) LIMIT 200)
	UNION ALL
	(SELECT 'not in the table', md5(id::text), body FROM unrelated)) s;
CREATE TABLE timing (j bigint, kind text, ms float8, found int);
DO $$
DECLARE rec record; t0 timestamptz; ms float8; pass int; v bigint[];
BEGIN
	FOR pass IN 1..2 LOOP
		FOR rec IN SELECT * FROM queries ORDER BY j LOOP
			t0 := clock_timestamp();
			EXECUTE 'SELECT array_agg(id) FROM docs WHERE body ~= $1' INTO v USING rec.body;
			ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
			IF pass = 2 THEN
				INSERT INTO timing VALUES (rec.j, rec.kind, ms, coalesce(cardinality(v), 0));
			END IF;
		END LOOP;
	END LOOP;
END $$;
\echo
\echo | lookups, body ~= $1 | queries | median ms | 90th percentile ms | rows found / query |
\echo |---|---:|---:|---:|---:|
\pset format unaligned
\pset tuples_only on
\pset fieldsep ' | '
SELECT '| ' || coalesce(kind, 'all'), count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms)::numeric, 2), round(avg(found), 2) || ' |'
FROM timing GROUP BY ROLLUP (kind) ORDER BY kind NULLS LAST;
EOF
echo >>"$out"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)." >>"$out"
cat "$out"
