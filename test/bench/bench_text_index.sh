#!/usr/bin/env bash
# test/bench/bench_text_index.sh: the hamming index on a text column (operator
# class simhash_text_ops) on N generated documents (default 1,000,000), side
# by side with a sequential scan, the four half indexes of the 256-bit recipe
# (doc/scale.md) and datasketch's MinHashLSH; the gate (an exclusion
# constraint on simhash_doc); and the index's quality on the public corpus.
#
#   bash test/bench/bench_text_index.sh [N]
#   TEXT_DOCS=docs.tsv TEXT_TRUTH=truth.tsv PGPORT_WANTED=5496 bash test/bench/bench_text_index.sh N
#
# The documents come from test/bench/gen_corpus.py (N x 25/22 + BATCH x 1.1
# documents, or TEXT_DOCS and TEXT_TRUTH made by it before, files the server
# can read).  The table docs (id bigint, body text) holds the first N
# documents that are not planted copies; the batch, the next TEXT_BATCH
# (default 100,000) documents by id, planted copies included.  Steps:
#
# 1. Lookups, the whole statement with the query's fingerprint and the
#    verification, each query run twice in one backend, the second timed:
#      SELECT id FROM docs WHERE simhash_similar(body, $1, 0.8)   (the text index)
#      SELECT id FROM docs WHERE body ~= $1                       (the text index)
#      the same with the text index WITH (probe_tables = off) (on a copy of docs)
#      the same operator by a sequential scan (the first TEXT_SEQ_QUERIES, default 6)
#      the four half indexes at 12, the 256 bits within 49, verified (doc/scale.md,
#      with units 'auto' as the text index: the same fingerprint, the same answers)
#      datasketch MinHashLSH, 128 permutations, threshold 0.8, in Python (not verified)
#    The queries: 200 planted near-copies (every edit rate) of rows of the
#    table, and 100 documents of the batch that are not copies.  The answers
#    of the three indexed forms are compared, and with the sequential scan's.
# 2. CREATE INDEX time (max_parallel_maintenance_workers = 0) and size, with
#    and without probe tables.
# 3. The batch inserted into docs without an index and with the text index,
#    in a transaction rolled back.  The gate: a table of the first
#    TEXT_GATE_ROWS (default 100,000) rows filled under it row by row, then
#    the first TEXT_GATE_BATCH (default 10,000) rows of the batch inserted
#    into it (ON CONFLICT DO NOTHING; then a plain INSERT of the rows it let
#    in), beside the same rows without an index and with the text index,
#    and one lookup in a table of that size.  The gate's cost per row broken
#    down: the fingerprint (shingle_simhash256 over the batch), the index
#    scans (EXPLAIN ANALYZE of a bitmap and a plain scan for TEXT_PROBES =
#    300 rows of the batch, of the gate's index and of the text index on
#    the N rows: the Bitmap Index Scan, the recheck, the candidates), and the
#    verification (shingle_similarity and ~= of 10,000 pairs).  The gate's
#    check costs about one lookup a row: TEXT_GATE_ROWS=1000000
#    TEXT_GATE_BATCH=100000 (a million rows filled under the gate in
#    transactions of 10,000, then 100,000 new documents) adds about half an
#    hour on 2 cores.
# 4. bench_text_index.py quality: simhash_similar(b.body, a.body, 0.8) for
#    every document of each set of the public corpus, precision and recall.
#
# Tables are UNLOGGED.  As root it installs what it needs, as
# test/run-tests.sh does.  Output in test/out/bench_text_index.md.  At a
# million documents: 1.6 GB of text, about 5 GB of disk, 25 minutes on 2 cores
# (the corpus made, 10 minutes of it, and MinHashLSH's index, 10 more).
set -euo pipefail

start_time=$SECONDS
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out
n=${1:-1000000}
batch=${TEXT_BATCH:-100000}
seq_queries=${TEXT_SEQ_QUERIES:-6}
probes=${TEXT_PROBES:-300}
gate_rows=${TEXT_GATE_ROWS:-100000}
gate_batch=${TEXT_GATE_BATCH:-10000}
out=test/out/bench_text_index.md

