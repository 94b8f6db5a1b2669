-- The hamming access method: exact radius search for every k (0..64) and
-- nearest first, checked against sequential scans on the same data, through
-- every kind of change.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
CREATE SCHEMA hamming_test;
RESET client_min_messages;
SET search_path = hamming_test, public;
SELECT setseed(0.7);

-- uniformly random 64-bit fingerprints
CREATE FUNCTION random_simhash() RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash $$;
-- fp with exactly d distinct random bits flipped
CREATE FUNCTION flip_bits(fp simhash, d int) RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << b) FROM
     (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT d) s), 0))::simhash $$;
-- the distance computed without the extension's operators
CREATE FUNCTION plain_distance(a simhash, b simhash) RETURNS int LANGUAGE sql IMMUTABLE AS
$$ SELECT bit_count((a::bigint # b::bigint)::bit(64))::int $$;
-- a plan without what differs between PostgreSQL versions: 18's "Disabled"
-- marks on the nodes an enable_* setting disfavours, and (docs_only) every
-- node but the scans of docs with their conditions (17 groups and joins the
-- rest of a query in another order)
CREATE FUNCTION plan_of(query text, docs_only bool DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  on_docs bool := false;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    CONTINUE WHEN line ~ '^\s*Disabled: true$';
    IF NOT docs_only THEN
      RETURN NEXT line;
    ELSE
      -- a node (not one of its "Key: value" lines) starts or ends a scan of docs
      IF line ~ '^\s*->' OR line !~ '^\s*[A-Z][A-Za-z ]*: ' THEN
        on_docs := line ~ ' on docs(_fp)?( |$)';
      END IF;
      IF on_docs THEN
        RETURN NEXT regexp_replace(line, '^\s*(->\s*)?', '');
      END IF;
    END IF;
  END LOOP;
END $$;

-- (no autovacuum on the tables whose merges are counted)
CREATE TABLE docs (id int PRIMARY KEY, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO docs SELECT i, random_simhash() FROM generate_series(1, 5000) i;
-- 20 centers, each with two planted neighbours at every distance 0..16
CREATE TABLE centers AS SELECT j, random_simhash() AS fp FROM generate_series(1, 20) j;
INSERT INTO docs SELECT 100000 + j * 1000 + copy * 100 + d, flip_bits(c.fp, d)
FROM centers c, generate_series(0, 16) d, generate_series(0, 1) copy;
-- rows without a fingerprint
INSERT INTO docs SELECT 900000 + i, NULL FROM generate_series(1, 7) i;
SELECT count(*) = 20 * 17 * 2 AS planted_at_exact_distances FROM docs d JOIN centers c
  ON d.id / 1000 = 100 + c.j AND plain_distance(d.fp, c.fp) = d.id % 100;
CREATE INDEX docs_fp ON docs USING hamming (fp);
ANALYZE docs;

-- every query shape can use the index
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' <= 12;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' < 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' = 2;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 40 >= '0123456789abcdef' <~> fp;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE simhash_within(fp, '0123456789abcdef', 3);
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE simhash_ball('0123456789abcdef', 3) @> fp;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp % '0123456789abcdef';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp = '0123456789abcdef';
EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY fp <~> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' <= 20
  ORDER BY fp <~> '0123456789abcdef' LIMIT 10;
-- the inner side of a join
SELECT plan_of($$SELECT c.j, d.id FROM centers c JOIN docs d ON c.fp <~> d.fp <= 9$$);
-- prepared statements: k as a parameter, generic plans
SET plan_cache_mode = force_generic_plan;
PREPARE near(simhash, int) AS SELECT id FROM docs WHERE fp <~> $1 <= $2 ORDER BY id;
EXPLAIN (COSTS OFF) EXECUTE near('0123456789abcdef', 3);
PREPARE nearest(simhash, int) AS SELECT id FROM docs ORDER BY fp <~> $1 LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE nearest('0123456789abcdef', 3);
RESET plan_cache_mode;
RESET enable_seqscan;

-- exactness: the index (as a bitmap scan and as a plain index scan, forced)
-- returns the sequential scan's rows for every k in 0..64: k = 0..24 around
-- every center, every larger k (where rows match by the thousand) around one.
-- Answers are compared per (shape, k, center) by count and a checksum of ids.
CREATE TABLE radii AS SELECT j, k FROM centers, generate_series(0, 64) k WHERE k <= 24 OR j = 1;
-- the index answer, with whatever scans the settings allow
CREATE FUNCTION radius_answer() RETURNS TABLE (shape text, k int, j int, n bigint, checksum bigint)
LANGUAGE sql STABLE AS $$
  SELECT 'le', k, c.j, count(*), sum(hashint4(d.id))
  FROM radii r JOIN centers c USING (j), docs d WHERE d.fp <~> c.fp <= k GROUP BY 1, 2, 3
  UNION ALL SELECT 'eq', k, c.j, count(*), sum(hashint4(d.id))
  FROM radii r JOIN centers c USING (j), docs d WHERE k <= 24 AND d.fp <~> c.fp = k GROUP BY 1, 2, 3 $$;
CREATE FUNCTION compare_radius(label text) RETURNS TABLE (check_name text, index_rows numeric, mismatches bigint)
LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off;
  CREATE TEMP TABLE bitmap_answer AS SELECT * FROM radius_answer();
  SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = off;
  CREATE TEMP TABLE index_answer AS SELECT * FROM radius_answer();
  SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
  CREATE TEMP TABLE seq_answer AS
    WITH dist AS (SELECT c.j, d.id, plain_distance(d.fp, c.fp) AS dist FROM centers c, docs d WHERE d.fp IS NOT NULL)
    SELECT 'le' AS shape, k, j, count(*) AS n, sum(hashint4(id)) AS checksum
    FROM dist JOIN radii USING (j) WHERE dist <= k GROUP BY 1, 2, 3
    UNION ALL SELECT 'eq', k, j, count(*), sum(hashint4(id))
    FROM dist JOIN radii USING (j) WHERE k <= 24 AND dist = k GROUP BY 1, 2, 3;
  RETURN QUERY SELECT label || ', bitmap scan', (SELECT sum(n) FROM bitmap_answer),
    (SELECT count(*) FROM ((SELECT * FROM bitmap_answer EXCEPT ALL SELECT * FROM seq_answer)
                           UNION ALL (SELECT * FROM seq_answer EXCEPT ALL SELECT * FROM bitmap_answer)) x);
  RETURN QUERY SELECT label || ', index scan', (SELECT sum(n) FROM index_answer),
    (SELECT count(*) FROM ((SELECT * FROM index_answer EXCEPT ALL SELECT * FROM seq_answer)
                           UNION ALL (SELECT * FROM seq_answer EXCEPT ALL SELECT * FROM index_answer)) x);
  DROP TABLE bitmap_answer, index_answer, seq_answer;
END $$;

-- nearest first: the first n rows of the index scan are the first n rows of
-- the sequential scan sorted by distance, ties in heap order (ctid)
CREATE FUNCTION compare_nearest(n int) RETURNS TABLE (first_rows int, queries bigint, mismatches bigint)
LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off;
  CREATE TEMP TABLE knn_idx AS SELECT c.j, x.rank, x.id, x.d FROM centers c, LATERAL (
    SELECT row_number() OVER () AS rank, id, d FROM (SELECT id, fp <~> c.fp AS d FROM docs ORDER BY fp <~> c.fp LIMIT n) s) x;
  SET LOCAL enable_seqscan = on; SET LOCAL enable_sort = on; SET LOCAL enable_indexscan = off;
  CREATE TEMP TABLE knn_seq AS SELECT c.j, x.rank, x.id, x.d FROM centers c, LATERAL (
    SELECT row_number() OVER () AS rank, id, d FROM (SELECT id, plain_distance(fp, c.fp) AS d FROM docs
      ORDER BY 2 NULLS LAST, ctid LIMIT n) s) x;
  -- the distances rank by rank, and the rows at each distance but the last
  -- (whose ties the LIMIT cuts); rows of the same distance come in the order of
  -- the TIDs that the index holds, the heap order of a row's first version
  -- (an updated row's ctid can differ), so ranks of rows are not compared
  RETURN QUERY SELECT n, (SELECT count(DISTINCT j) FROM knn_idx),
    (SELECT count(*) FROM ((SELECT j, rank, d FROM knn_idx EXCEPT ALL SELECT j, rank, d FROM knn_seq)
                           UNION ALL (SELECT j, rank, d FROM knn_seq EXCEPT ALL SELECT j, rank, d FROM knn_idx)) x) +
    (SELECT count(*) FROM ((SELECT j, id, d FROM knn_idx EXCEPT ALL SELECT j, id, d FROM knn_seq)
                           UNION ALL (SELECT j, id, d FROM knn_seq EXCEPT ALL SELECT j, id, d FROM knn_idx)) x
     WHERE d IS NULL OR d < (SELECT max(d) FROM knn_seq s WHERE s.j = x.j)
        OR (SELECT count(*) FROM knn_seq s WHERE s.j = x.j) < n);
  DROP TABLE knn_idx, knn_seq;
END $$;

-- the forced plans of the index answer (the function is inlined): its scans of docs
SET enable_seqscan = off; SET enable_indexscan = off;
SELECT plan_of('SELECT * FROM radius_answer()', docs_only => true);
SET enable_indexscan = on; SET enable_bitmapscan = off;
SELECT plan_of('SELECT * FROM radius_answer()', docs_only => true);
RESET enable_seqscan; RESET enable_indexscan; RESET enable_bitmapscan;
SELECT * FROM compare_radius('fresh index');
-- 600 and 700 cross the first batch of an ordered scan (one page, 582 rows);
-- 6000 is more than the table: every row, the NULL fingerprints last
SELECT * FROM compare_nearest(1);
SELECT * FROM compare_nearest(10);
SELECT * FROM compare_nearest(100);
SELECT * FROM compare_nearest(700);
SELECT * FROM compare_nearest(6000);
-- the planted neighbours come first, in order of distance
SELECT array_agg(d ORDER BY n) AS nearest_distances FROM (
  SELECT d, row_number() OVER () AS n FROM (SELECT fp <~> (SELECT fp FROM centers WHERE j = 5) AS d FROM docs
  ORDER BY fp <~> (SELECT fp FROM centers WHERE j = 5) LIMIT 20) s) x;
-- a radius condition and an ordering together, and two conditions at once
SET enable_seqscan = off;
SELECT array_agg(id ORDER BY n) = (SELECT array_agg(id ORDER BY plain_distance(fp, c.fp), ctid) FROM docs
                                   WHERE plain_distance(fp, c.fp) BETWEEN 0 AND 5) AS ordered_within_5
FROM centers c, LATERAL (SELECT id, row_number() OVER () AS n FROM (
  SELECT id FROM docs WHERE fp <~> c.fp <= 5 ORDER BY fp <~> c.fp) s) x
WHERE c.j = 3 GROUP BY c.fp;
-- a condition around one center and an ordering around another point (a
-- planted row 6 bits from it): the ordering's rings of probes, filtered by
-- the condition, give the sequential scan's rows in its order
SELECT fp AS q3 FROM centers WHERE j = 3 \gset
SELECT fp AS p3 FROM docs WHERE id = 103006 \gset
SELECT array_agg(id ORDER BY n) AS condition_and_ordering,
       array_agg(id ORDER BY n) = (SELECT array_agg(id ORDER BY n) FROM (
         SELECT id, row_number() OVER (ORDER BY plain_distance(fp, :'p3'), ctid) AS n FROM docs
         WHERE plain_distance(fp, :'q3') <= 8 ORDER BY plain_distance(fp, :'p3'), ctid LIMIT 12) s) AS exact
FROM (SELECT id, row_number() OVER () AS n FROM (
  SELECT id FROM docs WHERE fp <~> :'q3' <= 8 ORDER BY fp <~> :'p3' LIMIT 12) s) x;
SELECT count(*) AS both_conditions,
       count(*) = (SELECT count(*) FROM docs d, centers a, centers b WHERE a.j = 1 AND b.j = 2
                   AND plain_distance(d.fp, a.fp) <= 30 AND plain_distance(d.fp, b.fp) <= 30) AS exact
FROM docs d, centers a, centers b WHERE a.j = 1 AND b.j = 2 AND d.fp <~> a.fp <= 30 AND d.fp <~> b.fp <= 30;
-- two orderings: rows at the same first distance come in order of the
-- second (the index orders by the first only and has the executor sort ties)
SELECT fp AS q1 FROM centers WHERE j = 1 \gset
SELECT fp AS q2 FROM centers WHERE j = 2 \gset
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY fp <~> :'q1', fp <~> :'q2' LIMIT 300;
CREATE TEMP TABLE two_orders AS SELECT row_number() OVER () AS n, id, d1, d2 FROM (
  SELECT id, (fp <~> :'q1')::int AS d1, (fp <~> :'q2')::int AS d2 FROM docs ORDER BY fp <~> :'q1', fp <~> :'q2' LIMIT 300) s;
RESET enable_sort;
SELECT count(*) AS rows, count(*) FILTER (WHERE (t.d1, t.d2) > (u.d1, u.d2)) AS out_of_order,
       array_agg(ROW(t.d1, t.d2) ORDER BY t.n) = (SELECT array_agg(ROW(d1, d2) ORDER BY d1, d2) FROM (
         SELECT plain_distance(fp, :'q1') AS d1, plain_distance(fp, :'q2') AS d2 FROM docs
         ORDER BY 1 NULLS LAST, 2 NULLS LAST LIMIT 300) s) AS same_distances
FROM two_orders t LEFT JOIN two_orders u ON u.n = t.n + 1;
DROP TABLE two_orders;
-- the % operator reads simhash.max_distance; = is a radius of 0
SET simhash.max_distance = 4;
SELECT count(*) AS similar_within_4 FROM docs d, centers c WHERE c.j = 4 AND d.fp % c.fp;
RESET simhash.max_distance;
SELECT count(*) AS equal_to_center FROM docs d, centers c WHERE c.j = 4 AND d.fp = c.fp;
-- a negative radius matches nothing, a huge one every fingerprint
SELECT count(*) AS negative_k FROM docs WHERE fp <~> '0123456789abcdef' <= -1;
SELECT count(*) = (SELECT count(fp) FROM docs) AS huge_k_every_fingerprint FROM docs WHERE fp <~> '0123456789abcdef' <= 1000;
SELECT count(*) AS null_center FROM docs WHERE fp <@ simhash_ball(NULL, 3);
-- prepared statements with k as a parameter
SET plan_cache_mode = force_generic_plan;
SELECT fp AS q7 FROM centers WHERE j = 7 \gset
EXECUTE near(:'q7', 3);
EXECUTE nearest(:'q7', 5);
RESET plan_cache_mode;
RESET enable_seqscan;
-- a join with the index on the inner side equals the sequential answer
SET enable_seqscan = off;
CREATE TEMP TABLE join_idx AS SELECT c.j, d.id FROM centers c JOIN docs d ON c.fp <~> d.fp <= 9;
RESET enable_seqscan;
SELECT count(*) AS join_rows, count(*) = (SELECT count(*) FROM centers c JOIN docs d ON plain_distance(c.fp, d.fp) <= 9)
  AND NOT EXISTS (SELECT j, id FROM join_idx EXCEPT SELECT c.j, d.id FROM centers c JOIN docs d ON plain_distance(c.fp, d.fp) <= 9) AS exact
FROM join_idx;

-- after inserts (NULLs too), updates and deletes
INSERT INTO docs SELECT 200000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 8) d;
INSERT INTO docs SELECT 910000 + i, NULL FROM generate_series(1, 3) i;
UPDATE docs SET fp = flip_bits(fp, 1) WHERE id % 7 = 0;
UPDATE docs SET fp = random_simhash() WHERE id % 13 = 0;
DELETE FROM docs WHERE id % 11 = 0;
SELECT * FROM compare_radius('after insert, update, delete');
SELECT * FROM compare_nearest(50);
VACUUM docs;
SELECT * FROM compare_radius('after vacuum');
SELECT * FROM compare_nearest(6000);
-- space is used again: a merge (VACUUM merged the tail above) writes its
-- tables on the pages that the merge before it replaced, once no snapshot
-- can read them; so rounds of deleting 3,000 rows, inserting as many (more
-- than the 4 pages of tail that VACUUM merges) and VACUUM do not grow the
-- index after the first two
SELECT merges AS merges_before FROM hamming_index_info('docs_fp') \gset
SELECT 3000 AS churn_rows \gset
CREATE FUNCTION pg_temp.churn(round int, n bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM docs WHERE id IN (SELECT id FROM docs WHERE fp IS NOT NULL ORDER BY id DESC LIMIT n);
	INSERT INTO docs SELECT 300000 + round * 100000 + i, random_simhash() FROM generate_series(1, n) i;
END $$;
SELECT pg_temp.churn(1, :churn_rows);
VACUUM docs;
SELECT pg_temp.churn(2, :churn_rows);
VACUUM docs;
SELECT pg_relation_size('docs_fp') AS size_after_two \gset
SELECT pg_temp.churn(3, :churn_rows);
VACUUM docs;
SELECT pg_temp.churn(4, :churn_rows);
VACUUM docs;
SELECT pg_temp.churn(5, :churn_rows);
VACUUM docs;
SELECT pg_relation_size('docs_fp') <= :size_after_two AS space_reused,
       merges - :merges_before AS merges, tail_entries, merge_in_progress
FROM hamming_index_info('docs_fp');
SELECT * FROM compare_radius('after rounds of deletes, inserts and merges');
SELECT * FROM compare_nearest(200);
-- rows of the probe tables that VACUUM removed leave tombstones until the
-- next merge or REINDEX (too few rows were inserted since for VACUUM to merge)
DELETE FROM docs WHERE id <= 4000;
VACUUM docs;
SELECT * FROM compare_radius('with tombstones');
SELECT pg_relation_size('docs_fp') AS size_before \gset
REINDEX INDEX docs_fp;
SELECT pg_relation_size('docs_fp') < :size_before AS reindex_shrinks;
SELECT * FROM compare_radius('after reindex');
REINDEX INDEX CONCURRENTLY docs_fp;
SELECT * FROM compare_radius('after reindex concurrently');
SELECT * FROM compare_nearest(700);

-- an unlogged table's index starts empty and works
CREATE UNLOGGED TABLE scratch (fp simhash);
CREATE INDEX scratch_fp ON scratch USING hamming (fp);
INSERT INTO scratch SELECT fp FROM centers;
SET enable_seqscan = off;
SELECT count(*) AS unlogged_exact_matches FROM scratch s, centers c WHERE s.fp <~> c.fp <= 0;
-- a count needs no condition and no column: a bitmap scan or an index-only
-- scan over every entry, NULLs too
INSERT INTO scratch VALUES (NULL), (NULL);
EXPLAIN (COSTS OFF) SELECT count(*) FROM scratch;
SELECT count(*) AS bitmap_count FROM scratch;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM scratch;
SELECT count(*) AS index_only_count FROM scratch;
RESET enable_bitmapscan;
RESET enable_seqscan;

-- on a table of a realistic size, the planner picks the index by itself for
-- small and medium radii, and a sequential scan when most rows match
CREATE TABLE big (id int, fp simhash);
INSERT INTO big SELECT i, random_simhash() FROM generate_series(1, 100000) i;
CREATE INDEX big_fp ON big USING hamming (fp);
ANALYZE big;
EXPLAIN (COSTS OFF) SELECT id FROM big WHERE fp <~> '0123456789abcdef' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM big WHERE fp <~> '0123456789abcdef' <= 12;
EXPLAIN (COSTS OFF) SELECT id FROM big ORDER BY fp <~> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM big WHERE fp <~> '0123456789abcdef' <= 40;
-- beside a GIN index, this index still serves every radius: its probes
-- beat GIN's
CREATE INDEX big_fp_gin ON big USING gin (fp);
EXPLAIN (COSTS OFF) SELECT id FROM big WHERE fp <~> '0123456789abcdef' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM big WHERE fp <~> '0123456789abcdef' <= 9;
DROP INDEX big_fp_gin;

-- an index whose entries outgrow maintenance_work_mem (1MB: a load of about
-- 43,000 rows) is sorted in runs on temporary files, merged as they are read
-- back: the same probe tables as with memory enough, the same answers
DROP INDEX big_fp;
CREATE INDEX big_fp_memory ON big USING hamming (fp);
SET maintenance_work_mem = '1MB';
CREATE INDEX big_fp_runs ON big USING hamming (fp);
RESET maintenance_work_mem;
SELECT probe_tables, table_entries = 100000 AS every_row_in_tables, tail_entries = 0 AS no_tail,
       pg_relation_size('big_fp_runs') = pg_relation_size('big_fp_memory') AS same_size
FROM hamming_index_info('big_fp_runs');
SELECT 'passed' AS check_built_in_runs FROM hamming_index_check('big_fp_runs');
DROP INDEX big_fp_memory;
SELECT fp AS big_q FROM big WHERE id = 77 \gset
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM big WHERE fp <~> :'big_q' <= 20;
SELECT count(*) AS index_rows_within_20 FROM big WHERE fp <~> :'big_q' <= 20;
SELECT (SELECT array_agg((fp <~> :'big_q')::int) FROM (SELECT fp FROM big ORDER BY fp <~> :'big_q' LIMIT 30) s) =
       (SELECT array_agg(d) FROM (SELECT plain_distance(fp, :'big_q') AS d FROM big ORDER BY 1 LIMIT 30) s) AS nearest_30_equal;
RESET enable_seqscan;
SELECT count(*) AS seq_rows_within_20 FROM big WHERE plain_distance(fp, :'big_q') <= 20;
-- WITH (probe_tables = off) builds a pass-only index on purpose: 14 bytes
-- a row instead of 38, the same answers
DROP INDEX big_fp_runs;
CREATE INDEX big_fp_small ON big USING hamming (fp) WITH (probe_tables = off);
SELECT pg_relation_size('big_fp_small') / 100000.0 BETWEEN 14 AND 15 AS fourteen_bytes_a_row;
SET enable_seqscan = off;
SELECT count(*) AS index_rows_within_20 FROM big WHERE fp <~> :'big_q' <= 20;
RESET enable_seqscan;
ALTER INDEX big_fp_small SET (probe_tables = on);
REINDEX INDEX big_fp_small;
SELECT pg_relation_size('big_fp_small') / 100000.0 BETWEEN 38 AND 45 AS probe_tables_after_reindex;
SET enable_seqscan = off;
SELECT count(*) AS index_rows_within_20 FROM big WHERE fp <~> :'big_q' <= 20;
RESET enable_seqscan;
-- an ordered scan's batches grow up to work_mem, then stay: for all 100,000
-- rows the planner charges more passes at 64kB (batches of 4,096 rows) than
-- at 4MB (up to 262,144)
CREATE FUNCTION ordered_cost() RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) SELECT id FROM big ORDER BY fp <~> ''0123456789abcdef''' INTO plan;
  IF plan->0->'Plan'->>'Node Type' <> 'Index Scan' THEN RAISE 'not an index scan: %', plan; END IF;
  RETURN (plan->0->'Plan'->>'Total Cost')::float8;
END $$;
SET enable_seqscan = off; SET enable_sort = off;
SET work_mem = '4MB';
SELECT ordered_cost() AS cost_4mb \gset
SET work_mem = '64kB';
SELECT ordered_cost() > 1.5 * :cost_4mb AS passes_follow_work_mem;
RESET work_mem; RESET enable_seqscan; RESET enable_sort;

-- an exclusion constraint with % rejects near-copies (within the session's
-- simhash.max_distance)
CREATE TABLE distinct_docs (id int, fp simhash, EXCLUDE USING hamming (fp WITH %));
SET simhash.max_distance = 3;
INSERT INTO distinct_docs VALUES (1, '0123456789abcdef'), (2, 'fedcba9876543210');
INSERT INTO distinct_docs VALUES (3, '0123456789abcdec');
INSERT INTO distinct_docs VALUES (4, '0123456789abcd00');
RESET simhash.max_distance;
SELECT id FROM distinct_docs ORDER BY id;

-- small and degenerate tables, each checked against a sequential scan: the
-- index's rows within k of q for each k of ks (index scan and bitmap scan,
-- by count and checksum), and its whole nearest-first order (row by row:
-- ties come in heap order, which is ctid order in these fresh tables)
CREATE FUNCTION crosscheck(tab regclass, q simhash, ks int[], OUT radius_mismatches bigint,
                           OUT order_mismatches bigint, OUT ordered_rows bigint)
LANGUAGE plpgsql AS $$
DECLARE
  radius text := format('SELECT k, x.* FROM unnest($1) k, LATERAL (SELECT count(*) AS n, sum(hashint4(id)) AS s
                         FROM %s WHERE fp <~> $2 <= k) x', tab);
  nearest text := format('SELECT row_number() OVER () AS r, id FROM (SELECT id FROM %s ORDER BY fp <~> $2) s', tab);
  plan text;
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off;
  EXECUTE 'CREATE TEMP TABLE cc_idx AS SELECT ''index'' AS scan, * FROM (' || radius || ') a' USING ks, q;
  EXECUTE 'CREATE TEMP TABLE cc_order AS ' || nearest USING ks, q;
  FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || radius USING ks, q LOOP
    IF plan LIKE '%Seq Scan%' OR plan LIKE '%Bitmap%' THEN RAISE 'not an index scan: %', plan; END IF;
  END LOOP;
  FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || nearest USING ks, q LOOP
    IF plan LIKE '%Seq Scan%' OR plan LIKE '%Sort%' THEN RAISE 'not an ordered index scan: %', plan; END IF;
  END LOOP;
  SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = on;
  EXECUTE 'INSERT INTO cc_idx SELECT ''bitmap'', * FROM (' || radius || ') a' USING ks, q;
  FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || radius USING ks, q LOOP
    IF plan LIKE '%Seq Scan%' THEN RAISE 'not a bitmap scan: %', plan; END IF;
  END LOOP;
  SET LOCAL enable_seqscan = on; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = on;
  EXECUTE format('CREATE TEMP TABLE cc_seq AS SELECT id, plain_distance(fp, $1) AS d, ctid AS c FROM %s', tab) USING q;
  SELECT count(*) INTO radius_mismatches FROM cc_idx i JOIN (
    SELECT k, count(id) AS n, sum(hashint4(id)) AS s FROM unnest(ks) k LEFT JOIN cc_seq ON d <= k GROUP BY k) s
    USING (k) WHERE (i.n, i.s) IS DISTINCT FROM (s.n, s.s);
  SELECT count(*) INTO order_mismatches FROM cc_order o FULL JOIN (
    SELECT row_number() OVER (ORDER BY d NULLS LAST, c) AS r, id FROM cc_seq) s USING (r)
  WHERE o.id IS DISTINCT FROM s.id;
  SELECT count(*) INTO ordered_rows FROM cc_order;
  DROP TABLE cc_idx, cc_order, cc_seq;
END $$;
CREATE TABLE tiny (id int, fp simhash);
CREATE INDEX tiny_fp ON tiny USING hamming (fp);
SELECT * FROM crosscheck('tiny', '0123456789abcdef', ARRAY[0, 3, 64]);
INSERT INTO tiny VALUES (1, '0123456789abcdee');
SELECT * FROM crosscheck('tiny', '0123456789abcdef', ARRAY[0, 1, 3, 64]);
-- built on 1 row (probe tables of one entry), then on 17 rows and a NULL
REINDEX INDEX tiny_fp;
SELECT * FROM crosscheck('tiny', '0123456789abcdef', ARRAY[0, 1, 3, 64]);
INSERT INTO tiny SELECT i, flip_bits('0123456789abcdef', i) FROM generate_series(2, 17) i;
INSERT INTO tiny VALUES (18, NULL);
REINDEX INDEX tiny_fp;
SELECT * FROM crosscheck('tiny', '0123456789abcdef', ARRAY[0, 1, 2, 5, 9, 16, 17, 64]);
SELECT * FROM crosscheck('tiny', (SELECT fp FROM tiny WHERE id = 9), ARRAY[0, 1, 2, 5, 9, 16, 17, 64]);
-- every fingerprint NULL
CREATE TABLE all_null AS SELECT i AS id, NULL::simhash AS fp FROM generate_series(1, 1000) i;
CREATE INDEX all_null_fp ON all_null USING hamming (fp);
SELECT * FROM crosscheck('all_null', '0123456789abcdef', ARRAY[0, 64]);
-- 50,000 copies of one fingerprint, 64 rows one bit away from it and a few
-- NULLs: one bucket of each table holds almost every row.  With little
-- work_mem, an ordered scan's second ring (the copies, two bits from q) does
-- not fit: it falls back to passes, resuming after the rows of the first.
CREATE TABLE copies (id int, fp simhash);
INSERT INTO copies SELECT i, '0123456789abcdef' FROM generate_series(1, 50000) i;
INSERT INTO copies SELECT 50000 + b, ('0123456789abcdef'::simhash::bigint # (1::bigint << b))::simhash
FROM generate_series(0, 63) b;
INSERT INTO copies SELECT 60000 + i, NULL FROM generate_series(1, 3) i;
CREATE INDEX copies_fp ON copies USING hamming (fp);
ANALYZE copies;
SELECT * FROM crosscheck('copies', '0123456789abcdef', ARRAY[0, 1, 2, 64]);
-- probes that do not take the copies cross them in a few dozen page reads,
-- not one read per page of copies (86 of table 0, 49 of each of tables 1..3)
CREATE FUNCTION index_pages(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) ' || query INTO plan;
  plan := plan->0->'Plan'->'Plans'->0;
  IF plan->>'Node Type' <> 'Index Scan' THEN RAISE 'not an index scan: %', plan; END IF;
  RETURN (plan->>'Shared Hit Blocks')::int + (plan->>'Shared Read Blocks')::int;
END $$;
SELECT index_pages($$SELECT count(*) FROM copies WHERE fp = '0123456789abcdec'$$) < 30 AS equal_crosses_copies,
       index_pages($$SELECT count(*) FROM copies WHERE fp <~> '0123456789abcdec' <= 1$$) < 60 AS k1_crosses_copies,
       index_pages($$SELECT count(*) FROM copies WHERE fp <~> 'f123456789abcdef' <= 3$$) < 80 AS k3_crosses_copies;
SELECT * FROM crosscheck('copies', '0123456789abcdec', ARRAY[0, 1, 2, 3, 4, 64]);
SET work_mem = '64kB';
SELECT * FROM crosscheck('copies', '0123456789abcdec', ARRAY[1, 3]);
SELECT * FROM crosscheck('copies', 'f123456789abcdef', ARRAY[3, 5]);
RESET work_mem;

-- a nested loop that rescans the index for every outer row (radius and
-- nearest first), against the same join computed without the index
CREATE TABLE outer_rows AS SELECT id, fp FROM docs WHERE id % 20 = 1 AND fp IS NOT NULL LIMIT 150;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT plan_of($$SELECT o.id, d.id FROM outer_rows o JOIN docs d ON d.fp <~> o.fp <= 3$$);
CREATE TEMP TABLE nl_radius AS SELECT o.id AS oid, d.id FROM outer_rows o JOIN docs d ON d.fp <~> o.fp <= 3;
SELECT plan_of($$SELECT o.id, x.id FROM outer_rows o,
  LATERAL (SELECT id FROM docs d WHERE d.fp <~> o.fp <= 12 ORDER BY d.fp <~> o.fp LIMIT 4) x$$);
CREATE TEMP TABLE nl_nearest AS SELECT o.id AS oid, x.id, x.d FROM outer_rows o,
  LATERAL (SELECT id, (d.fp <~> o.fp)::int AS d FROM docs d WHERE d.fp <~> o.fp <= 12
           ORDER BY d.fp <~> o.fp LIMIT 4) x;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) AS join_rows, count(*) = (SELECT count(*) FROM nl_radius)
  AND NOT EXISTS (SELECT oid, id FROM nl_radius EXCEPT SELECT o.id, d.id FROM outer_rows o JOIN docs d
                  ON plain_distance(d.fp, o.fp) <= 3) AS exact
FROM outer_rows o JOIN docs d ON plain_distance(d.fp, o.fp) <= 3;
-- the nearest rows at each rank's distance; at the last distance, ties may
-- be cut differently, so only distances are compared there
SELECT count(*) AS nearest_rows, count(*) FILTER (WHERE n.d IS DISTINCT FROM s.d OR
         (n.id IS DISTINCT FROM s.id AND n.d < (SELECT max(d) FROM nl_nearest m WHERE m.oid = n.oid))) AS mismatches
FROM (SELECT oid, id, d, row_number() OVER (PARTITION BY oid ORDER BY d, id) AS r FROM nl_nearest) n
FULL JOIN (SELECT o.id AS oid, x.id, x.d, row_number() OVER (PARTITION BY o.id ORDER BY x.d, x.id) AS r
           FROM outer_rows o, LATERAL (SELECT id, plain_distance(d.fp, o.fp) AS d FROM docs d
             WHERE plain_distance(d.fp, o.fp) <= 12 ORDER BY 2, ctid LIMIT 4) x) s USING (oid, r);
RESET enable_indexscan; RESET enable_bitmapscan;

-- merges without VACUUM: an index created on an empty table takes rows,
-- and each insert that grows the tail over the index's tail_limit (64 kB
-- here, 8 pages) merges it into new probe tables; every k and the whole
-- nearest-first order stay exact, for centers with neighbours at every
-- distance, through NULLs, deletes, VACUUM and hamming_merge_tail()
CREATE TABLE live (id int, fp simhash) WITH (autovacuum_enabled = off);
CREATE INDEX live_fp ON live USING hamming (fp) WITH (tail_limit = 64);
SELECT probe_tables, table_entries, tail_pages, merges FROM hamming_index_info('live_fp');
INSERT INTO live SELECT i, random_simhash() FROM generate_series(1, 20000) i;
INSERT INTO live SELECT 100000 + j * 1000 + copy * 100 + d, flip_bits(c.fp, d)
FROM centers c, generate_series(0, 16) d, generate_series(0, 1) copy;
INSERT INTO live SELECT 900000 + i, NULL FROM generate_series(1, 5) i;
SELECT probe_tables, merges >= 2 AS merged_by_inserts, tail_pages <= 8 AS tail_within_limit,
       table_entries + tail_entries >= 20000 + 680 AS every_entry
FROM hamming_index_info('live_fp');
SELECT c.j, x.* FROM centers c, crosscheck('live', c.fp, ARRAY(SELECT generate_series(0, 64))) x
WHERE c.j <= 3 ORDER BY c.j;
DELETE FROM live WHERE id % 5 = 0;
UPDATE live SET fp = flip_bits(fp, 2) WHERE id % 7 = 0;
INSERT INTO live SELECT 950000 + i, NULL FROM generate_series(1, 3) i;
SELECT hamming_merge_tail('live_fp') AS merged_now;
SELECT tail_pages, merge_in_progress FROM hamming_index_info('live_fp');
SELECT c.j, x.* FROM centers c, crosscheck('live', c.fp, ARRAY(SELECT generate_series(0, 64))) x
WHERE c.j <= 3 ORDER BY c.j;
VACUUM live;
SELECT c.j, x.* FROM centers c, crosscheck('live', c.fp, ARRAY(SELECT generate_series(0, 64))) x
WHERE c.j <= 3 ORDER BY c.j;
-- a count without conditions returns every row, NULLs too
SET enable_seqscan = off;
SELECT count(*) = (SELECT count(*) FROM live) AS every_row_counted FROM live;
RESET enable_seqscan;
-- what merges leave alone: an index without probe tables by its option
CREATE INDEX live_fp_flat ON live USING hamming (fp) WITH (probe_tables = off);
INSERT INTO live SELECT 960000 + i, random_simhash() FROM generate_series(1, 2000) i;
SELECT hamming_merge_tail('live_fp_flat') AS flat_merged;
SELECT probe_tables, merges FROM hamming_index_info('live_fp_flat');
DROP INDEX live_fp_flat;
-- a temporary table's index (local buffers) merges as any other: its first
-- merge reserves, at the end of the index, a block for each page of the
-- new tables at once
CREATE TEMP TABLE live_temp (id int, fp simhash);
INSERT INTO live_temp SELECT id, fp FROM live;
CREATE INDEX live_temp_fp ON live_temp USING hamming (fp);
SELECT index_pages AS built_pages FROM hamming_index_info('live_temp_fp') \gset
INSERT INTO live_temp SELECT 2000000 + i, random_simhash() FROM generate_series(1, 3000) i;
SELECT hamming_merge_tail('live_temp_fp') AS temp_merged;
SELECT index_pages >= 2 * :built_pages AS reserved_at_the_end, tail_pages, merges
FROM hamming_index_info('live_temp_fp');
SELECT 'passed' AS check_temp_merged FROM hamming_index_check('live_temp_fp');
SELECT c.j, x.* FROM centers c, crosscheck('live_temp', c.fp, ARRAY[0, 3, 9, 16, 30, 64]) x
WHERE c.j <= 2 ORDER BY c.j;
DROP TABLE live_temp;
-- a tail that alone outgrows maintenance_work_mem (100,000 rows, 1MB holds
-- a load of about 43,000) is sorted in runs on temporary files and merged
ALTER INDEX live_fp SET (tail_limit = 100000);
SELECT merges AS merges_before_bulk FROM hamming_index_info('live_fp') \gset
INSERT INTO live SELECT 970000 + i, random_simhash() FROM generate_series(1, 100000) i;
SELECT merges = :merges_before_bulk AS not_merged_under_tail_limit,
       tail_entries >= 100000 AS tail_over_budget FROM hamming_index_info('live_fp');
-- an insert's merge stays within memory (no temporary files: an INSERT
-- does not fail for their sake): over the limit, at 1MB, it leaves the
-- tail, once per backend until the tables or the setting change
ALTER INDEX live_fp SET (tail_limit = 64);
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
\set VERBOSITY terse
INSERT INTO live SELECT 1090000 + i, random_simhash() FROM generate_series(1, 1200) i;
\set VERBOSITY default
RESET client_min_messages;
SELECT merges = :merges_before_bulk AS insert_left_the_tail FROM hamming_index_info('live_fp');
ALTER INDEX live_fp SET (tail_limit = 100000);
SET client_min_messages = debug1;
\set VERBOSITY terse
SELECT hamming_merge_tail('live_fp') AS merged_in_runs;
\set VERBOSITY default
RESET client_min_messages;
RESET maintenance_work_mem;
SELECT merges = :merges_before_bulk + 1 AS merged_once, tail_entries = 0 AS tail_merged,
       table_entries = (SELECT count(*) FROM live WHERE fp IS NOT NULL) AS every_live_row
FROM hamming_index_info('live_fp');
SELECT 'passed' AS check_after_runs FROM hamming_index_check('live_fp');
SELECT c.j, x.* FROM centers c, crosscheck('live', c.fp, ARRAY[0, 3, 9, 16, 30, 64]) x
WHERE c.j <= 2 ORDER BY c.j;
-- tables that outgrow maintenance_work_mem, a tail that does not: VACUUM
-- clears the deleted rows' TIDs and merges, holding only the tail and the
-- tombstones' keys
SELECT merges AS merges_before FROM hamming_index_info('live_fp') \gset
INSERT INTO live SELECT 1000000 + i, random_simhash() FROM generate_series(1, 3000) i;
INSERT INTO live SELECT 1100000 + id, fp FROM live WHERE id % 13 = 1 AND id >= 100000 AND id < 900000;
DELETE FROM live WHERE id % 11 = 0;
SET maintenance_work_mem = '1MB';
SELECT (table_entries + tail_entries) * 24 > 1024 * 1024 AS entries_over_budget FROM hamming_index_info('live_fp');
VACUUM live;
RESET maintenance_work_mem;
SELECT merges = :merges_before + 1 AS merged_streaming, tail_entries = 0 AS tail_merged,
       table_entries >= (SELECT count(*) FROM live WHERE fp IS NOT NULL) AS every_live_row
FROM hamming_index_info('live_fp');
SELECT 'passed' AS check_after_streaming FROM hamming_index_check('live_fp');
SELECT c.j, x.* FROM centers c, crosscheck('live', c.fp, ARRAY[0, 1, 3, 9, 16, 30, 64]) x
WHERE c.j <= 3 ORDER BY c.j;
-- a merge sorts the tail alone and merges it into the old tables as it
-- reads them (table 0's live entries with the tail's; tables 1..3's keys
-- less the tombstones', with the tail's): exact through tombstones (VACUUM
-- clears the TIDs of deleted rows in table 0) and fingerprints held several
-- times, in the tables and the tail; at 1MB the tombstones' keys (more
-- than half of it holds: about 21,000) are sorted in runs on temporary files
DELETE FROM live WHERE id % 3 = 0;
VACUUM live;
INSERT INTO live SELECT 3000000 + id, fp FROM live WHERE id % 17 = 1 OR id >= 100000 AND id < 900000;
SELECT tail_entries < table_entries / 4 AS small_tail FROM hamming_index_info('live_fp');
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
\set VERBOSITY terse
SELECT hamming_merge_tail('live_fp') AS merged_runs;
\set VERBOSITY default
RESET client_min_messages;
RESET maintenance_work_mem;
SELECT tail_entries = 0 AS tail_merged, table_entries = (SELECT count(*) FROM live WHERE fp IS NOT NULL) AS every_live_row
FROM hamming_index_info('live_fp');
SELECT 'passed' AS check_after_runs_merged FROM hamming_index_check('live_fp');
SELECT c.j, x.* FROM centers c, crosscheck('live', c.fp, ARRAY[0, 1, 3, 9, 16, 30, 64]) x
WHERE c.j <= 3 ORDER BY c.j;
-- a build in runs of a table with NULLs: their TIDs wait in a temporary
-- file, and go to the tail behind the tables
SET maintenance_work_mem = '1MB';
CREATE INDEX live_fp_runs ON live USING hamming (fp);
RESET maintenance_work_mem;
SELECT table_entries = (SELECT count(*) FROM live WHERE fp IS NOT NULL) AS every_fingerprint,
       tail_entries = (SELECT count(*) FROM live WHERE fp IS NULL) AND tail_entries > 0 AS nulls_in_tail
FROM hamming_index_info('live_fp_runs');
SELECT 'passed' AS check_built_with_nulls FROM hamming_index_check('live_fp_runs');
DROP INDEX live_fp_runs;
-- a scan keeps the block map of the tables it began with while a merge
-- replaces them (here a cursor's, in the merge's own transaction): its
-- nearest rows are the sequential scan's, and so are a later scan's
INSERT INTO live SELECT 4000000 + c.j * 1000 + i, flip_bits(c.fp, i % 20) FROM centers c, generate_series(1, 300) i
WHERE c.j <= 3;
CREATE FUNCTION cursor_across_merge(q simhash, n int, OUT merged boolean, OUT distances_equal boolean)
LANGUAGE plpgsql AS $$
DECLARE cur refcursor; d int; got int[] := '{}';
BEGIN
  OPEN cur FOR SELECT (fp <~> q)::int FROM live ORDER BY fp <~> q LIMIT n;
  FOR i IN 1..n / 10 LOOP FETCH cur INTO d; got := got || d; END LOOP;
  merged := hamming_merge_tail('live_fp');
  LOOP FETCH cur INTO d; EXIT WHEN NOT FOUND; got := got || d; END LOOP;
  CLOSE cur;
  distances_equal := got = ARRAY(SELECT plain_distance(fp, q) FROM live ORDER BY 1 LIMIT n);
END $$;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT c.j, x.* FROM centers c, cursor_across_merge(c.fp, 1000) x WHERE c.j = 1;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT tail_entries = 0 AS tail_merged FROM hamming_index_info('live_fp');
SELECT c.j, x.* FROM centers c, crosscheck('live', c.fp, ARRAY[0, 3, 9, 16, 30, 64]) x
WHERE c.j <= 3 ORDER BY c.j;
DROP FUNCTION cursor_across_merge;
-- what hamming_merge_tail refuses, and a tail_limit below its minimum
SELECT hamming_merge_tail('live');
SELECT hamming_merge_tail('docs_pkey');
CREATE TABLE live128 (fp simhash128);
CREATE INDEX live128_fp ON live128 USING hamming (fp);
SELECT hamming_merge_tail('live128_fp');
SELECT probe_tables, merges FROM hamming_index_info('live128_fp');
DROP TABLE live128;	-- hamming_index_check refuses it, as hamming_merge_tail does
CREATE INDEX ON live USING hamming (fp) WITH (tail_limit = 32);
ALTER INDEX live_fp SET (tail_limit = 0);
CREATE INDEX ON live USING hamming (fp) WITH (tail_limit = -2);

-- tail_limit unset: an insert merges a tail over 1 MB (and over 1/24 of the
-- tables' rows, fewer here). The transaction right after a merge's cannot
-- merge again (the pages the merge replaced wait for its snapshot); the
-- next one can
CREATE TABLE auto (id int, fp simhash) WITH (autovacuum_enabled = off);
CREATE INDEX auto_fp ON auto USING hamming (fp);
INSERT INTO auto SELECT i, random_simhash() FROM generate_series(1, 80000) i;
SELECT merges, tail_pages <= 128 AS tail_under_1mb FROM hamming_index_info('auto_fp');
INSERT INTO auto SELECT 100000 + i, random_simhash() FROM generate_series(1, 70000) i;
INSERT INTO auto SELECT 180000 + i, random_simhash() FROM generate_series(1, 2000) i;
SELECT merges, tail_pages <= 128 AS tail_under_1mb FROM hamming_index_info('auto_fp');
INSERT INTO auto SELECT 200000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 16) d;
SELECT c.j, x.* FROM centers c, crosscheck('auto', c.fp, ARRAY[0, 3, 9, 16, 64]) x
WHERE c.j <= 2 ORDER BY c.j;
ALTER INDEX auto_fp SET (tail_limit = -1);
SELECT reloptions FROM pg_class WHERE relname = 'auto_fp';
DROP TABLE auto;

-- a lookup that probes, and an ordered scan's rings, read the tail through
-- the full tail pages that their backend keeps (simhash.tail_cache_size);
-- VACUUM, a merge or a smaller
-- setting make it read them again: rows that take over the TIDs VACUUM
-- freed are not found at the fingerprints of the rows it removed
SHOW simhash.tail_cache_size;
CREATE TABLE kept (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO kept SELECT i, random_simhash() FROM generate_series(1, 5000) i;
CREATE INDEX kept_fp ON kept USING hamming (fp) WITH (tail_limit = 100000);
-- a tail of 3 pages (VACUUM merges one of 4): neighbours of the centers first
INSERT INTO kept SELECT 100000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 12) d;
INSERT INTO kept SELECT 200000 + i, random_simhash() FROM generate_series(1, 1000) i;
SELECT tail_entries, tail_pages FROM hamming_index_info('kept_fp');
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 1, 3, 5, 8, 12, 16]) x
WHERE c.j <= 4 ORDER BY c.j;
-- kept, the two full pages are not read again (the last, not full, is)
SELECT index_pages($$SELECT count(*) FROM kept WHERE fp <~> '0123456789abcdef' <= 3$$) AS pages_kept \gset
SET simhash.tail_cache_size = 0;
SELECT index_pages($$SELECT count(*) FROM kept WHERE fp <~> '0123456789abcdef' <= 3$$) - :pages_kept
  AS pages_not_read_again;
RESET simhash.tail_cache_size;
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 3, 8]) x
WHERE c.j <= 4 ORDER BY c.j;
CREATE TEMP TABLE freed AS SELECT ctid AS c FROM kept WHERE id BETWEEN 100000 AND 199999;
DELETE FROM kept WHERE id BETWEEN 100000 AND 199999;
VACUUM kept;
SELECT merges AS merges_by_vacuum FROM hamming_index_info('kept_fp');
INSERT INTO kept SELECT 300000 + i, random_simhash() FROM generate_series(1, 2000) i;
SELECT count(*) > 0 AS freed_tids_taken_over FROM kept WHERE ctid IN (SELECT c FROM freed);
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 1, 3, 5, 8, 12, 16]) x
WHERE c.j <= 4 ORDER BY c.j;
-- with a setting too small for every page, and after a merge
INSERT INTO kept SELECT 400000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 12) d;
INSERT INTO kept SELECT 500000 + i, random_simhash() FROM generate_series(1, 1000) i;
SET simhash.tail_cache_size = '64kB';
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 3, 8, 16]) x
WHERE c.j <= 4 ORDER BY c.j;
RESET simhash.tail_cache_size;
SELECT hamming_merge_tail('kept_fp') AS kept_merged;
INSERT INTO kept SELECT 600000 + i, random_simhash() FROM generate_series(1, 2000) i;
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 1, 3, 5, 8, 12, 16]) x
WHERE c.j <= 4 ORDER BY c.j;
-- the numbers of the buffers that held the probe tables' pages, a
-- sixteenth of the setting, are never more than the shared buffers: the
-- largest setting, then another, each answers as a sequential scan, twice
SET simhash.tail_cache_size = '2147483647kB';
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 3, 8]) x
WHERE c.j <= 2 ORDER BY c.j;
SET simhash.tail_cache_size = '16GB';
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 3, 8]) x
WHERE c.j <= 2 ORDER BY c.j;
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[0, 3, 8]) x
WHERE c.j <= 2 ORDER BY c.j;
RESET simhash.tail_cache_size;
-- a long tail, its kept pages read entry by entry (radius 5 to 12),
-- answers as a sequential scan
INSERT INTO kept SELECT 700000 + i, random_simhash() FROM generate_series(1, 60000) i;
INSERT INTO kept SELECT 800000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 14) d;
SELECT tail_entries > 60000 AS long_tail FROM hamming_index_info('kept_fp');
SELECT c.j, x.radius_mismatches, x.order_mismatches FROM centers c, crosscheck('kept', c.fp, ARRAY[5, 8, 10, 12]) x
WHERE c.j <= 4 ORDER BY c.j;
-- a negative size is refused (22023; the message's wording is PostgreSQL's)
\set VERBOSITY sqlstate
SET simhash.tail_cache_size = -1;
\set VERBOSITY default
DROP TABLE kept, freed;

-- what the method refuses
CREATE INDEX ON docs USING hamming (fp) WITH (blocks = 4);
CREATE INDEX ON docs USING hamming (fp) WITH (probe_tables = maybe);
CREATE INDEX ON docs USING hamming (id);
CREATE INDEX ON docs USING hamming (fp, id);
CREATE UNIQUE INDEX ON docs USING hamming (fp);
CREATE INDEX ON docs USING hamming (fp) INCLUDE (id);

-- every hamming index that the tests above wrote passes hamming_index_check
SELECT c.relname AS checked_index
FROM pg_class c JOIN pg_am a ON a.oid = c.relam, LATERAL hamming_index_check(c.oid)
WHERE a.amname = 'hamming' AND c.relnamespace = 'hamming_test'::regnamespace
ORDER BY 1;

SET client_min_messages = warning;
DROP SCHEMA hamming_test CASCADE;
RESET client_min_messages;
