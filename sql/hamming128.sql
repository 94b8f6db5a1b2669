-- The hamming access method over simhash128: index answers equal the
-- sequential scan's for every radius K = 0..128 and for nearest-first
-- orderings, after a build, inserts, updates, deletes, VACUUM and REINDEX.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- twenty centers with copies at 0 to 44 bits from them, unrelated values, NULLs
CREATE TABLE h128 (id int PRIMARY KEY, fp simhash128);
INSERT INTO h128
SELECT i, CASE WHEN i % 97 = 0 THEN NULL
			   WHEN i % 5 = 0 THEN md5(i::text)::simhash128
			   ELSE (md5((i % 20)::text)::simhash128::bit(128)
					 # (repeat('1', i % 45) || repeat('0', 128 - i % 45))::bit(128))::simhash128 END
FROM generate_series(1, 3000) i;
CREATE INDEX h128_fp ON h128 USING hamming (fp);

-- every radius, some queries, through an index scan and a bitmap scan,
-- against the sequential scan: cond is the condition the index answers ($1 the
-- query, $2 the radius), equal in meaning to "fp <~> $1 <= $2"; each plan is
-- checked to use an index
CREATE FUNCTION pg_temp.radius_mismatches(tbl text DEFAULT 'h128', cond text DEFAULT 'fp <~> $1 <= $2',
		scans text[] DEFAULT ARRAY['index', 'bitmap'],
		queries simhash128[] DEFAULT ARRAY[md5('3')::simhash128, '00000000000000000000000000000000'::simhash128])
	RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	q simhash128;
	k int;
	bad int := 0;
	want int[];
	got int[];
	scan text;
	plan text;
	indexed bool;
BEGIN
	FOREACH q IN ARRAY queries LOOP
		FOR k IN 0..128 LOOP
			SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = on;
			EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE fp <~> $1 <= $2', tbl) INTO want USING q, k;
			FOREACH scan IN ARRAY scans LOOP
				SET LOCAL enable_seqscan = off;
				IF scan = 'index' THEN
					SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = off;
				ELSE
					SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = on;
				END IF;
				indexed := false;
				FOR plan IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT id FROM %I WHERE %s', tbl, cond) USING q, k LOOP
					indexed := indexed OR plan LIKE '%Index Scan%';
				END LOOP;
				IF NOT indexed THEN
					bad := bad + 1;
					RAISE NOTICE '% scan, k = %: no index in the plan', scan, k;
				END IF;
				EXECUTE format('SELECT array_agg(id ORDER BY id) FROM %I WHERE %s', tbl, cond) INTO got USING q, k;
				IF got IS DISTINCT FROM want THEN
					bad := bad + 1;
					RAISE NOTICE '% scan, k = %, q = %: % rows, want %', scan, k, q, cardinality(got), cardinality(want);
				END IF;
			END LOOP;
		END LOOP;
	END LOOP;
	RESET enable_indexscan; RESET enable_bitmapscan; RESET enable_seqscan;
	RETURN bad;
END $$;

-- nearest first: the index's order of (distance, id) pairs is sorted, its
-- distances are the sequential scan's, and LIMIT n takes the n nearest
CREATE FUNCTION pg_temp.order_mismatches() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	q simhash128;
	n int;
	bad int := 0;
	want int[];
	got int[];
	ids int[];
	total int;
BEGIN
	SELECT count(*) INTO total FROM h128;
	FOREACH q IN ARRAY ARRAY[md5('3')::simhash128, md5('7')::simhash128, 'ffffffffffffffffffffffffffffffff'::simhash128] LOOP
		FOREACH n IN ARRAY ARRAY[1, 10, 250, 100000] LOOP
			SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = on;
			SELECT array_agg(d ORDER BY r), array_agg(id ORDER BY r) INTO got, ids
			FROM (SELECT id, fp <~> q AS d, row_number() OVER () AS r
				  FROM (SELECT id, fp FROM h128 ORDER BY fp <~> q LIMIT n) s) x;
			RESET enable_seqscan; RESET enable_indexscan; SET LOCAL enable_indexscan = off;
			SELECT array_agg(d ORDER BY d NULLS LAST) INTO want
			FROM (SELECT fp <~> q AS d FROM h128 ORDER BY fp <~> q NULLS LAST LIMIT n) s;
			IF got IS DISTINCT FROM want OR cardinality(ids) <> LEAST(n, total)
			   OR (SELECT count(DISTINCT i) FROM unnest(ids) i) <> cardinality(ids) THEN
				bad := bad + 1;
				RAISE NOTICE 'order by, n = %, q = %: got % rows', n, q, cardinality(ids);
			END IF;
		END LOOP;
	END LOOP;
	RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_indexscan;
	RETURN bad;
END $$;

SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM h128 WHERE fp <~> md5('3')::simhash128 <= 28;
EXPLAIN (COSTS OFF) SELECT id FROM h128 WHERE fp <@ simhash128_ball(md5('3')::simhash128, 28) AND fp = md5('3')::simhash128;
EXPLAIN (COSTS OFF) SELECT id FROM h128 ORDER BY fp <~> md5('3')::simhash128 LIMIT 5;
RESET enable_seqscan;
SELECT pg_temp.radius_mismatches() AS after_build, pg_temp.order_mismatches() AS order_after_build;

-- inserts (into the partly filled last page and new pages, NULLs too)
INSERT INTO h128
SELECT i, CASE WHEN i % 50 = 0 THEN NULL
			   ELSE (md5((i % 7)::text)::simhash128::bit(128)
					 # (repeat('0', 128 - i % 33) || repeat('1', i % 33))::bit(128))::simhash128 END
FROM generate_series(3001, 4200) i;
SELECT pg_temp.radius_mismatches() AS after_inserts, pg_temp.order_mismatches() AS order_after_inserts;
-- updates and deletes, before and after VACUUM (which lists thinned pages for new rows)
UPDATE h128 SET fp = md5((id + 1)::text)::simhash128 WHERE id % 3 = 0;
DELETE FROM h128 WHERE id % 4 = 1;
SELECT pg_temp.radius_mismatches() AS after_updates_deletes;
VACUUM h128;
SELECT pg_temp.radius_mismatches() AS after_vacuum, pg_temp.order_mismatches() AS order_after_vacuum;
INSERT INTO h128 SELECT i, md5(i::text)::simhash128 FROM generate_series(5001, 5600) i;
UPDATE h128 SET fp = NULL WHERE id % 11 = 0;
SELECT pg_temp.radius_mismatches() AS after_refill, pg_temp.order_mismatches() AS order_after_refill;
REINDEX INDEX h128_fp;
SELECT pg_temp.radius_mismatches() AS after_reindex, pg_temp.order_mismatches() AS order_after_reindex;

-- conditions that match nothing, a NULL query, equality, every row without conditions
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) AS empty_ball FROM h128 WHERE fp <@ ('(' || md5('3') || ',-1)')::simhash128_ball;
SELECT count(*) AS null_query FROM h128 WHERE fp <~> NULL::simhash128 <= 10;
SELECT count(*) AS equal FROM h128 WHERE fp = md5('10')::simhash128;
SELECT count(*) = (SELECT count(*) FROM h128 WHERE fp = md5('10')::simhash128 OR false) AS equal_matches
FROM h128 WHERE fp::text = md5('10');
-- never an index-only scan (count(*) after VACUUM): the heap is visited
VACUUM h128;
EXPLAIN (COSTS OFF) SELECT count(*) FROM h128;
EXPLAIN (COSTS OFF) SELECT count(*) FROM h128 WHERE fp <~> md5('3')::simhash128 <= 40;
SELECT count(*) AS index_count, (SELECT count(*) FROM h128 WHERE (fp <~> md5('3')::simhash128)::int <= 40) AS seq_count
FROM h128 WHERE fp <~> md5('3')::simhash128 <= 40;
SELECT count(*) AS all_rows, count(*) FILTER (WHERE fp IS NULL) AS null_rows,
       (SELECT count(*) FROM h128) AS table_rows
FROM (SELECT id, fp FROM h128 ORDER BY fp <~> md5('3')::simhash128) s;
SELECT bool_and(d IS NULL) AS nulls_last FROM (
	SELECT fp <~> md5('3')::simhash128 AS d, row_number() OVER () AS r
	FROM (SELECT fp FROM h128 ORDER BY fp <~> md5('3')::simhash128) s) x
WHERE r > (SELECT count(fp) FROM h128);
RESET enable_seqscan; RESET enable_bitmapscan;

-- an unlogged table's index, truncation, and the 64-bit index beside it
CREATE UNLOGGED TABLE h128u (fp simhash128);
CREATE INDEX ON h128u USING hamming (fp);
INSERT INTO h128u SELECT md5(i::text)::simhash128 FROM generate_series(1, 100) i;
TRUNCATE h128u;
INSERT INTO h128u SELECT md5(i::text)::simhash128 FROM generate_series(1, 10) i;
SET enable_seqscan = off;
SELECT count(*) AS unlogged_rows FROM h128u WHERE fp <~> md5('1')::simhash128 <= 128;
RESET enable_seqscan;
CREATE TABLE both_widths (fp simhash, fp2 simhash128);
INSERT INTO both_widths SELECT simhash(md5(i::text)::text), simhash128(md5(i::text)::text) FROM generate_series(1, 500) i;
CREATE INDEX ON both_widths USING hamming (fp);
CREATE INDEX ON both_widths USING hamming (fp2);
SET enable_seqscan = off;
SELECT count(*) FILTER (WHERE fp <~> simhash('c4ca4238a0b923820dcc509a6f75849b'::text) <= 20) AS near64,
       (SELECT count(*) FROM both_widths WHERE fp2 <~> simhash128('c4ca4238a0b923820dcc509a6f75849b'::text) <= 40) AS near128
FROM both_widths;
RESET enable_seqscan;
SELECT count(*) FILTER (WHERE fp <~> simhash('c4ca4238a0b923820dcc509a6f75849b'::text) <= 20) AS near64_seq,
       (SELECT count(*) FROM both_widths WHERE (fp2 <~> simhash128('c4ca4238a0b923820dcc509a6f75849b'::text))::int <= 40) AS near128_seq
FROM both_widths;
-- an exclusion constraint: no two equal fingerprints
CREATE TABLE uniq128 (fp simhash128, EXCLUDE USING hamming (fp WITH =));
INSERT INTO uniq128 SELECT md5(i::text)::simhash128 FROM generate_series(1, 300) i;
INSERT INTO uniq128 VALUES (md5('7')::simhash128);
INSERT INTO uniq128 VALUES (md5('7x')::simhash128), (NULL), (NULL);
SELECT count(*) AS uniq_rows FROM uniq128;
-- lookups by probes: two 64-bit hamming indexes on the halves.  A row within
-- K bits of q is within K / 2 bits of q in one half (d(high) + d(low) <= K),
-- so "(high within K / 2 OR low within K / 2) AND fp <~> q <= K" is exact;
-- the planner answers the OR by a BitmapOr of the two indexes.  Copies here
-- differ from their centers in both halves, in every proportion.
CREATE TABLE halves (id int PRIMARY KEY, fp simhash128);
INSERT INTO halves
SELECT i, CASE WHEN i % 97 = 0 THEN NULL
			   WHEN i % 5 = 0 THEN md5(i::text)::simhash128
			   ELSE (md5((i % 7)::text)::simhash128::bit(128)
					 # (repeat('1', i % 41) || repeat('0', 64 - i % 41)
						|| repeat('0', 64 - i * 7 % 37) || repeat('1', i * 7 % 37))::bit(128))::simhash128 END
