-- The recipes on a fingerprint column (doc/indexing.md, doc/batch.md), on
-- rows whose answers are known, and the exclusion constraint on
-- fingerprints (its threshold is the index option max_distance, not the
-- session's setting).  The text index's recipes: text_index, text_gate.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
-- the documentation's table names, in a schema of their own (the suite shares a database)
CREATE SCHEMA recipes;
SET search_path = recipes, public;

CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL,
                   fp simhash GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO docs (body) VALUES
  ('PostgreSQL is a powerful, open source object-relational database system with over 35 years of active development that has earned it a strong reputation for reliability, feature robustness, and performance.'),
  ('PostgreSQL is a powerful, open source object-relational database system with over 36 years of active development that has earned it a strong reputation for reliability, feature robustness and performance!'),
  ('SQLite is a C-language library that implements a small, fast, self-contained, high-reliability, full-featured, SQL database engine. SQLite is the most used database engine in the world.'),
  ('中文新闻去重是一个老问题：同一篇报道经常被多家网站转载，标题和正文只有细微差别，有时只是多了一行广告或者改了几个字。'),
  ('中文新闻去重是一个老问题：同一篇报道常常被多家网站转载，标题和正文只有细微差别，有时只是多了一行广告或者改了几个字。'),
  ('PostgreSQL is a powerful, open source object-relational database system with over 35 years of active development that has earned it a strong reputation for reliability, feature robustness, and performance.');
CREATE INDEX docs_fp ON docs USING hamming (fp);
\set new_doc 'PostgreSQL is a powerful, open source object-relational database system with over 37 years of active development that has earned it a strong reputation for reliability, feature robustness, and performance.'

-- near-copies of a new document, with a score: the index answer equals the
-- sequential scan's, and the similarity is the Jaccard of the shingle sets
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs
WHERE fp <~> simhash(:'new_doc'::text) <= 16 AND shingle_similarity(body, :'new_doc') >= 0.8;
CREATE TEMP TABLE by_index AS
SELECT id, fp <~> simhash(:'new_doc'::text) AS distance, shingle_similarity(body, :'new_doc') AS similarity
FROM docs WHERE fp <~> simhash(:'new_doc'::text) <= 16 AND shingle_similarity(body, :'new_doc') >= 0.8;
RESET enable_seqscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE by_scan AS
SELECT id, fp <~> simhash(:'new_doc'::text) AS distance, shingle_similarity(body, :'new_doc') AS similarity
FROM docs WHERE fp <~> simhash(:'new_doc'::text) <= 16 AND shingle_similarity(body, :'new_doc') >= 0.8;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT (SELECT array_agg(id ORDER BY id) FROM by_index) = (SELECT array_agg(id ORDER BY id) FROM by_scan) AS same_rows,
       (SELECT array_agg(id ORDER BY id) FROM by_index) AS ids;
-- the score is the Jaccard similarity of the two shingle sets
SELECT id, distance, round(similarity::numeric, 4) AS similarity,
       similarity = (SELECT count(*) FROM (SELECT unnest(shingle_set(body)) INTERSECT SELECT unnest(shingle_set(:'new_doc'))) i)::float8
                    / (SELECT count(*) FROM (SELECT unnest(shingle_set(body)) UNION SELECT unnest(shingle_set(:'new_doc'))) u) AS jaccard
FROM by_index JOIN docs USING (id) ORDER BY id;

-- the n most similar: nearest first through the index, the same distances as a sort
SET enable_seqscan = off;
SELECT array_agg(d ORDER BY ord) AS by_index FROM (
  SELECT fp <~> simhash(:'new_doc'::text) AS d, row_number() OVER () AS ord
  FROM (SELECT fp FROM docs ORDER BY fp <~> simhash(:'new_doc'::text) LIMIT 3) s) x;
RESET enable_seqscan;
SELECT array_agg(d ORDER BY d) AS by_sort FROM (
  SELECT fp <~> simhash(:'new_doc'::text) AS d FROM docs ORDER BY 1 LIMIT 3) x;

-- every near-duplicate: verified pairs, groups, keep-the-first
SELECT id_a, id_b, distance, round(similarity::numeric, 3) AS similarity
FROM simhash_pairs('SELECT id, fp, body FROM docs', 16, 0.8) ORDER BY id_a, id_b;
SELECT * FROM simhash_clusters('SELECT id, fp, body FROM docs', 16, 0.8) ORDER BY id;
SELECT * FROM simhash_dedup('SELECT id, fp, body FROM docs', 16, 0.8) ORDER BY id;
-- units => 'auto': characters for a text written mostly in CJK characters,
-- words for the others, decided for each text
SELECT id, shingle_set(body, 3, 'auto') = shingle_set(body, 3, 'characters') AS as_characters,
       shingle_set(body, 3, 'auto') = shingle_set(body, 3, 'words') AS as_words
FROM docs ORDER BY id;
SELECT shingle_similarity(a.body, b.body, 3, 'auto') = shingle_similarity(a.body, b.body, 3, 'characters') AS zh,
       shingle_similarity(c.body, d.body, 3, 'auto') = shingle_similarity(c.body, d.body, 3, 'words') AS en
FROM docs a, docs b, docs c, docs d WHERE a.id = 4 AND b.id = 5 AND c.id = 1 AND d.id = 2;
-- more CJK characters than other words: characters (where the two differ)
SELECT t, shingle_set(t, 3, 'auto') = shingle_set(t, 3, 'characters') AS as_characters,
       shingle_set(t, 3, 'auto') = shingle_set(t, 3, 'words') AS as_words
FROM (VALUES ('PostgreSQL 15 去重'), ('PostgreSQL 15 数据库去重'), ('PostgreSQL database 15 数据库去重'), ('')) v(t);
-- a table in two languages in one call equals one call per language
SELECT (SELECT array_agg(p ORDER BY p) FROM simhash_pairs('SELECT id, fp, body FROM docs', 16, 0.5, units => 'auto') p)
     = (SELECT array_agg(p ORDER BY p) FROM (
          SELECT * FROM simhash_pairs('SELECT id, fp, body FROM docs WHERE id < 4 OR id = 6', 16, 0.5, 3, 'words')
          UNION ALL
          SELECT * FROM simhash_pairs('SELECT id, fp, body FROM docs WHERE id IN (4, 5)', 16, 0.5, 3, 'characters')) p)
       AS same_pairs;
SELECT id_a, id_b, round(similarity::numeric, 3) AS similarity
FROM simhash_pairs('SELECT id, fp, body FROM docs', 16, 0.5, units => 'auto') ORDER BY id_a, id_b;
-- the text in place of the fingerprint: the hint says how to fingerprint it
SELECT * FROM simhash_dedup('SELECT id, body FROM docs', 9);

-- move duplicates to an archive (a generated column in the source)
BEGIN;
CREATE TABLE docs_removed (id bigint PRIMARY KEY, body text NOT NULL, fp simhash,
                           duplicate_of bigint NOT NULL);
WITH d AS (
  SELECT id, duplicate_of FROM simhash_dedup('SELECT id, fp, body FROM docs', 16, 0.8)
  WHERE duplicate_of IS NOT NULL
), moved AS (
  DELETE FROM docs USING d WHERE docs.id = d.id
  RETURNING docs.id, docs.body, docs.fp, d.duplicate_of
)
INSERT INTO docs_removed (id, body, fp, duplicate_of) SELECT * FROM moved;
SELECT count(*) AS orphans FROM docs_removed r
WHERE NOT EXISTS (SELECT 1 FROM docs k WHERE k.id = r.duplicate_of);
SELECT id, duplicate_of, fp = simhash(body) AS fp_kept FROM docs_removed ORDER BY id;
SELECT array_agg(id ORDER BY id) AS left_in_docs FROM docs;
-- nothing near is left: no verified pair among the kept rows
SELECT count(*) AS pairs_left FROM simhash_pairs('SELECT id, fp, body FROM docs', 16, 0.8);
ROLLBACK;

-- mark instead of move
ALTER TABLE docs ADD COLUMN duplicate_of bigint;
UPDATE docs SET duplicate_of = d.duplicate_of
FROM simhash_dedup('SELECT id, fp, body FROM docs', 16, 0.8) d
WHERE docs.id = d.id AND d.duplicate_of IS NOT NULL;
SELECT id, duplicate_of FROM docs ORDER BY id;

-- backfill in batches, each committed, with a trigger for new rows
CREATE TABLE articles_big (id bigserial PRIMARY KEY, body text NOT NULL);
INSERT INTO articles_big (body)
SELECT 'article number ' || i || ' about databases, fingerprints and near-duplicate text'
FROM generate_series(1, 2500) i;
ALTER TABLE articles_big ADD COLUMN fp simhash;
CREATE FUNCTION articles_big_fp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.fp := simhash(NEW.body); RETURN NEW; END $$;
CREATE TRIGGER articles_big_fp BEFORE INSERT OR UPDATE OF body ON articles_big
  FOR EACH ROW EXECUTE FUNCTION articles_big_fp();
DO $$
DECLARE n bigint;
BEGIN
  LOOP
    UPDATE articles_big SET fp = simhash(body)
    WHERE id IN (SELECT id FROM articles_big WHERE fp IS NULL LIMIT 1000);
    GET DIAGNOSTICS n = ROW_COUNT;
    EXIT WHEN n = 0;
    COMMIT;
  END LOOP;
END $$;
INSERT INTO articles_big (body) VALUES ('a new article after the backfill');
SELECT count(*) FILTER (WHERE fp IS NULL) AS missing,
       count(*) FILTER (WHERE fp IS DISTINCT FROM simhash(body)) AS wrong FROM articles_big;

-- the exclusion constraint: its threshold is the index's, in every session
CREATE TABLE posts (id bigint PRIMARY KEY, fp simhash,
                    EXCLUDE USING hamming (fp WITH %) WITH (max_distance = 3));
INSERT INTO posts VALUES (1, '0000000000000000'), (2, '00000000000000f0');   -- 4 bits apart
SET simhash.max_distance = 0;
INSERT INTO posts VALUES (3, '0000000000000007');     -- 3 bits from row 1: rejected
SET simhash.max_distance = 64;
INSERT INTO posts VALUES (4, 'ffffffffffffffff');     -- far from every row: accepted
INSERT INTO posts VALUES (5, 'fffffffffffffff0') ON CONFLICT DO NOTHING;   -- 4 bits: accepted
INSERT INTO posts VALUES (6, 'fffffffffffffff1') ON CONFLICT DO NOTHING;   -- 1 bit: skipped
\c
SET client_min_messages = warning;
SET search_path = recipes, public;
SET simhash.max_distance = 64;
INSERT INTO posts VALUES (7, '0000000000000100');     -- 1 bit from row 1, another session: rejected
SET simhash.max_distance = 0;
INSERT INTO posts VALUES (7, '000000000000f000');     -- 4 bits from row 1: accepted
DELETE FROM posts WHERE id = 7;
SELECT id, fp FROM posts ORDER BY id;
-- by brute force: no two rows within 3 bits, the nearest two 4 bits apart
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT min(p.fp <~> q.fp) AS nearest FROM posts p JOIN posts q ON p.id < q.id;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'posts'::regclass AND contype = 'x';
-- a constraint made with a larger radius checks the rows already there
ALTER TABLE posts ADD CONSTRAINT posts_wide EXCLUDE USING hamming (fp WITH %) WITH (max_distance = 4);
-- changing the option does not check them; REINDEX does
ALTER INDEX posts_fp_excl SET (max_distance = 4);
REINDEX INDEX posts_fp_excl;
ALTER INDEX posts_fp_excl SET (max_distance = 2);
REINDEX INDEX posts_fp_excl;
INSERT INTO posts VALUES (8, 'fffffffffffffff3');     -- 2 bits from rows 4 and 5: rejected
INSERT INTO posts VALUES (9, 'f0fffffffffffff0');     -- 4 bits from row 5: accepted
SELECT count(*) FROM posts;
CREATE INDEX ON posts USING hamming (fp) WITH (max_distance = 65);
CREATE INDEX ON posts USING hamming (fp) WITH (max_distance = -2);
DROP SCHEMA recipes CASCADE;
