-- Scaling out (Citus), what can be checked on one node: the % operator takes
-- its threshold when the query is planned; the block keys of the permuted
-- tables give every pair of simhash_pairs() once; the hash functions that
-- place rows on shards are frozen.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

CREATE FUNCTION so_flip(fp simhash, nbits int, seed int) RETURNS simhash
LANGUAGE sql IMMUTABLE AS $$
	SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << b) FROM
		(SELECT b FROM generate_series(0, 63) b ORDER BY hashint4(b + 64 * seed) LIMIT nbits) s), 0))::simhash
$$;

-- 3,000 pseudo-random fingerprints and 300 near copies, 0..8 bits away
CREATE TABLE so AS
SELECT i AS id, ((hashint8extended(i, 7) # (hashint8extended(i, 8) << 17)))::simhash AS fp
FROM generate_series(1, 3000) i;
INSERT INTO so SELECT 10000 + id, so_flip(fp, id % 9, id) FROM so WHERE id <= 300;
INSERT INTO so SELECT 20000 + id, fp FROM so WHERE id <= 20;		-- exact copies
CREATE INDEX ON so USING gin (fp);
ANALYZE so;
SELECT fp AS q FROM so WHERE id = 5 \gset

-- ---- % takes simhash.max_distance when the query is planned ----

-- it becomes simhash_within(fp, q, <value>), answered by the index
SET simhash.max_distance = 4;
EXPLAIN (COSTS OFF) SELECT id FROM so WHERE fp % :'q';
-- in subqueries, CTEs and sublinks too
EXPLAIN (COSTS OFF, VERBOSE)
WITH c AS (SELECT id FROM so WHERE fp % :'q')
SELECT count(*) FROM c WHERE EXISTS (SELECT 1 FROM so s2 WHERE s2.id = c.id AND s2.fp % :'q');
SELECT simhash_similar('0000000000000000', '000000000000000f') AS within_4_is_similar,
       simhash_similar('0000000000000000', '000000000000001f') AS five_is_not;
-- one statement, one threshold: the value when it was planned (4 here), even
-- when the statement itself changes the setting as it runs (within 5 or 6 bits
-- there are 3 rows)
SELECT k, (SELECT count(*) FROM so WHERE fp % :'q') AS by_operator
FROM generate_series(3, 6) k, LATERAL set_config('simhash.max_distance', k::text, false) s
ORDER BY k;
-- statements planned after a change see it (PL/pgSQL plans are cached and
-- re-planned): pairs by % equal simhash_pairs for every threshold
CREATE FUNCTION so_sweep() RETURNS TABLE (threshold int, by_operator bigint, by_pairs bigint)
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 0..9 LOOP
		PERFORM set_config('simhash.max_distance', i::text, false);
		threshold := i;
		by_operator := (SELECT count(*) FROM so a JOIN so b ON a.fp % b.fp WHERE a.id < b.id);
		by_pairs := (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM so', i));
		RETURN NEXT;
	END LOOP;
END
$$;
SELECT * FROM so_sweep();

-- a cached plan holds the threshold: changing the setting re-plans it
SET plan_cache_mode = force_generic_plan;
PREPARE similar_to(simhash) AS SELECT count(*) FROM so WHERE fp % $1;
SET simhash.max_distance = 0;
EXECUTE similar_to(:'q');
SET simhash.max_distance = 8;
EXECUTE similar_to(:'q');
BEGIN;
SET LOCAL simhash.max_distance = 1;
EXECUTE similar_to(:'q');
ROLLBACK;
EXECUTE similar_to(:'q');
DEALLOCATE similar_to;
RESET plan_cache_mode;
-- PL/pgSQL caches the plans of its queries
CREATE FUNCTION so_similar_count(q simhash) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	RETURN (SELECT count(*) FROM so WHERE fp % q);
END
$$;
SET simhash.max_distance = 0;
SELECT so_similar_count(:'q') AS k0;
SET simhash.max_distance = 8;
SELECT so_similar_count(:'q') AS k8;
SELECT (SELECT count(*) FROM so WHERE fp <~> :'q' <= 8) AS k8_by_distance;
RESET simhash.max_distance;

-- a % that is evaluated rather than planned away (here inside ANY) refuses to
-- run on a node serving a Citus coordinator, whose setting it cannot know
SELECT '0000000000000000'::simhash % ANY (ARRAY['0000000000000001'::simhash]) AS evaluated;
SET application_name = 'citus_internal gpid=10000000001';
SELECT count(*) FROM so WHERE fp % :'q';	-- planned away: fine
SELECT '0000000000000000'::simhash % ANY (ARRAY['0000000000000001'::simhash]) AS evaluated;
RESET application_name;

-- ---- block keys of the permuted tables ----

-- 5 blocks of 13, 13, 13, 13 and 12 bits; max_distance 3: the C(5, 2) = 10
-- tables of 2 blocks, in lexicographic order: {1,2}, {1,3}, ... {4,5}
SELECT tab, to_hex(key) AS key FROM simhash_block_keys('0123456789abcdef', 3, 5);
SELECT to_hex(simhash_block(x, 1, 5)) AS b1, to_hex(simhash_block(x, 2, 5)) AS b2,
       to_hex(simhash_block(x, 5, 5)) AS b5
FROM (SELECT '0123456789abcdef'::simhash AS x) s;
-- max_distance 0: one table, the whole fingerprint
SELECT tab, key::simhash FROM simhash_block_keys('fedcba9876543210', 0, 1);
SELECT tab, key::simhash FROM simhash_block_keys('fedcba9876543210', 0, 4);
SELECT count(*) FROM simhash_block_keys('fedcba9876543210', 6, 9) AS c_9_6;

-- the first table whose blocks agree: a and b differ in block 1 only (bit 63)
SELECT simhash_first_common_table('8000000000000000', '0000000000000000', 3, 5) AS table_2_3;
-- in blocks 1 and 2: table {3,4} is the 8th
SELECT simhash_first_common_table('8004000000000000', '0000000000000000', 3, 5) AS table_3_4;
-- nowhere: table {1,2}; in 4 blocks of 5: fewer than 2 agree, NULL
SELECT simhash_first_common_table('0123456789abcdef', '0123456789abcdef', 3, 5) AS table_1_2,
       simhash_first_common_table('8004002001000000', '0000000000000000', 3, 5) IS NULL AS none;

-- a self-join of the keys gives every pair of simhash_pairs once, for
-- several layouts; pairs joined by a key table with a larger max_distance
-- are found too (a key table serves every smaller k)
CREATE TABLE so_result (k int, nblocks int, join_k int, pairs bigint, distinct_pairs bigint,
                        missing bigint, extra bigint);
CREATE FUNCTION so_check(k int, nblocks int, join_k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	CREATE TEMP TABLE so_keys AS
	SELECT b.key, b.tab, s.id, s.fp FROM so s, simhash_block_keys(s.fp, k, nblocks) b;
	CREATE TEMP TABLE so_joined AS
	SELECT a.id AS id_a, b.id AS id_b, (a.fp <~> b.fp)::int AS distance
	FROM so_keys a JOIN so_keys b ON a.key = b.key AND a.tab = b.tab AND a.id < b.id
	WHERE a.fp <~> b.fp <= join_k AND simhash_first_common_table(a.fp, b.fp, k, nblocks) = a.tab;
	INSERT INTO so_result
	SELECT k, nblocks, join_k, (SELECT count(*) FROM so_joined),
	       (SELECT count(*) FROM (SELECT DISTINCT id_a, id_b FROM so_joined) d),
	       (SELECT count(*) FROM (SELECT * FROM simhash_pairs('SELECT id, fp FROM so', join_k)
	                              EXCEPT SELECT * FROM so_joined) m),
	       (SELECT count(*) FROM (SELECT * FROM so_joined
	                              EXCEPT SELECT * FROM simhash_pairs('SELECT id, fp FROM so', join_k)) e);
	DROP TABLE so_keys, so_joined;
END
$$;
SELECT so_check(k, nb, jk) FROM (VALUES (0, 1, 0), (0, 3, 0), (1, 2, 1), (2, 4, 2), (3, 4, 3),
	(3, 5, 3), (3, 5, 2), (3, 6, 3), (4, 6, 4), (6, 8, 6), (6, 9, 6), (8, 10, 8)) v(k, nb, jk);
SELECT * FROM so_result ORDER BY k, nblocks, join_k;
-- the pairs exist
SELECT count(*) AS pairs_within_8 FROM simhash_pairs('SELECT id, fp FROM so', 8);

-- bad layouts
SELECT * FROM simhash_block_keys('0123456789abcdef', 3, 3);
SELECT * FROM simhash_block_keys('0123456789abcdef', -1, 3);
SELECT * FROM simhash_block_keys('0123456789abcdef', 64, 64);
SELECT * FROM simhash_block_keys('0123456789abcdef', 3, 65);
SELECT * FROM simhash_block_keys('0123456789abcdef', 12, 16);
SELECT * FROM simhash_block_keys('0123456789abcdef', 32, 64);
SELECT count(*) AS c_64_63 FROM simhash_block_keys('0123456789abcdef', 1, 64);
SELECT simhash_first_common_table('0123456789abcdef', '0123456789abcdef', 5, 5);

-- ---- the hash opclass places rows on Citus shards: its values are frozen ----
-- simhash_hash is PostgreSQL's hash of the 32-bit fold (low half xor high half)
SELECT fp, simhash_hash(fp), simhash_hash_extended(fp, 0), simhash_hash_extended(fp, 42)
FROM (VALUES ('0000000000000000'::simhash), ('ffffffffffffffff'), ('0123456789abcdef'),
             ('8000000000000001'), ('00000000ffffffff')) v(fp);
SELECT count(*) AS fingerprints,
       count(*) FILTER (WHERE simhash_hash(fp) = hashint4(fold)
                        AND simhash_hash_extended(fp, 7) = hashint4extended(fold, 7)) AS same_as_hashint4
FROM (SELECT fp, (((fp::bigint # (fp::bigint >> 32)) & 4294967295) - 2147483648)::int # (-2147483648) AS fold
      FROM so) s;

DROP TABLE so, so_result;
DROP FUNCTION so_flip(simhash, int, int), so_similar_count(simhash), so_check(int, int, int), so_sweep();