FROM generate_series(1, 3000) i;
CREATE INDEX halves_high ON halves USING hamming (simhash128_high(fp));
CREATE INDEX halves_low ON halves USING hamming (simhash128_low(fp));
ANALYZE halves;
SET enable_seqscan = off; SET enable_indexscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM halves
WHERE (simhash128_high(fp) <~> simhash128_high(md5('3')::simhash128) <= 13
	   OR simhash128_low(fp) <~> simhash128_low(md5('3')::simhash128) <= 13)
  AND fp <~> md5('3')::simhash128 <= 26;
RESET enable_seqscan; RESET enable_indexscan;
SELECT pg_temp.radius_mismatches('halves',
		'(simhash128_high(fp) <~> simhash128_high($1) <= $2 / 2 OR simhash128_low(fp) <~> simhash128_low($1) <= $2 / 2) '
		'AND fp <~> $1 <= $2', ARRAY['bitmap'],
		ARRAY[md5('3')::simhash128, md5('6')::simhash128, '00000000000000000000000000000000'::simhash128]) AS halves_mismatches,
	   (SELECT count(*) FROM halves WHERE fp <~> md5('3')::simhash128 <= 26) AS within_26_of_one_center;
DROP TABLE h128, h128u, both_widths, uniq128, halves;
