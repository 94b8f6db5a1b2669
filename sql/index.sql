-- Near-duplicate queries from a GIN simhash_ops index: exact for every k,
-- every query shape planned onto the index.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.42);

-- uniformly random 64-bit fingerprints
CREATE FUNCTION random_simhash() RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash $$;
-- fp with exactly d distinct random bits flipped
CREATE FUNCTION flip_bits(fp simhash, d int) RETURNS simhash LANGUAGE sql VOLATILE AS
$$ SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << b) FROM
     (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT d) s), 0))::simhash $$;

CREATE TABLE docs (id int PRIMARY KEY, fp simhash);
INSERT INTO docs SELECT i, random_simhash() FROM generate_series(1, 10000) i;
-- 30 query centers, each with planted neighbours at every distance 0..12
CREATE TABLE centers AS SELECT j, random_simhash() AS fp FROM generate_series(1, 30) j;
INSERT INTO docs SELECT 100000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 12) d;
SELECT count(*) = 30 * 13 AS planted_at_exact_distances FROM docs d JOIN centers c
  ON d.id / 100 = 1000 + c.j AND d.fp <~> c.fp = d.id % 100;
CREATE INDEX docs_fp ON docs USING gin (fp);
ANALYZE docs;

-- every query shape uses the index
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' < 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' = 2;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 3 >= '0123456789abcdef' <~> fp;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 3 > fp <~> '0123456789abcdef';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 2 = fp <~> '0123456789abcdef';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE hamming_distance(fp, '0123456789abcdef') <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> simhash('some text'::text) <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE simhash_within(fp, '0123456789abcdef', 3);
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <@ simhash_ball('0123456789abcdef', 3);
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE simhash_ball('0123456789abcdef', 3) @> fp;
SHOW simhash.max_distance;
SET simhash.max_distance = 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp % '0123456789abcdef';
RESET simhash.max_distance;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp = '0123456789abcdef';
-- the inner side of a join
EXPLAIN (COSTS OFF) SELECT c.j, d.id FROM centers c JOIN docs d ON c.fp <~> d.fp <= 3;
-- prepared statements, generic plans, parameters for k
SET plan_cache_mode = force_generic_plan;
PREPARE near(simhash, int) AS SELECT id FROM docs WHERE fp <~> $1 <= $2;
EXPLAIN (COSTS OFF) EXECUTE near('0123456789abcdef', 3);
SELECT fp AS q1 FROM centers WHERE j = 1 \gset
EXECUTE near(:'q1', 3);
RESET plan_cache_mode;
-- large k: the planner prefers a sequential scan
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' <= 30;
-- shapes that are not rewritten stay correct (no index)
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' > 60;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp <~> '0123456789abcdef' BETWEEN 0 AND 3;