source test/cluster.sh
source test/deps.sh
prepare_machine cluster
PGPORT_WANTED=${PGPORT_WANTED:-5496} start_cluster "$work/cluster" "shared_buffers = '2GB'" \
	"max_parallel_workers_per_gather = 0" "max_parallel_maintenance_workers = 0" "jit = off" \
	"max_wal_size = '8GB'" "maintenance_work_mem = '1GB'" "autovacuum = off"
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
# numpy for the generator, scipy and xxhash for datasketch
if ! "$py" -c 'import numpy, scipy, xxhash' 2>/dev/null && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 \
		python3-numpy python3-scipy python3-xxhash >/dev/null
fi
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

docs=${TEXT_DOCS:-}
truth=${TEXT_TRUTH:-}
if [ -z "$docs" ]; then
	docs=$work/docs.tsv truth=$work/truth.tsv
	"$py" test/bench/gen_corpus.py $((n * 25 / 22 + batch * 11 / 10)) --truth "$truth" >"$docs"
	[ "$(id -u)" = 0 ] && chmod 644 "$docs" "$truth"
fi

psql -X -q -v ON_ERROR_STOP=1 -v docs="$docs" -v truth="$truth" -v n="$n" -v batch="$batch" <<'EOF'
CREATE EXTENSION simhash;
CREATE TABLE res (k text PRIMARY KEY, v float8);
CREATE UNLOGGED TABLE corpus (id bigint PRIMARY KEY, body text);
COPY corpus FROM :'docs';
CREATE UNLOGGED TABLE truth (a bigint, b bigint, rate text);
COPY truth FROM :'truth';
CREATE UNLOGGED TABLE docs (id bigint, body text);
INSERT INTO docs SELECT id, body FROM corpus c WHERE NOT EXISTS (SELECT FROM truth t WHERE t.b = c.id) ORDER BY id LIMIT :n;
CREATE UNLOGGED TABLE batch AS SELECT id, body FROM corpus WHERE id > (SELECT max(id) FROM docs) ORDER BY id LIMIT :batch;
-- 200 planted copies of rows of the table, then 100 unrelated texts
CREATE TABLE queries AS
SELECT row_number() OVER (ORDER BY kind, o) AS j, kind, id, body FROM (
	(SELECT 'copy' AS kind, md5(c.id::text) AS o, c.id, c.body FROM truth t JOIN corpus c ON c.id = t.b
	 WHERE t.rate <> 'copy-copy' AND t.a <= (SELECT max(id) FROM docs) ORDER BY md5(c.id::text) LIMIT 200)
	UNION ALL
	(SELECT 'unrelated', md5(b.id::text), b.id, b.body FROM batch b
	 WHERE NOT EXISTS (SELECT FROM truth t WHERE t.b = b.id) ORDER BY md5(b.id::text) LIMIT 100)) q;
DROP TABLE corpus;
INSERT INTO res SELECT 'rows', count(*) FROM docs;
INSERT INTO res SELECT 'batch rows', count(*) FROM batch;
INSERT INTO res SELECT 'batch copies', count(*) FROM batch b WHERE EXISTS (SELECT FROM truth t WHERE t.b = b.id);
VACUUM ANALYZE docs, batch, queries;

-- the rows of a query inserted in a transaction rolled back, its time in
-- res, the ids inserted in batch_ok
CREATE TABLE batch_ok (label text, id bigint);
CREATE FUNCTION insert_batch(tab text, label text, clause text DEFAULT 'ON CONFLICT DO NOTHING',
                             src text DEFAULT 'SELECT id, body FROM batch') RETURNS void LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; s float8; ids bigint[];
BEGIN
	BEGIN
		t0 := clock_timestamp();
		EXECUTE format('WITH i AS (INSERT INTO %I %s ORDER BY id %s RETURNING id) SELECT array_agg(id) FROM i', tab, src, clause)
			INTO ids;
		s := extract(epoch FROM clock_timestamp() - t0);
		RAISE EXCEPTION 'roll back';
	EXCEPTION WHEN raise_exception THEN NULL;
	END;
	INSERT INTO res VALUES ('insert ' || label, s), ('inserted ' || label, coalesce(cardinality(ids), 0));
	INSERT INTO batch_ok SELECT label, unnest(ids);
