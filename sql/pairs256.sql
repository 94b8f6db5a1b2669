-- A query with two simhash128 columns gives the whole-table functions a
-- 256-bit fingerprint (for example parts 0 and 1 of shingle_simhash128), the
-- distance of two rows the sum of the two columns' distances.  Checked
-- against a brute-force join: pairs (exact tables, spilled, and bands),
-- clusters, dedup, the verified forms, lineage and the keyed form.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- 600 texts of 40 words out of 300, deterministic; near copies of some with
-- one word replaced everywhere, with words appended, and exact copies
CREATE TABLE w256 (id bigint PRIMARY KEY, body text);
INSERT INTO w256
SELECT i, (SELECT string_agg('w' || (abs(hashint4(i * 41 + j)) % 300), ' ' ORDER BY j) FROM generate_series(1, 40) j)
FROM generate_series(1, 600) i;
INSERT INTO w256 SELECT id + 1000, regexp_replace(body, '\mw' || (id % 300) || '\M', 'x', 'g') FROM w256 WHERE id <= 200;
INSERT INTO w256 SELECT id + 2000, body || ' and a few more words' FROM w256 WHERE id <= 100;
INSERT INTO w256 SELECT id + 3000, body FROM w256 WHERE id <= 50;
INSERT INTO w256 VALUES (5000, NULL);
ALTER TABLE w256 ADD fp simhash128, ADD fp1 simhash128;
UPDATE w256 SET fp = shingle_simhash128(body, 1, 'words', 0), fp1 = shingle_simhash128(body, 1, 'words', 1);
-- a row with one of its two columns NULL has no fingerprint: skipped
INSERT INTO w256 VALUES (5001, 'w1 w2 w3', shingle_simhash128('w1 w2 w3', 1, 'words', 0), NULL);

CREATE TABLE bf256 AS
SELECT a.id AS id_a, b.id AS id_b, (a.fp <~> b.fp) + (a.fp1 <~> b.fp1) AS distance,
       shingle_similarity(a.body, b.body, 1, 'words') AS similarity
FROM w256 a JOIN w256 b ON a.id < b.id
WHERE (a.fp <~> b.fp) + (a.fp1 <~> b.fp1) <= 112;

CREATE FUNCTION pairs256_diff(q text, k integer) RETURNS TABLE (brute bigint, reported bigint, missing bigint, extra bigint)
LANGUAGE sql AS $$
	WITH p AS (SELECT * FROM simhash_pairs(q, k)), b AS (SELECT * FROM bf256 WHERE distance <= k)
	SELECT (SELECT count(*) FROM b), (SELECT count(*) FROM p),
	       (SELECT count(*) FROM b WHERE NOT EXISTS (SELECT 1 FROM p WHERE (p.id_a, p.id_b, p.distance) = (b.id_a, b.id_b, b.distance))),
	       (SELECT count(*) FROM p WHERE NOT EXISTS (SELECT 1 FROM b WHERE (p.id_a, p.id_b, p.distance) = (b.id_a, b.id_b, b.distance)))
$$;

-- exact: the same pairs, with the same distances, as the join
SELECT k, d.* FROM unnest('{0,8,30,49,64,80,112}'::int[]) k, pairs256_diff('SELECT id, fp, fp1 FROM w256', k) d;
-- spilled to temporary files: the same
SET work_mem = '64kB';
SELECT k, d.* FROM unnest('{0,49,80}'::int[]) k, pairs256_diff('SELECT id, fp, fp1 FROM w256', k) d;
RESET work_mem;
-- bands (simhash.pairs_recall below 1): only true pairs, each once, at their
-- distance; nearly all of them
SET simhash.pairs_recall = 0.9;
SELECT k, d.extra AS wrong, d.reported::float8 / d.brute >= 0.9 AS recall_at_least_0_9
FROM unnest('{30,49,80}'::int[]) k, pairs256_diff('SELECT id, fp, fp1 FROM w256', k) d;
SELECT count(*) - count(DISTINCT (id_a, id_b)) AS repeated FROM simhash_pairs('SELECT id, fp, fp1 FROM w256', 49);
RESET simhash.pairs_recall;

-- verified: the pairs of the join within k whose texts are similar enough
WITH p AS (SELECT * FROM simhash_pairs('SELECT id, fp, fp1, body FROM w256', 49, 0.8, 1, 'words')),
     b AS (SELECT * FROM bf256 WHERE distance <= 49 AND similarity >= 0.8)
SELECT (SELECT count(*) FROM b) AS brute, (SELECT count(*) FROM p) AS reported,
       (SELECT count(*) FROM p JOIN b USING (id_a, id_b, distance) WHERE abs(p.similarity - b.similarity) < 1e-12) AS equal;

-- clusters: the connected components of the join's pairs within k (named by
-- their smallest id)
CREATE FUNCTION components256(k integer, min_sim float8) RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE sql AS $$
	WITH RECURSIVE e AS (SELECT id_a AS a, id_b AS b FROM bf256 WHERE distance <= k AND similarity >= min_sim
	                     UNION ALL SELECT id_b, id_a FROM bf256 WHERE distance <= k AND similarity >= min_sim),
	r(id, root) AS (SELECT id, id FROM w256 WHERE fp IS NOT NULL AND fp1 IS NOT NULL
	                UNION SELECT e.b, r.root FROM r JOIN e ON e.a = r.id)
	SELECT id, min(root) FROM r GROUP BY id
