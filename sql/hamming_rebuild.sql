-- What a backend keeps of a hamming index (block maps, full tail pages)
-- after the index is rebuilt in place: two TRUNCATEs in one transaction
-- keep the relfilenode of the first, and each lookup of the same backend
-- must answer as a sequential scan does.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

CREATE FUNCTION rb_fp(i int) RETURNS simhash LANGUAGE sql IMMUTABLE
	AS $$ SELECT ('x' || md5(i::text))::bit(64)::bigint::simhash $$;
CREATE TABLE rb (id int, fp simhash) WITH (autovacuum_enabled = off);
CREATE INDEX rb_fp_idx ON rb USING hamming (fp);
CREATE TABLE rb_probes (set text, fp simhash);
INSERT INTO rb_probes SELECT 'A', rb_fp(i) FROM generate_series(100001, 101746) i;
INSERT INTO rb_probes SELECT 'B', rb_fp(i) FROM generate_series(200001, 201746) i;
INSERT INTO rb_probes SELECT 'C', rb_fp(i) FROM generate_series(300001, 300600) i;

-- rows found at each set's probes within k bits, through the index and by a sequential scan
CREATE FUNCTION rb_answers(k int)
RETURNS TABLE (set text, by_index bigint, by_seqscan bigint, differ bigint)
LANGUAGE plpgsql AS $$
DECLARE q text := format('SELECT p.set, p.fp, t.id FROM rb_probes p, LATERAL (SELECT id FROM rb t '
						 'WHERE t.fp <@ simhash_ball(p.fp, %s)) t', k);
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_indexonlyscan', 'off', true);
	EXECUTE 'CREATE TEMP TABLE rb_index AS ' || q;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	EXECUTE 'CREATE TEMP TABLE rb_seq AS ' || q;
	PERFORM set_config('enable_indexscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('enable_indexonlyscan', 'on', true);
	RETURN QUERY
		SELECT s.set,
			(SELECT count(*) FROM rb_index i WHERE i.set = s.set),
			(SELECT count(*) FROM rb_seq q WHERE q.set = s.set),
			(SELECT count(*) FROM ((SELECT * FROM rb_index i WHERE i.set = s.set EXCEPT ALL
									SELECT * FROM rb_seq q WHERE q.set = s.set) UNION ALL
								   (SELECT * FROM rb_seq q WHERE q.set = s.set EXCEPT ALL
									SELECT * FROM rb_index i WHERE i.set = s.set)) d)
		FROM (VALUES ('A'), ('B'), ('C')) s(set) ORDER BY 1;
	DROP TABLE rb_index, rb_seq;
END $$;

-- TRUNCATE, load loaded rows, merge, then a set of rows [first, last] in the tail
CREATE FUNCTION rb_reload(loaded int, first int, last int) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE merged boolean;
BEGIN
	TRUNCATE rb;
	INSERT INTO rb SELECT i, rb_fp(i) FROM generate_series(1, loaded) i;
	merged := hamming_merge_tail('rb_fp_idx');
	INSERT INTO rb SELECT i, rb_fp(i) FROM generate_series(first, last) i;
	RETURN merged;
END $$;

BEGIN;
-- set A: three full tail pages, kept by this backend's lookups
SELECT rb_reload(5000, 100001, 101746);
SELECT pg_relation_filenode('rb_fp_idx') AS first_filenode \gset
SELECT * FROM rb_answers(0);
SELECT * FROM rb_answers(3);

-- in place: the same relfilenode, the first merge's numbers again
SELECT rb_reload(5000, 200001, 201746);
SELECT pg_relation_filenode('rb_fp_idx') = :first_filenode AS same_filenode;
SELECT * FROM rb_answers(0);
SELECT * FROM rb_answers(3);

-- again, with tables of another size (another block map)
SELECT rb_reload(12000, 300001, 300600);
SELECT pg_relation_filenode('rb_fp_idx') = :first_filenode AS same_filenode;
SELECT * FROM rb_answers(0);
SELECT * FROM rb_answers(3);
SELECT hamming_index_check('rb_fp_idx');
COMMIT;

-- the same after the commit, and in a table created in the transaction
SELECT * FROM rb_answers(2);
BEGIN;
CREATE TABLE rb2 (id int, fp simhash) WITH (autovacuum_enabled = off);
CREATE INDEX rb2_fp_idx ON rb2 USING hamming (fp);
INSERT INTO rb2 SELECT i, rb_fp(i) FROM generate_series(1, 5000) i;
SELECT hamming_merge_tail('rb2_fp_idx');
INSERT INTO rb2 SELECT i, rb_fp(i) FROM generate_series(100001, 101746) i;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexonlyscan = off;
SELECT count(*) FROM rb_probes p, LATERAL (SELECT 1 FROM rb2 t WHERE t.fp <@ simhash_ball(p.fp, 0)) t
	WHERE p.set = 'A';
TRUNCATE rb2;
INSERT INTO rb2 SELECT i, rb_fp(i) FROM generate_series(1, 5000) i;
SELECT hamming_merge_tail('rb2_fp_idx');
INSERT INTO rb2 SELECT i, rb_fp(i) FROM generate_series(200001, 201746) i;
SELECT p.set, count(*) FROM rb_probes p, LATERAL (SELECT 1 FROM rb2 t WHERE t.fp <@ simhash_ball(p.fp, 0)) t
	GROUP BY p.set ORDER BY 1;
ROLLBACK;

DROP TABLE rb, rb_probes;
DROP FUNCTION rb_answers(int), rb_reload(int, int, int), rb_fp(int);
