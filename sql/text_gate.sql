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