-- exactness: index answers equal sequential-scan answers for k = 0..14,
-- for several query shapes, with the index forced
CREATE FUNCTION compare_with_seqscan(label text) RETURNS TABLE (check_name text, index_rows bigint, mismatches bigint)
LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off;
  CREATE TEMP TABLE idx_answer AS
    SELECT 'le' AS shape, k, c.j, d.id FROM centers c, generate_series(0, 14) k, docs d WHERE d.fp <~> c.fp <= k
    UNION ALL SELECT 'lt', k, c.j, d.id FROM centers c, generate_series(1, 14) k, docs d WHERE d.fp <~> c.fp < k
    UNION ALL SELECT 'eq', k, c.j, d.id FROM centers c, generate_series(0, 14) k, docs d WHERE d.fp <~> c.fp = k
    UNION ALL SELECT 'ball', k, c.j, d.id FROM centers c, generate_series(0, 14) k, docs d WHERE d.fp <@ simhash_ball(c.fp, k);
  SET LOCAL enable_seqscan = on; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = off;
  CREATE TEMP TABLE seq_answer AS
    WITH dist AS (SELECT c.j, d.id, bit_count((d.fp::bigint # c.fp::bigint)::bit(64)) AS dist
                  FROM centers c, docs d)
    SELECT s.shape, k, dist.j, dist.id FROM dist, generate_series(0, 14) k,
      (VALUES ('le'), ('lt'), ('eq'), ('ball')) s(shape)
    WHERE dist.dist <= 14 AND CASE s.shape
            WHEN 'lt' THEN k >= 1 AND dist.dist < k
            WHEN 'eq' THEN dist.dist = k
            ELSE dist.dist <= k END;
  RETURN QUERY SELECT label, (SELECT count(*) FROM idx_answer),
    (SELECT count(*) FROM ((SELECT * FROM idx_answer EXCEPT SELECT * FROM seq_answer)
                           UNION ALL (SELECT * FROM seq_answer EXCEPT SELECT * FROM idx_answer)) x);
  DROP TABLE idx_answer, seq_answer;
END $$;
SELECT * FROM compare_with_seqscan('fresh index');

-- after inserts, updates, deletes and VACUUM
INSERT INTO docs SELECT 200000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 6) d;
UPDATE docs SET fp = flip_bits(fp, 1) WHERE id % 7 = 0;
DELETE FROM docs WHERE id % 11 = 0;
SELECT * FROM compare_with_seqscan('after insert, update, delete');
VACUUM docs;
SELECT * FROM compare_with_seqscan('after vacuum');

-- the blocks option: every layout is exact
CREATE INDEX docs_fp_b2 ON docs USING gin (fp simhash_ops(blocks = 2));
DROP INDEX docs_fp;
SELECT * FROM compare_with_seqscan('blocks = 2');
CREATE INDEX docs_fp_b8 ON docs USING gin (fp simhash_ops(blocks = 8));
DROP INDEX docs_fp_b2;
SELECT * FROM compare_with_seqscan('blocks = 8');
CREATE INDEX docs_fp_b16 ON docs USING gin (fp simhash_ops(blocks = 16)) WITH (fastupdate = off);
DROP INDEX docs_fp_b8;
SELECT * FROM compare_with_seqscan('blocks = 16, fastupdate off');
CREATE INDEX bad ON docs USING gin (fp simhash_ops(blocks = 1));
CREATE INDEX bad ON docs USING gin (fp simhash_ops(blocks = 17));

-- large radii stay bounded (whole-index scan) and exact, even when forced
SET enable_seqscan = off;
SELECT count(*) = (SELECT count(*) FROM docs WHERE bit_count((fp::bigint # c.fp::bigint)::bit(64)) <= 40) AS k40_exact
FROM docs, centers c WHERE c.j = 2 AND docs.fp <~> c.fp <= 40 GROUP BY c.fp;
SELECT count(*) = (SELECT count(*) FROM docs) AS k64_all_rows_match FROM docs WHERE fp <~> '0123456789abcdef' <= 64;
SELECT count(*) AS negative_k_matches_nothing FROM docs WHERE fp <~> '0123456789abcdef' <= -1;
SELECT count(*) = (SELECT count(*) FROM docs) AS huge_k_all_rows FROM docs WHERE fp <~> '0123456789abcdef' <= 1000000;
RESET enable_seqscan;

-- the % operator reads simhash.max_distance
SET simhash.max_distance = 2;
SELECT count(*) AS within_2 FROM docs d, centers c WHERE c.j = 3 AND d.fp % c.fp;
SET simhash.max_distance = 5;
SELECT count(*) AS within_5 FROM docs d, centers c WHERE c.j = 3 AND d.fp % c.fp;
SET simhash.max_distance = 65;
SET simhash.nonexistent = 1;
RESET simhash.max_distance;

-- simhash_ball I/O and accessors
SELECT '(0123456789abcdef,3)'::simhash_ball, simhash_ball('0123456789abcdef', 64), simhash_ball('0123456789abcdef', 0);
SELECT simhash_ball_center('(0123456789ABCDEF, 7)'), simhash_ball_radius('(0123456789abcdef,7)');
SELECT '0123456789abcdef'::simhash <@ '(0123456789abcdee,1)' AS inside, '0123456789abcdef'::simhash <@ '(0123456789abcdec,1)' AS outside;
\set VERBOSITY terse

-- block functions (block 1 holds the most significant bits)
SELECT simhash_blocks('0123456789abcdef', 4), simhash_block('0123456789abcdef', 1, 4), simhash_block('0123456789abcdef', 4, 4);
SELECT simhash_blocks('ffffffffffffffff', 5), array_agg(simhash_block_bits(i, 5) ORDER BY i) FROM generate_series(1, 5) i;
SELECT simhash_block('0123456789abcdef', 1, 1)::simhash AS whole;
SELECT simhash_block('0123456789abcdef', 0, 4);
SELECT simhash_block('0123456789abcdef', 1, 65);
-- pigeonhole, checked on the planted data: within 3 bits, some block of 4 agrees
SELECT bool_and(EXISTS (SELECT 1 FROM generate_series(1, 4) i
                        WHERE simhash_block(d.fp, i, 4) = simhash_block(c.fp, i, 4))) AS pigeonhole_holds
FROM docs d JOIN centers c ON d.fp <~> c.fp <= 3;

-- nearest first through the GiST opclass: ORDER BY fp <~> q LIMIT n
CREATE INDEX docs_fp_gist ON docs USING gist (fp);
DROP INDEX docs_fp_b16;
EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY fp <~> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id, fp <~> '0123456789abcdef' AS d FROM docs ORDER BY d LIMIT 10;
SELECT pg_typeof(fp <~> '0123456789abcdef') FROM docs LIMIT 1;
-- exact: the distances of the first n rows equal those of a sorted sequential scan
CREATE FUNCTION compare_nearest(n int) RETURNS TABLE (queries bigint, mismatches bigint) LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off;
  CREATE TEMP TABLE knn_idx AS SELECT c.j, x.rank, x.d FROM centers c, LATERAL (
    SELECT row_number() OVER () AS rank, d FROM (SELECT fp <~> c.fp AS d FROM docs ORDER BY fp <~> c.fp LIMIT n) s) x;
  SET LOCAL enable_seqscan = on; SET LOCAL enable_sort = on; SET LOCAL enable_indexscan = off;
  CREATE TEMP TABLE knn_seq AS SELECT c.j, x.rank, x.d FROM centers c, LATERAL (
    SELECT row_number() OVER () AS rank, d FROM (SELECT bit_count((fp::bigint # c.fp::bigint)::bit(64))::int AS d FROM docs ORDER BY 1 LIMIT n) s) x;
  RETURN QUERY SELECT (SELECT count(DISTINCT j) FROM knn_idx),
    (SELECT count(*) FROM ((SELECT * FROM knn_idx EXCEPT SELECT * FROM knn_seq)
                           UNION ALL (SELECT * FROM knn_seq EXCEPT SELECT * FROM knn_idx)) x);
  DROP TABLE knn_idx, knn_seq;
END $$;
SELECT * FROM compare_nearest(1);
SELECT * FROM compare_nearest(10);
SELECT * FROM compare_nearest(25);
EXPLAIN (COSTS OFF) SELECT c.j, x.id FROM centers c, LATERAL (SELECT id FROM docs ORDER BY fp <~> c.fp LIMIT 3) x;
-- the planted neighbours come first, in order of distance
SELECT array_agg(d ORDER BY n) AS nearest_distances FROM (
  SELECT d, row_number() OVER () AS n FROM (SELECT fp <~> (SELECT fp FROM centers WHERE j = 5) AS d FROM docs ORDER BY fp <~> (SELECT fp FROM centers WHERE j = 5) LIMIT 12) s) x;

-- estimates never misread a constant of another type (these used to crash)
CREATE TABLE est (fp simhash, b bytea, k int);
EXPLAIN (COSTS OFF) SELECT * FROM est WHERE simhash_within(fp, '0000000000000000', get_bit(b, 0));
CREATE FUNCTION my_ball(c simhash, r bigint) RETURNS simhash_ball LANGUAGE plpgsql AS
$$ BEGIN RETURN simhash_ball(c, r::int); END $$;
EXPLAIN (COSTS OFF) SELECT * FROM est WHERE fp <@ my_ball(fp, 3);
-- "d < k" with k = INT_MIN is false, not an overflow
INSERT INTO est VALUES ('000000000000000f', NULL, -2147483648);
SELECT fp <~> '0000000000000000' < k AS lt_int_min, k > fp <~> '0000000000000000' AS gt_int_min,
       fp <~> '0000000000000000' < -2147483648 AS lt_int_min_literal FROM est;
SELECT count(*) FROM est WHERE fp <~> '0000000000000000' < k;
