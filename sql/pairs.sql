-- simhash_pairs, simhash_clusters and simhash_dedup, checked against
-- brute-force references on random fingerprints with planted near copies
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT setseed(0.25);

-- a uniformly random fingerprint (random() has only 52 random bits: use two)
CREATE FUNCTION pairs_random() RETURNS simhash LANGUAGE sql VOLATILE AS $$
	SELECT ((floor(random() * 4294967296)::bigint << 32) |
			floor(random() * 4294967296)::bigint)::simhash
$$;

-- fp with exactly d distinct random bits flipped
CREATE FUNCTION pairs_flip(fp simhash, d integer) RETURNS simhash LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	mask bigint := 0;
BEGIN
	WHILE bit_count(mask::bit(64)) < d LOOP
		mask := mask | (1::bigint << floor(random() * 64)::integer);
	END LOOP;
	RETURN (fp::bigint # mask)::simhash;
END
$$;

-- ---------------------------------------------------------------------------
-- a small set: 400 random rows, 160 near copies of 40 of them at 0..8 bits
-- (0: exact duplicates), 10 chains of 6 rows 2 or 3 bits apart, 20 NULLs;
-- ids negative and positive
-- ---------------------------------------------------------------------------
CREATE TABLE pt (id bigint, fp simhash);
INSERT INTO pt SELECT g * 1000003 - 200000000, pairs_random() FROM generate_series(1, 400) g;
INSERT INTO pt
	SELECT 1000000 + g, pairs_flip(b.fp, g % 9)
	FROM generate_series(1, 160) g JOIN pt b ON b.id = (g % 40 + 1) * 1000003 - 200000000;
INSERT INTO pt
	WITH RECURSIVE chain(c, step, fp) AS (
		SELECT c, 0, pairs_random() FROM generate_series(1, 10) c
		UNION ALL
		SELECT c, step + 1, pairs_flip(fp, 2 + step % 2) FROM chain WHERE step < 5)
	SELECT 2000000 + c * 10 + step, fp FROM chain;
INSERT INTO pt SELECT 3000000 + g, NULL FROM generate_series(1, 20) g;
SELECT count(*) AS rows, count(fp) AS fingerprints, count(DISTINCT fp) AS distinct_fingerprints FROM pt;

-- brute force: every pair within 8 bits
CREATE TABLE pt_ref AS
	SELECT a.id AS id_a, b.id AS id_b, (a.fp <~> b.fp)::integer AS distance
	FROM pt a JOIN pt b ON a.id < b.id
	WHERE a.fp <~> b.fp <= 8;

-- pairs: the same set as the brute force, for k = 0..8
SELECT k,
	   (SELECT count(*) FROM pt_ref WHERE distance <= k) AS expected,
	   (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM pt', k)) AS found,
	   (SELECT count(*) FROM pt_ref WHERE distance = 0) AS exact_duplicates,
	   NOT EXISTS (SELECT * FROM simhash_pairs('SELECT id, fp FROM pt', k)
				   EXCEPT ALL SELECT * FROM pt_ref WHERE distance <= k) AS no_extra,
	   NOT EXISTS (SELECT * FROM pt_ref WHERE distance <= k
				   EXCEPT ALL SELECT * FROM simhash_pairs('SELECT id, fp FROM pt', k)) AS no_missing
FROM generate_series(0, 8) k;

-- the default max_distance is 3; rows can come in any order
SELECT count(*) AS pairs_k3,
	   bool_and(id_a < id_b) AS ordered
FROM simhash_pairs('SELECT id, fp FROM pt ORDER BY fp, id DESC');

-- larger distances: counts against the brute force; 64 is every pair
SELECT k,
	   (SELECT count(*) FROM pt a JOIN pt b ON a.id < b.id WHERE a.fp <~> b.fp <= k) AS expected,
	   (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM pt', k)) AS found
FROM unnest(ARRAY[12, 20, 32, 63, 64]) k;

-- integer and smallint ids
SELECT (SELECT count(*) FROM simhash_pairs('SELECT id::integer, fp FROM pt', 5)) AS int4_ids,
	   (SELECT count(*) FROM simhash_pairs(
			'SELECT row_number() OVER (ORDER BY id)::smallint, fp FROM pt', 5)) AS int2_ids,
	   (SELECT count(*) FROM pt_ref WHERE distance <= 5) AS expected;

-- clusters: the connected components of the brute-force pairs, each named
-- after its smallest id (every id reaches itself and its neighbours)
CREATE FUNCTION pairs_clusters_reference(k integer) RETURNS TABLE (id bigint, cluster_id bigint)
LANGUAGE sql AS $$
	WITH RECURSIVE edge(x, y) AS (
		SELECT id_a, id_b FROM pt_ref WHERE distance <= k
		UNION ALL
		SELECT id_b, id_a FROM pt_ref WHERE distance <= k),
	reach(id, r) AS (
		SELECT id, id FROM pt WHERE fp IS NOT NULL
		UNION
		SELECT reach.id, edge.y FROM reach JOIN edge ON edge.x = reach.r)
	SELECT id, min(r) FROM reach GROUP BY id
$$;

SELECT k,
	   (SELECT count(*) FROM simhash_clusters('SELECT id, fp FROM pt', k)) AS ids,
	   (SELECT count(DISTINCT id) FROM simhash_clusters('SELECT id, fp FROM pt', k)) AS distinct_ids,
	   (SELECT count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp FROM pt', k)) AS clusters,
	   (SELECT count(DISTINCT cluster_id) FROM pairs_clusters_reference(k)) AS expected_clusters,
	   NOT EXISTS (SELECT * FROM simhash_clusters('SELECT id, fp FROM pt', k)
				   EXCEPT SELECT * FROM pairs_clusters_reference(k)) AS no_extra,
	   NOT EXISTS (SELECT * FROM pairs_clusters_reference(k)
				   EXCEPT SELECT * FROM simhash_clusters('SELECT id, fp FROM pt', k)) AS no_missing
FROM generate_series(0, 8, 2) k;

-- dedup: the greedy rule, row by row in id order against the kept rows
CREATE FUNCTION pairs_dedup_reference(k integer) RETURNS TABLE (id bigint, duplicate_of bigint)
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	kept_ids bigint[] := '{}';
	kept_fps simhash[] := '{}';
BEGIN
	FOR r IN SELECT t.id, t.fp FROM pt t WHERE t.fp IS NOT NULL ORDER BY t.id LOOP
		id := r.id;
		SELECT min(u.i) INTO duplicate_of
			FROM unnest(kept_ids, kept_fps) AS u(i, f) WHERE u.f <~> r.fp <= k;
		IF duplicate_of IS NULL THEN
			kept_ids := kept_ids || r.id;
			kept_fps := kept_fps || r.fp;
		END IF;
		RETURN NEXT;
	END LOOP;
END
$$;

SELECT k,
	   (SELECT count(*) FROM simhash_dedup('SELECT id, fp FROM pt', k)) AS ids,
	   (SELECT count(*) FROM simhash_dedup('SELECT id, fp FROM pt', k) WHERE duplicate_of IS NULL) AS kept,
	   (SELECT count(*) FROM pairs_dedup_reference(k) WHERE duplicate_of IS NULL) AS expected_kept,
	   NOT EXISTS (SELECT * FROM simhash_dedup('SELECT id, fp FROM pt', k)
				   EXCEPT ALL SELECT * FROM pairs_dedup_reference(k)) AS no_extra,
	   NOT EXISTS (SELECT * FROM pairs_dedup_reference(k)
				   EXCEPT ALL SELECT * FROM simhash_dedup('SELECT id, fp FROM pt', k)) AS no_missing
FROM generate_series(0, 8, 2) k;

-- a chain a - b - c where a and c are too far apart: one cluster, and c is
-- kept by dedup because b, its only neighbour, was dropped
SELECT * FROM simhash_pairs($$VALUES (1, '0000000000000000'::simhash),
	(2, '0000000000000007'), (3, '000000000000003f')$$, 3) ORDER BY 1, 2;
SELECT * FROM simhash_clusters($$VALUES (1, '0000000000000000'::simhash),
	(2, '0000000000000007'), (3, '000000000000003f')$$, 3) ORDER BY 1;
SELECT * FROM simhash_dedup($$VALUES (1, '0000000000000000'::simhash),
	(2, '0000000000000007'), (3, '000000000000003f')$$, 3) ORDER BY 1;

-- no rows, one row, only NULL fingerprints
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM pt WHERE false', 3);
SELECT * FROM simhash_clusters($$SELECT 7, 'ffffffffffffffff'::simhash$$, 3);
SELECT * FROM simhash_dedup('SELECT id, fp FROM pt WHERE fp IS NULL', 3);

-- ---------------------------------------------------------------------------
-- the spill path: 20000 rows do not fit in 64kB
-- ---------------------------------------------------------------------------
CREATE TABLE big (id bigint, fp simhash);
INSERT INTO big SELECT g, pairs_random() FROM generate_series(1, 19000) g;
INSERT INTO big
	SELECT 19000 + g, pairs_flip(b.fp, g % 4)
	FROM generate_series(1, 1000) g JOIN big b ON b.id = g * 7;
INSERT INTO big VALUES (20001, NULL), (20002, NULL);

-- reference for k <= 3: a pair within 3 bits agrees on one of four 16-bit chunks
CREATE TABLE big_ref AS
	SELECT a.id AS id_a, b.id AS id_b, (a.fp <~> b.fp)::integer AS distance
	FROM big a JOIN big b ON a.id < b.id AND (a.fp::bigint >> 48) = (b.fp::bigint >> 48)
	WHERE a.fp <~> b.fp <= 3
	UNION
	SELECT a.id, b.id, (a.fp <~> b.fp)::integer
	FROM big a JOIN big b ON a.id < b.id AND (a.fp::bigint >> 32) & 65535 = (b.fp::bigint >> 32) & 65535
	WHERE a.fp <~> b.fp <= 3
	UNION
	SELECT a.id, b.id, (a.fp <~> b.fp)::integer
	FROM big a JOIN big b ON a.id < b.id AND (a.fp::bigint >> 16) & 65535 = (b.fp::bigint >> 16) & 65535
	WHERE a.fp <~> b.fp <= 3
	UNION
	SELECT a.id, b.id, (a.fp <~> b.fp)::integer
	FROM big a JOIN big b ON a.id < b.id AND a.fp::bigint & 65535 = b.fp::bigint & 65535
	WHERE a.fp <~> b.fp <= 3;

-- in memory (4MB) and spilled (64kB), the rows in random order
CREATE TABLE big_pairs AS SELECT * FROM simhash_pairs('SELECT id, fp FROM big ORDER BY random()', 3);
CREATE TABLE big_clusters AS SELECT * FROM simhash_clusters('SELECT id, fp FROM big', 5);
CREATE TABLE big_dedup AS SELECT * FROM simhash_dedup('SELECT id, fp FROM big', 5);
-- (hash_mem_multiplier: the per-id tables of clusters and dedup hold the
-- 1750 fingerprints that have a near-duplicate, more than 2 x 64kB)
SET work_mem = '64kB';
SET hash_mem_multiplier = 32;
SELECT k,
	   (SELECT count(*) FROM big_ref WHERE distance <= k) AS expected,
	   (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM big ORDER BY random()', k)) AS found,
	   NOT EXISTS (SELECT * FROM simhash_pairs('SELECT id, fp FROM big ORDER BY random()', k)
				   EXCEPT ALL SELECT * FROM big_ref WHERE distance <= k) AS no_extra,
	   NOT EXISTS (SELECT * FROM big_ref WHERE distance <= k
				   EXCEPT ALL SELECT * FROM simhash_pairs('SELECT id, fp FROM big ORDER BY random()', k)) AS no_missing
FROM generate_series(0, 3) k;
SELECT (SELECT count(*) FROM big_pairs) AS in_memory,
	   NOT EXISTS (SELECT * FROM big_pairs EXCEPT ALL SELECT * FROM big_ref) AS same_as_reference;
SELECT (SELECT count(DISTINCT cluster_id) FROM big_clusters) AS clusters_in_memory,
	   NOT EXISTS (SELECT * FROM simhash_clusters('SELECT id, fp FROM big', 5)
				   EXCEPT ALL SELECT * FROM big_clusters) AS no_extra,
	   NOT EXISTS (SELECT * FROM big_clusters
				   EXCEPT ALL SELECT * FROM simhash_clusters('SELECT id, fp FROM big', 5)) AS no_missing;
SELECT (SELECT count(*) FROM big_dedup WHERE duplicate_of IS NULL) AS kept_in_memory,
	   NOT EXISTS (SELECT * FROM simhash_dedup('SELECT id, fp FROM big', 5)
				   EXCEPT ALL SELECT * FROM big_dedup) AS no_extra,
	   NOT EXISTS (SELECT * FROM big_dedup
				   EXCEPT ALL SELECT * FROM simhash_dedup('SELECT id, fp FROM big', 5)) AS no_missing;

-- 2100 copies of one fingerprint: more rows of one key than 64kB holds.
-- simhash_pairs compares them in memory: a clear error, and with the
-- work_mem its hint asks for, all n (n - 1) / 2 pairs; clusters and dedup
-- collapse them into one row first
CREATE TABLE same AS
	SELECT g AS id, CASE WHEN g <= 2100 THEN '0123456789abcdef'::simhash ELSE pairs_random() END AS fp
	FROM generate_series(1, 3000) g;
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM same', 0);
SET work_mem = '101kB';
SELECT count(*) AS pairs, 2100 * 2099 / 2 AS expected, max(distance) AS max_distance
FROM simhash_pairs('SELECT id, fp FROM same', 0);
SET work_mem = '64kB';
SELECT count(DISTINCT cluster_id) AS clusters, count(*) FILTER (WHERE cluster_id = 1) AS in_first
FROM simhash_clusters('SELECT id, fp FROM same', 2);
SELECT count(*) FILTER (WHERE duplicate_of IS NULL) AS kept,
	   count(*) FILTER (WHERE duplicate_of = 1) AS duplicates_of_first
FROM simhash_dedup('SELECT id, fp FROM same', 2);

-- a repeated id is found in a spilled input too
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM big UNION ALL SELECT 777, fp FROM big WHERE id = 12345', 3);
RESET work_mem;
RESET hash_mem_multiplier;

-- ---------------------------------------------------------------------------
-- errors
-- ---------------------------------------------------------------------------
SELECT * FROM simhash_pairs('SELECT id FROM pt', 3);
SELECT * FROM simhash_pairs('SELECT id, fp, 1 FROM pt', 3);
SELECT * FROM simhash_pairs('SELECT id::text, fp FROM pt', 3);
SELECT * FROM simhash_pairs('SELECT id, fp::bigint FROM pt', 3);
SELECT * FROM simhash_clusters('SELECT id::numeric, fp FROM pt', 3);
SELECT * FROM simhash_dedup('CREATE TABLE nothing (a integer)', 3);
SELECT * FROM simhash_pairs('SELEC id, fp FROM pt', 3);
SELECT * FROM simhash_pairs($$VALUES (1, '0000000000000000'::simhash), (2, 'ffffffffffffffff'), (1, '00000000000000ff')$$, 3);
SELECT * FROM simhash_clusters($$VALUES (1, NULL::simhash), (NULL, 'ffffffffffffffff')$$, 3);
SELECT * FROM simhash_pairs('SELECT id, fp FROM pt', -1);
SELECT * FROM simhash_dedup('SELECT id, fp FROM pt', 65);
-- their SQLSTATEs
CREATE FUNCTION pairs_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END
$$;
SELECT query, pairs_sqlstate(query) FROM (VALUES
	('SELECT simhash_pairs(''SELECT id FROM pt'')'),
	('SELECT simhash_pairs(''SELECT id::text, fp FROM pt'')'),
	('SELECT simhash_pairs(''SELECT id, fp::bigint FROM pt'')'),
	('SELECT simhash_pairs(''CREATE TABLE nothing (a integer)'')'),
	('SELECT simhash_pairs(''SELECT 1, fp FROM pt'')'),
	('SELECT simhash_pairs(''SELECT NULL::bigint, fp FROM pt'')'),
	('SELECT simhash_pairs(''SELECT id, fp FROM pt'', 65)')) AS q(query);

-- a repeated id whose second row has a NULL fingerprint is skipped with it
SELECT * FROM simhash_pairs($$VALUES (1, '0000000000000000'::simhash), (2, '0000000000000001'), (1, NULL)$$, 3);
-- STRICT: a NULL max_distance returns nothing
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM pt', NULL);

DROP TABLE pt, pt_ref, big, big_ref, big_pairs, big_clusters, big_dedup, same;
DROP FUNCTION pairs_random(), pairs_flip(simhash, integer), pairs_sqlstate(text),
	pairs_clusters_reference(integer), pairs_dedup_reference(integer);