END $$;
SELECT insert_batch('docs', 'no index');
VACUUM docs;

CREATE FUNCTION timed(label text, stmt text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE stmt;
	INSERT INTO res VALUES (label, extract(epoch FROM clock_timestamp() - t0));
END $$;
SELECT timed('create index', 'CREATE INDEX docs_body ON docs USING hamming (body)');
INSERT INTO res VALUES ('index bytes', pg_relation_size('docs_body'));
SELECT hamming_index_check('docs_body');
VACUUM ANALYZE docs;

-- the recipe of four half indexes: the 256 bits as two simhash128 columns
SELECT timed('half fingerprints', $$CREATE UNLOGGED TABLE docs_half AS
	SELECT id, body, f[1] AS fp0, f[2] AS fp1 FROM (SELECT id, body, shingle_simhash256(body, 3, 'auto') AS f FROM docs) s$$);
SELECT timed('half create index', $$
	CREATE INDEX docs_high0 ON docs_half USING hamming (simhash128_high(fp0));
	CREATE INDEX docs_low0 ON docs_half USING hamming (simhash128_low(fp0));
	CREATE INDEX docs_high1 ON docs_half USING hamming (simhash128_high(fp1));
	CREATE INDEX docs_low1 ON docs_half USING hamming (simhash128_low(fp1))$$);
INSERT INTO res SELECT 'half index bytes', sum(pg_relation_size(i)) FROM unnest('{docs_high0,docs_low0,docs_high1,docs_low1}'::regclass[]) i;
VACUUM ANALYZE docs_half;

-- the text index without probe tables (a pass over its entries), on a copy of the rows
CREATE UNLOGGED TABLE docs_flat AS SELECT id, body FROM docs;
SELECT timed('flat create index', 'CREATE INDEX docs_flat_body ON docs_flat USING hamming (body) WITH (probe_tables = off)');
INSERT INTO res VALUES ('flat index bytes', pg_relation_size('docs_flat_body'));
VACUUM ANALYZE docs_flat;
EOF

psql -X -q -v ON_ERROR_STOP=1 -v seq="$seq_queries" <<'EOF' >"$work/plans.txt"
SET bench.seq = :seq;
CREATE FUNCTION lookup(method text, q text, verified bool DEFAULT true) RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE r bigint[];
BEGIN
	IF method = 'function' THEN
		SELECT array_agg(id ORDER BY id) INTO r FROM docs WHERE simhash_similar(body, q, 0.8);
	ELSIF method = 'operator' THEN
		SELECT array_agg(id ORDER BY id) INTO r FROM docs WHERE body ~= q;
	ELSIF method = 'probe tables off' THEN
		SELECT array_agg(id ORDER BY id) INTO r FROM docs_flat WHERE body ~= q;
	ELSE
		WITH s AS MATERIALIZED (SELECT shingle_simhash256(q, 3, 'auto') AS f)
		SELECT array_agg(id ORDER BY id) INTO r FROM docs_half
		WHERE (simhash128_high(fp0) <~> simhash128_high((SELECT f[1] FROM s)) <= 12
			   OR simhash128_low(fp0) <~> simhash128_low((SELECT f[1] FROM s)) <= 12
			   OR simhash128_high(fp1) <~> simhash128_high((SELECT f[2] FROM s)) <= 12
			   OR simhash128_low(fp1) <~> simhash128_low((SELECT f[2] FROM s)) <= 12)
		  AND (fp0 <~> (SELECT f[1] FROM s)) + (fp1 <~> (SELECT f[2] FROM s)) <= 49
		  AND (NOT verified OR shingle_similarity(body, q, 3, 'auto') >= 0.8);
	END IF;
	RETURN coalesce(r, '{}');
END $$;
-- the plans: each indexed form reads its index
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE simhash_similar(body, 'a query', 0.8);
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE body ~= 'a query';
EXPLAIN (COSTS OFF) SELECT id FROM docs_flat WHERE body ~= 'a query';
EXPLAIN (COSTS OFF) WITH s AS MATERIALIZED (SELECT shingle_simhash256('a query', 3, 'auto') AS f)
SELECT id FROM docs_half
WHERE (simhash128_high(fp0) <~> simhash128_high((SELECT f[1] FROM s)) <= 12
	   OR simhash128_low(fp0) <~> simhash128_low((SELECT f[1] FROM s)) <= 12
	   OR simhash128_high(fp1) <~> simhash128_high((SELECT f[2] FROM s)) <= 12
	   OR simhash128_low(fp1) <~> simhash128_low((SELECT f[2] FROM s)) <= 12)
  AND (fp0 <~> (SELECT f[1] FROM s)) + (fp1 <~> (SELECT f[2] FROM s)) <= 49
  AND shingle_similarity(body, 'a query', 3, 'auto') >= 0.8;
CREATE TABLE timing (method text, j bigint, kind text, ms float8, found bigint[], candidates int);
DO $$
DECLARE m text; rec record; t0 timestamptz; ms float8; pass int; v bigint[];
BEGIN
	FOREACH m IN ARRAY ARRAY['function', 'operator', 'probe tables off', 'half indexes'] LOOP
		FOR pass IN 1..2 LOOP
			FOR rec IN SELECT * FROM queries ORDER BY j LOOP
				t0 := clock_timestamp();
				v := lookup(m, rec.body);
				ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
				IF pass = 2 THEN
					INSERT INTO timing VALUES (m, rec.j, rec.kind, ms, v,
						CASE WHEN m = 'half indexes' THEN cardinality(lookup(m, rec.body, false)) END);
				END IF;
			END LOOP;
		END LOOP;
	END LOOP;
END $$;
-- the operator by a sequential scan, the first queries of each kind (planned
-- here: lookup() keeps the plan it made with the index)
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE body ~= 'a query';
DO $$
DECLARE rec record; t0 timestamptz; v bigint[];
BEGIN
	FOR rec IN SELECT * FROM queries WHERE j <= current_setting('bench.seq')::int / 2
			OR j > 200 AND j <= 200 + current_setting('bench.seq')::int / 2 ORDER BY j LOOP
		t0 := clock_timestamp();
		EXECUTE 'SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM docs WHERE body ~= $1' INTO v USING rec.body;
		INSERT INTO timing VALUES ('sequential scan', rec.j, rec.kind, extract(epoch FROM clock_timestamp() - t0) * 1000, v);
	END LOOP;
END $$;
RESET enable_indexscan;
RESET enable_bitmapscan;
-- the batch into the table with the text index (after the lookups: the
-- entries of the rows rolled back stay in the index until a merge)
SELECT insert_batch('docs', 'text index');
VACUUM docs;
EOF
for idx in docs_body docs_body docs_flat_body 'docs_high0\|docs_low0\|docs_high1\|docs_low1'; do
	grep -q "Index Scan .*\($idx\)" "$work/plans.txt" \
		|| { cat "$work/plans.txt"; echo "bench_text_index.sh: a lookup is not planned with its index" >&2; exit 1; }
done
[ "$(grep -c 'Index Scan' "$work/plans.txt")" -ge 7 ] || { cat "$work/plans.txt"; echo "bench_text_index.sh: a lookup is not planned with its index" >&2; exit 1; }
grep -q 'Seq Scan on docs' "$work/plans.txt" || { cat "$work/plans.txt"; echo "bench_text_index.sh: no sequential scan" >&2; exit 1; }

# the gate: a table of the first TEXT_GATE_ROWS rows filled under it, then
# TEXT_GATE_BATCH rows of the batch, beside the same rows without an index
# and with the text index; lookups in that table; the probes of the gate's
# index and of the text index on all N rows, as a bitmap and a plain scan
psql -X -q -v ON_ERROR_STOP=1 -v probes="$probes" -v g="$gate_rows" -v gb="$gate_batch" <<'EOF'
SET bench.probes = :probes;
CREATE UNLOGGED TABLE g_plain AS SELECT id, body FROM docs ORDER BY id LIMIT :g;
CREATE UNLOGGED TABLE g_batch AS SELECT id, body FROM batch ORDER BY id LIMIT :gb;
INSERT INTO res SELECT 'g rows', count(*) FROM g_plain;
INSERT INTO res SELECT 'g batch rows', count(*) FROM g_batch;
INSERT INTO res SELECT 'g batch copies', count(*) FROM g_batch b WHERE EXISTS (SELECT FROM truth t WHERE t.b = b.id);
CREATE UNLOGGED TABLE g_gate (id bigint, body text, EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=));
-- filled as a live table is, in transactions of 10,000 rows: a transaction
-- merges the index at most once, so that one statement of every row would
-- keep them in the tail, which each of its checks reads
CREATE UNLOGGED TABLE g_fill AS SELECT row_number() OVER (ORDER BY id) AS n, id, body FROM g_plain;
CREATE INDEX ON g_fill (n);
CREATE PROCEDURE gate_fill() LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); lo bigint := 0; n bigint := (SELECT count(*) FROM g_fill);
BEGIN
	WHILE lo < n LOOP
		INSERT INTO g_gate SELECT id, body FROM g_fill WHERE g_fill.n > lo AND g_fill.n <= lo + 10000 ORDER BY g_fill.n
			ON CONFLICT DO NOTHING;
		COMMIT;
		lo := lo + 10000;
	END LOOP;
	INSERT INTO res VALUES ('gate fill', extract(epoch FROM clock_timestamp() - t0));