$$;
SELECT count(*) AS rows, count(DISTINCT c.cluster_id) AS clusters,
       count(*) FILTER (WHERE c.cluster_id IS DISTINCT FROM r.cluster_id) AS differ
FROM simhash_clusters('SELECT id, fp, fp1 FROM w256', 49) c FULL JOIN components256(49, 0) r USING (id);
SELECT count(*) AS rows, count(*) FILTER (WHERE c.cluster_id IS DISTINCT FROM r.cluster_id) AS differ
FROM simhash_clusters('SELECT id, fp, fp1, body FROM w256', 49, 0.8, 1, 'words') c FULL JOIN components256(49, 0.8) r USING (id);
-- with a linkage, through the numbered rows of a rank: the same components
SELECT count(*) AS rows, count(*) FILTER (WHERE c.cluster_id IS DISTINCT FROM r.cluster_id) AS differ
FROM simhash_clusters('SELECT id, fp, fp1, id FROM w256', 49, 'single') c FULL JOIN components256(49, 0) r USING (id);

-- dedup: every removed row within k of the row it duplicates, and no two
-- kept rows within k of each other
WITH d AS (SELECT * FROM simhash_dedup('SELECT id, fp, fp1 FROM w256', 49))
SELECT count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS removed,
       count(*) FILTER (WHERE duplicate_of IS NOT NULL AND NOT EXISTS
           (SELECT 1 FROM bf256 b WHERE b.id_a = d.duplicate_of AND b.id_b = d.id AND b.distance <= 49)) AS removed_not_near,
       (SELECT count(*) FROM bf256 b JOIN d x ON x.id = b.id_a JOIN d y ON y.id = b.id_b
        WHERE b.distance <= 49 AND x.duplicate_of IS NULL AND y.duplicate_of IS NULL) AS kept_pairs_near
FROM d;
-- lineage: each row's distance to its kept row is the sum over both columns
SELECT count(*) AS rows,
       count(*) FILTER (WHERE l.distance <> (a.fp <~> b.fp) + (a.fp1 <~> b.fp1)) AS wrong_distance,
       max(l.distance) <= 49 AS within
FROM simhash_lineage('SELECT id, fp, fp1 FROM w256', 49, 'center') l
JOIN w256 a ON a.id = l.id JOIN w256 b ON b.id = l.kept_id;
-- ids of another type, through the keyed form: the same pairs
SELECT count(*) AS pairs, count(*) FILTER (WHERE k.distance = b.distance) AS equal
FROM simhash_pairs_keyed(NULL::text, 'SELECT id::text, fp, fp1 FROM w256', 49) k
LEFT JOIN bf256 b ON (b.id_a, b.id_b) = (least(k.id_a::bigint, k.id_b::bigint), greatest(k.id_a::bigint, k.id_b::bigint));

-- errors
SELECT count(*) FROM simhash_pairs('SELECT id, fp, fp1 FROM w256', 257);
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM w256', 129);
SELECT count(*) FROM simhash_pairs('SELECT id, fp, fp1 FROM w256', 49, 0.8, 1, 'words');
SELECT count(*) FROM simhash_pairs('SELECT id, fp, fp1, 1 FROM w256', 49, 0.8, 1, 'words');
SELECT count(*) FROM simhash_clusters('SELECT id, fp, fp1, body, 1, 2 FROM w256', 49, 0.8, 'center', 1, 'words');

-- a lookup by the 256-bit fingerprint: four 64-bit indexes on the halves of
-- both columns, each at k / 4 (a row within 49 is within 12 in one of the
-- four quarters), then the sum.  The same rows as a sequential scan, for
-- every row's fingerprint as the query.
CREATE INDEX w256_q0 ON w256 USING hamming (simhash128_high(fp));
CREATE INDEX w256_q1 ON w256 USING hamming (simhash128_low(fp));
CREATE INDEX w256_q2 ON w256 USING hamming (simhash128_high(fp1));
CREATE INDEX w256_q3 ON w256 USING hamming (simhash128_low(fp1));
ANALYZE w256;
CREATE FUNCTION lookup256(q simhash128, q1 simhash128) RETURNS SETOF bigint LANGUAGE sql STABLE AS $$
	SELECT id FROM w256
	WHERE (simhash128_high(fp) <~> simhash128_high(q) <= 12 OR simhash128_low(fp) <~> simhash128_low(q) <= 12
	       OR simhash128_high(fp1) <~> simhash128_high(q1) <= 12 OR simhash128_low(fp1) <~> simhash128_low(q1) <= 12)
	  AND (fp <~> q) + (fp1 <~> q1) <= 49
$$;
EXPLAIN (COSTS OFF) SELECT * FROM lookup256(shingle_simhash128('w1 w2 w3', 1, 'words', 0), shingle_simhash128('w1 w2 w3', 1, 'words', 1));
SET enable_seqscan = off;
CREATE TEMP TABLE by_index AS SELECT q.id AS qid, l AS id FROM w256 q, lookup256(q.fp, q.fp1) l WHERE q.fp1 IS NOT NULL;
RESET enable_seqscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE by_scan AS SELECT q.id AS qid, l AS id FROM w256 q, lookup256(q.fp, q.fp1) l WHERE q.fp1 IS NOT NULL;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM by_scan) AS scan, (SELECT count(*) FROM by_index) AS index,
       (SELECT count(*) FROM (SELECT * FROM by_scan EXCEPT SELECT * FROM by_index) d) AS missing,
       (SELECT count(*) FROM (SELECT * FROM by_index EXCEPT SELECT * FROM by_scan) d) AS extra;
