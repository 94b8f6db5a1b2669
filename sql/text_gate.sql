-- The gate: an exclusion constraint that rejects near-duplicate texts, its
-- threshold its own (in what it indexes, simhash_doc(body, t)), whatever a
-- session sets; the "flag instead of reject" recipe.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
\set VERBOSITY terse
CREATE TABLE sample_g (n int, cid text, lang text, role text, orig text, rate text,
                       source text, package text, body text);
\copy sample_g FROM 'test/data/sample.tsv'

CREATE TABLE articles (
	id bigint PRIMARY KEY,
	body text NOT NULL,
	EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=)
);
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'articles'::regclass AND contype = 'x';

-- the originals and the unrelated documents go in; every copy of 10% or
-- less is rejected, whatever simhash.similarity_threshold says
INSERT INTO articles SELECT n, body FROM sample_g WHERE role <> 'copy';
CREATE FUNCTION try_insert(i bigint, b text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO articles VALUES (i, b);
	RETURN 'inserted';
EXCEPTION WHEN exclusion_violation THEN
	RETURN 'rejected';
END $$;
SELECT s.rate, try_insert(s.n, s.body) AS result, count(*)
FROM sample_g s WHERE s.role = 'copy' AND s.rate IN ('0.01', '0.03', '0.05')
GROUP BY 1, 2 ORDER BY 1, 2;
SET simhash.similarity_threshold = 0.99;
SELECT try_insert(100000 + n, body) AS at_setting_099, count(*) FROM sample_g WHERE role = 'copy' AND rate = '0.01' GROUP BY 1;
SET simhash.similarity_threshold = 0.5;
SELECT try_insert(200000 + n, body) AS at_setting_05, count(*) FROM sample_g WHERE role = 'copy' AND rate = '0.20' GROUP BY 1 ORDER BY 1;
RESET simhash.similarity_threshold;
-- whether a copy got in is exactly whether no other row is near it at 0.8
SELECT count(*) AS copies_tried, count(*) FILTER (WHERE (EXISTS (SELECT FROM articles a WHERE a.id = s.n))
    = (EXISTS (SELECT FROM articles a WHERE a.id <> s.n AND simhash_similar(a.body, s.body, 0.8)))) AS disagreements
FROM sample_g s WHERE s.role = 'copy' AND s.rate IN ('0.01', '0.03', '0.05');

-- ON CONFLICT DO NOTHING skips a near-copy; an unrelated text goes in
INSERT INTO articles VALUES (900001, (SELECT body FROM sample_g WHERE n = 1) || ' one more sentence at the end.')
	ON CONFLICT DO NOTHING;
INSERT INTO articles VALUES (900002, 'an unrelated short note about the weather in the mountains this week')
	ON CONFLICT DO NOTHING;
SELECT id FROM articles WHERE id > 900000;
-- texts without shingles never conflict
INSERT INTO articles VALUES (900003, ''), (900004, ''), (900005, '!!!');
SELECT hamming_index_check(indexrelid::regclass) FROM pg_index WHERE indrelid = 'articles'::regclass AND indexrelid::regclass::text LIKE '%excl';

-- a gate added to a table that holds near-duplicates fails (find them first with simhash_mark_duplicates)
CREATE TABLE dirty (id bigint PRIMARY KEY, body text);
INSERT INTO dirty SELECT n, body FROM sample_g WHERE n <= 40;
ALTER TABLE dirty ADD CONSTRAINT dirty_gate EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=);
ALTER TABLE dirty ADD COLUMN dup bigint;
SELECT simhash_mark_duplicates('dirty', 'body', 'dup') > 0 AS some_marked;
DELETE FROM dirty WHERE dup IS NOT NULL;
ALTER TABLE dirty ADD CONSTRAINT dirty_gate EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=);

-- flag instead of reject: a trigger records the key of a near-duplicate
CREATE TABLE flagged (id bigint PRIMARY KEY, body text, near_of bigint);
CREATE INDEX ON flagged USING hamming (body);
CREATE FUNCTION flag_near() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.near_of := (SELECT f.id FROM flagged f WHERE simhash_similar(f.body, NEW.body, 0.8) ORDER BY f.id LIMIT 1);
	RETURN NEW;