END $$;
CALL gate_fill();
DROP TABLE g_fill;
INSERT INTO res SELECT 'gate rows', count(*) FROM g_gate;
-- the replaced pages of the fill's merge are reused, and so VACUUM merges
-- again, once a transaction ID was given out after it, as any write on a
-- live server does
SELECT txid_current() > 0 AS advanced;
VACUUM ANALYZE g_plain, g_gate, g_batch;
INSERT INTO res SELECT 'gate tail entries before the batch', tail_entries FROM hamming_index_info('g_gate_simhash_doc_excl');
SELECT insert_batch('g_plain', 'g no index', 'ON CONFLICT DO NOTHING', 'SELECT id, body FROM g_batch');
VACUUM g_plain;
SELECT insert_batch('g_gate', 'g gate', 'ON CONFLICT DO NOTHING', 'SELECT id, body FROM g_batch');
VACUUM g_gate;
-- a plain INSERT (one check a row, where ON CONFLICT checks before and after) of the rows the gate let in
SELECT insert_batch('g_gate', 'g gate plain', '', $$SELECT id, body FROM g_batch WHERE id IN (SELECT id FROM batch_ok WHERE label = 'g gate')$$);
VACUUM g_gate;
INSERT INTO res SELECT 'gate index bytes', pg_relation_size(indexrelid) FROM pg_index WHERE indrelid = 'g_gate'::regclass;
-- the batch as a live table takes it, in transactions of 10,000 rows (each
-- may merge the tail, so that it stays short), then deleted again
CREATE UNLOGGED TABLE g_batch_n AS SELECT row_number() OVER (ORDER BY id) AS n, id, body FROM g_batch;
CREATE INDEX ON g_batch_n (n);
CREATE PROCEDURE gate_batch_txn() LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); lo bigint := 0; n bigint := (SELECT count(*) FROM g_batch_n); ins bigint := 0; c bigint;
BEGIN
	WHILE lo < n LOOP
		WITH i AS (INSERT INTO g_gate SELECT id, body FROM g_batch_n WHERE g_batch_n.n > lo AND g_batch_n.n <= lo + 10000
				ORDER BY g_batch_n.n ON CONFLICT DO NOTHING RETURNING 1)
			SELECT count(*) INTO c FROM i;
		ins := ins + c;
		COMMIT;
		lo := lo + 10000;
	END LOOP;
	INSERT INTO res VALUES ('insert g gate txn', extract(epoch FROM clock_timestamp() - t0)), ('inserted g gate txn', ins);
END $$;
CALL gate_batch_txn();
INSERT INTO res SELECT 'inserted g gate txn same', count(*) FROM batch_ok o JOIN g_gate g USING (id) WHERE o.label = 'g gate';
DELETE FROM g_gate WHERE id IN (SELECT id FROM g_batch);
DROP TABLE g_batch_n;
SELECT txid_current() > 0 AS advanced;
VACUUM g_gate;
CREATE INDEX g_body ON g_plain USING hamming (body);
VACUUM ANALYZE g_plain;
SELECT insert_batch('g_plain', 'g text index', 'ON CONFLICT DO NOTHING', 'SELECT id, body FROM g_batch');
VACUUM g_plain;
REINDEX INDEX g_body;
-- lookups in the table of the gate's size, the function form by its text
-- index, of the rows (j, body) of src, each timed the second time
CREATE TABLE g_timing (src text, j bigint, ms float8);
CREATE PROCEDURE g_time(label text, src text) LANGUAGE plpgsql AS $$
DECLARE rec record; t0 timestamptz; pass int; v bigint[];
BEGIN
	FOR pass IN 1..2 LOOP
		FOR rec IN EXECUTE src LOOP
			t0 := clock_timestamp();
			SELECT array_agg(id) INTO v FROM g_plain WHERE simhash_similar(body, rec.body, 0.8);
			IF pass = 2 THEN
				INSERT INTO g_timing VALUES (label, rec.j, extract(epoch FROM clock_timestamp() - t0) * 1000);
			END IF;
		END LOOP;
	END LOOP;