END $$;
CREATE TRIGGER flagged_near BEFORE INSERT ON flagged FOR EACH ROW EXECUTE FUNCTION flag_near();
INSERT INTO flagged (id, body) SELECT n, body FROM sample_g ORDER BY n;
-- every flag is the first earlier row near it, and every row with such a row has its flag
SELECT count(*) FILTER (WHERE f.near_of IS NOT NULL) AS flagged,
       count(*) FILTER (WHERE (SELECT orig FROM sample_g WHERE n = f.near_of) = s.orig) AS same_family,
       count(*) FILTER (WHERE f.near_of IS DISTINCT FROM
         (SELECT min(e.id) FROM flagged e WHERE e.id < f.id AND shingle_similarity(e.body, f.body, 3, 'auto') >= 0.8
            AND simhash_similar(e.body, f.body, 0.8))) AS wrong
FROM flagged f JOIN sample_g s ON s.n = f.id;

-- one session's checks, each of which compares the new row with its
-- candidates through the text and shingles its backend keeps of the row
-- last compared: near-copies rejected and other texts let in exactly as a
-- sequential scan says, across deletes and VACUUM, an error, a merge and
-- TRUNCATE.  The texts: 40 words
-- each; a near-copy changes the last.
CREATE FUNCTION words(i int, last int DEFAULT 0) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg(CASE WHEN j = 40 AND last > 0 THEN 'changed' || last ELSE substr(md5(i || '.' || j), 1, 8) END, ' ' ORDER BY j)
	FROM generate_series(1, 40) j $$;
CREATE TABLE gated (id int PRIMARY KEY, body text, f simhash128[]) WITH (autovacuum_enabled = off);
-- each row's fingerprint, for the sequential scan below
CREATE FUNCTION gated_fingerprint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.f := shingle_simhash256(NEW.body, 3, 'auto');
	RETURN NEW;