END $$;
CALL g_time('queries', 'SELECT j, body FROM queries ORDER BY j');
INSERT INTO res SELECT 'g lookup median ms', percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM g_timing WHERE src = 'queries';
-- one lookup a row of the batch: a sample of the rows the gate checks,
-- their mean (the gate's cost is a mean over its rows)
CALL g_time('batch', 'SELECT id AS j, body FROM g_batch ORDER BY md5(id::text) LIMIT ' || current_setting('bench.probes'));
INSERT INTO res SELECT 'g lookup of batch rows mean ms', avg(ms) FROM g_timing WHERE src = 'batch';
INSERT INTO res SELECT 'g lookup of batch rows median ms', percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM g_timing WHERE src = 'batch';
-- the cost per row broken down: the fingerprint of each row of the batch
SELECT timed('batch detoast', 'SELECT sum(length(body)) FROM batch');
SELECT timed('batch fingerprint', $$SELECT count(shingle_simhash256(body, 3, 'auto')) FROM batch$$);
-- the probes: EXPLAIN ANALYZE of a bitmap scan (its Bitmap Index Scan
-- computes the key's fingerprint and probes the four quarters; the Bitmap
-- Heap Scan reads and rechecks the candidates) and of a plain index scan
-- (the way the gate's check reads the index) for rows of the batch
CREATE TABLE probe (tab text, id bigint, index_ms float8, total_ms float8, candidates float8, found float8, plain_ms float8);
-- the plan of EXPLAIN ANALYZE q($1 = body) as a bitmap scan, else as a plain index scan
CREATE FUNCTION probe_plan(q text, body text, bitmap bool) RETURNS json LANGUAGE plpgsql AS $$
DECLARE p json; node text := CASE WHEN bitmap THEN 'Bitmap Heap Scan' ELSE 'Index Scan' END;
BEGIN
	PERFORM set_config('enable_indexscan', (NOT bitmap)::text, true);
	PERFORM set_config('enable_bitmapscan', bitmap::text, true);
	EXECUTE q INTO p USING body;
	p := p -> 0 -> 'Plan';
	IF p ->> 'Node Type' <> node THEN
		RAISE EXCEPTION 'the probe is not a %: %', node, p;
	END IF;
	RETURN p;
END $$;
CREATE FUNCTION probe_rows(tab text, cond text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE rec record; p json; q text := format('EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM %I WHERE %s', tab, cond);
BEGIN
	FOR rec IN SELECT id, body FROM batch ORDER BY md5(id::text) LIMIT current_setting('bench.probes')::int LOOP
		p := probe_plan(q, rec.body, true);
		INSERT INTO probe VALUES (tab, rec.id, (p -> 'Plans' -> 0 ->> 'Actual Total Time')::float8, (p ->> 'Actual Total Time')::float8,
			(p ->> 'Actual Rows')::float8 + coalesce((p ->> 'Rows Removed by Index Recheck')::float8, 0),
			(p ->> 'Actual Rows')::float8,
			(probe_plan(q, rec.body, false) ->> 'Actual Total Time')::float8);
	END LOOP;
END $$;
SELECT probe_rows('docs', 'body ~= $1');
SELECT probe_rows('g_gate', 'simhash_doc(body, 0.8) ~= simhash_doc($1, 0.8)');
INSERT INTO res SELECT 'probe index ms ' || tab, avg(index_ms) FROM probe GROUP BY tab;
INSERT INTO res SELECT 'probe total ms ' || tab, avg(total_ms) FROM probe GROUP BY tab;
INSERT INTO res SELECT 'probe plain ms ' || tab, avg(plain_ms) FROM probe GROUP BY tab;
INSERT INTO res SELECT 'probe candidates ' || tab, avg(candidates) FROM probe GROUP BY tab;
-- the verification: shingle_similarity of 10,000 pairs (a row of the batch, a row of the table)
CREATE TEMP TABLE pairs AS SELECT b.body AS a, d.body AS b FROM (SELECT row_number() OVER (ORDER BY id) AS r, body FROM batch) b
	JOIN (SELECT row_number() OVER (ORDER BY id) AS r, body FROM docs) d USING (r) WHERE r <= 10000;
INSERT INTO res SELECT 'pairs', count(*) FROM pairs;
SELECT timed('pairs detoast', 'SELECT sum(length(a) + length(b)) FROM pairs');
SELECT timed('pairs similarity', $$SELECT sum(shingle_similarity(a, b, 3, 'auto')) FROM pairs$$);
SELECT timed('pairs operator', $$SELECT count(*) FROM pairs WHERE a ~= b$$);
EOF

# datasketch's MinHashLSH on the same rows and queries
chmod 777 "$work"
psql -X -q -v ON_ERROR_STOP=1 -v t="$work/table.tsv" -v q="$work/queries.tsv" \
	-c "COPY docs TO '$work/table.tsv'" -c "COPY (SELECT j, kind, body FROM queries ORDER BY j) TO '$work/queries.tsv'"
PYTHONPATH=${PYTHONPATH:-$root/../shared/vendor/datasketch} "$py" test/bench/bench_text_index.py lsh "$work/table.tsv" "$work/queries.tsv" >"$work/lsh.txt"
rm -f "$work/table.tsv"

# the quality on the public corpus
"$py" test/bench/bench_text_index.py quality >"$work/quality.md"

psql -X -q -At -F $'\t' -v ON_ERROR_STOP=1 <<'EOF' >"$work/result.txt"
SELECT 'RES', k, v FROM res;
SELECT 'LOOKUP', method, kind, count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),
	   percentile_cont(0.9) WITHIN GROUP (ORDER BY ms), avg(cardinality(found)), avg(candidates)
FROM timing GROUP BY ROLLUP (method, kind) HAVING method IS NOT NULL ORDER BY method, kind;
-- the answers of each form equal the function's
SELECT 'SAME', t.method, count(*), count(*) FILTER (WHERE t.found = f.found)
FROM timing t JOIN timing f ON f.j = t.j AND f.method = 'function' WHERE t.method <> 'function' GROUP BY t.method;
-- the planted copies: their original found, among those of shingle similarity >= 0.8
SELECT 'PLANTED', tr.rate, count(*), count(*) FILTER (WHERE shingle_similarity(d.body, q.body, 3, 'auto') >= 0.8),
	   count(*) FILTER (WHERE tr.a = ANY (t.found)),
	   count(*) FILTER (WHERE tr.a = ANY (t.found) AND shingle_similarity(d.body, q.body, 3, 'auto') >= 0.8)
FROM timing t JOIN queries q USING (j) JOIN truth tr ON tr.b = q.id AND tr.rate <> 'copy-copy' JOIN docs d ON d.id = tr.a
WHERE t.method = 'function' GROUP BY tr.rate ORDER BY tr.rate;
EOF

"$py" test/bench/bench_text_index.py report "$work/result.txt" "$work/lsh.txt" "$work/quality.md" \
	--n "$n" --load-start "$load_start" --load-end "$(cut -d' ' -f1-3 /proc/loadavg)" \
	--seconds $((SECONDS - start_time)) --probes "$probes" | tee "$out"