END $$;
CREATE TRIGGER gated_fingerprint BEFORE INSERT ON gated FOR EACH ROW EXECUTE FUNCTION gated_fingerprint();
INSERT INTO gated SELECT i, words(i) FROM generate_series(1, 2000) i;
ALTER TABLE gated ADD CONSTRAINT gated_gate EXCLUDE USING hamming (simhash_doc(body, 0.8) WITH ~=);
-- a tail of three pages (VACUUM merges one of four)
INSERT INTO gated SELECT i, words(i) FROM generate_series(2001, 2400) i;
SELECT tail_pages, tail_entries FROM hamming_index_info('gated_gate');
-- the outcome of inserting (i, b): inserted, or rejected as a near-copy
CREATE FUNCTION gate_try(i int, b text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO gated (id, body) VALUES (i, b);
	RETURN 'inserted';
EXCEPTION WHEN exclusion_violation THEN
	RETURN 'rejected';
END $$;
-- near-copies of the rows ids (or new texts: copy 0), each against what a
-- sequential scan finds before its insert: the definition computed apart
-- (fingerprints within 49 bits, shingle similarity at least 0.8)
CREATE FUNCTION gate_round(first int, ids int[], copy int) RETURNS TABLE (outcome text, rows bigint, wrong bigint)
LANGUAGE plpgsql AS $$
DECLARE k int; b text; q simhash128[]; near bool; got text; n_in int := 0; n_out int := 0; n_wrong int := 0;
BEGIN
	FOR k IN 1 .. cardinality(ids) LOOP
		b := words(ids[k], copy);
		SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
		q := shingle_simhash256(b, 3, 'auto');
		near := EXISTS (SELECT FROM (SELECT body FROM gated WHERE (f[1] <~> q[1]) + (f[2] <~> q[2]) <= 49 OFFSET 0) g
		                WHERE shingle_similarity(g.body, b, 3, 'auto') >= 0.8);
		RESET enable_indexscan; RESET enable_bitmapscan;
		got := gate_try(first + k, b);
		IF got = 'inserted' THEN n_in := n_in + 1; ELSE n_out := n_out + 1; END IF;
		IF (got = 'rejected') <> near THEN n_wrong := n_wrong + 1; END IF;
	END LOOP;
	RETURN QUERY VALUES ('inserted', n_in::bigint, n_wrong::bigint), ('rejected', n_out, n_wrong);
END $$;
SELECT * FROM gate_round(10000, ARRAY[5, 50, 2100, 2200, 2390], 1);
SELECT * FROM gate_round(10100, ARRAY[3001, 3002, 3003], 0);
-- deletes of rows in the tail, VACUUM (no merge), new rows (which may take
-- over the freed TIDs, if no snapshot kept VACUUM from freeing them)
DELETE FROM gated WHERE id BETWEEN 2001 AND 2300;
VACUUM gated;
SELECT merges AS merges_by_vacuum FROM hamming_index_info('gated_gate');
SELECT * FROM gate_round(10200, ARRAY(SELECT generate_series(2001, 2300, 10)), 1);
INSERT INTO gated SELECT 10300 + i, words(4000 + i) FROM generate_series(1, 300) i;
SELECT * FROM gate_round(10700, ARRAY[2005, 2301, 2350, 4001, 4150], 2);
-- an error inside a check's transaction, then a merge, then TRUNCATE
BEGIN;
INSERT INTO gated (id, body) VALUES (20000, words(5000));
SAVEPOINT s;
INSERT INTO gated (id, body) VALUES (20001, words(5000, 3));
ROLLBACK TO s;
INSERT INTO gated (id, body) VALUES (20002, words(5001));
COMMIT;
SELECT * FROM gate_round(20100, ARRAY[5000, 5001, 5002], 4);
SELECT hamming_merge_tail('gated_gate') AS merged;
SELECT * FROM gate_round(20200, ARRAY[5000, 2390, 4100, 5003], 5);
TRUNCATE gated;
INSERT INTO gated SELECT i, words(i) FROM generate_series(1, 600) i;
SELECT * FROM gate_round(20300, ARRAY[10, 300, 590, 7000], 6);
-- ON CONFLICT checks a row twice, before and after its insert: the second
-- check takes the rows the first found in the tables, and its verdicts on
-- them.  In one transaction, a text, a merge that moves it into new tables,
-- then the same text and a near-copy of it: the new tables are read
BEGIN;
INSERT INTO gated (id, body) VALUES (40000, words(6000)) ON CONFLICT DO NOTHING;
SELECT hamming_merge_tail('gated_gate') AS merged;
INSERT INTO gated (id, body) VALUES (40001, words(6000)) ON CONFLICT DO NOTHING RETURNING id;
INSERT INTO gated (id, body) VALUES (40002, words(6000, 1)) ON CONFLICT DO NOTHING RETURNING id;
SELECT gate_try(40003, words(6000, 2)) AS copy_after_merge;
COMMIT;
SELECT array_agg(id ORDER BY id) AS kept FROM gated WHERE id BETWEEN 40000 AND 40003;
-- two gates on one table, at 0.99 and at 0.6, checked in either order: a
-- copy of similarity between the two passes the one at 0.99 and is stopped
-- by the one at 0.6, and an exact copy by both
CREATE FUNCTION two_gates(first float8, second float8) RETURNS TABLE (ins text, on_conflict bigint, stopped_by text)
LANGUAGE plpgsql AS $$
DECLARE c text;
BEGIN
	EXECUTE format('CREATE TEMP TABLE two (id int, body text, CONSTRAINT first EXCLUDE USING hamming (simhash_doc(body, %s) WITH ~=), '
		'CONSTRAINT second EXCLUDE USING hamming (simhash_doc(body, %s) WITH ~=))', first, second);
	INSERT INTO two VALUES (1, words(7000));
	FOREACH ins IN ARRAY ARRAY['copy', 'same'] LOOP
		WITH i AS (INSERT INTO two VALUES (2, CASE ins WHEN 'copy' THEN words(7000, 1) ELSE words(7000) END)
		           ON CONFLICT DO NOTHING RETURNING id)
		SELECT count(*) INTO on_conflict FROM i;
		BEGIN
			INSERT INTO two VALUES (3, CASE ins WHEN 'copy' THEN words(7000, 1) ELSE words(7000) END);
			stopped_by := 'none';
		EXCEPTION WHEN exclusion_violation THEN
			GET STACKED DIAGNOSTICS c = CONSTRAINT_NAME;
			stopped_by := c;
		END;
		RETURN NEXT;
	END LOOP;
	DROP TABLE two;
END $$;
SELECT shingle_similarity(words(7000), words(7000, 1), 3, 'auto') BETWEEN 0.6 AND 0.99 AS copy_between;
SELECT * FROM two_gates(0.99, 0.6);
SELECT * FROM two_gates(0.6, 0.99);
-- a text too large for the backend to keep (work_mem), and its near-copy
SET work_mem = '64kB';
INSERT INTO gated SELECT 30000, string_agg(words(8000 + i), ' ') FROM generate_series(1, 300) i;
SELECT gate_try(30001, string_agg(words(8000 + i), ' ') || ' one more') AS large_copy,
       gate_try(30002, string_agg(words(9000 + i), ' ')) AS large_new
FROM generate_series(1, 300) i;
RESET work_mem;
SELECT hamming_index_check('gated_gate');
-- whatever went in, no two rows of the table are near-duplicates
SELECT count(*) AS near_pairs FROM gated a JOIN gated b
	ON a.id < b.id AND (a.f[1] <~> b.f[1]) + (a.f[2] <~> b.f[2]) <= 49 AND shingle_similarity(a.body, b.body, 3, 'auto') >= 0.8;
