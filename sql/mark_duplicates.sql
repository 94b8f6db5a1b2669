-- simhash_mark_duplicates: the marks of tables with bigint, uuid and text
-- keys, with and without a rank, with NULL, empty and contentless bodies and
-- Chinese text, and after inserts and deletes, each checked against a
-- brute-force de-duplication written here (every pair's shingle_similarity,
-- the 'center' rule in rank and key order); then the errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- the reference: the rows with shingles in (rank,) key order; a row is a
-- duplicate of the first earlier kept row whose shingle_similarity with it is
-- at least t, else it is kept
CREATE FUNCTION bf_mark(tbl regclass, t float8, rank text) RETURNS TABLE (k text, kept text)
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  ks text[] := '{}';
  kb text[] := '{}';
  found text;
BEGIN
  FOR r IN EXECUTE format('SELECT t.id::text AS id, t.body::text AS body FROM %s AS t WHERE cardinality(shingle_set(t.body, 3, ''auto'')) > 0 '
                          'ORDER BY %s NULLS LAST, t.id', tbl, coalesce(rank, 'NULL::int'))
  LOOP
    found := NULL;
    FOR i IN 1 .. coalesce(array_length(ks, 1), 0) LOOP
      IF shingle_similarity(kb[i], r.body, 3, 'auto') >= t THEN
        found := ks[i];
        EXIT;
      END IF;
    END LOOP;
    IF found IS NULL THEN
      ks := ks || r.id;
      kb := kb || r.body;
    ELSE
      k := r.id;
      kept := found;
      RETURN NEXT;
    END IF;
  END LOOP;
END $$;

-- one call, and its marks against the reference: the count the call returns,
-- the rows marked, the reference's duplicates, and the rows that differ
-- (marked differently, or marked by one only)
CREATE FUNCTION mark_check(tbl regclass, t float8 DEFAULT 0.8, rank text DEFAULT NULL)
RETURNS TABLE (returned bigint, marked bigint, expected bigint, differ bigint)
LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  n := CASE WHEN rank IS NULL THEN simhash_mark_duplicates(tbl, 'body', 'dup', t)
            ELSE simhash_mark_duplicates(tbl, 'body', 'dup', t, rank) END;
  RETURN QUERY EXECUTE format(
    'WITH b AS (SELECT * FROM bf_mark(%L, %s, %L)), '
    'a AS (SELECT id::text AS k, dup::text AS kept FROM %s WHERE dup IS NOT NULL) '
    'SELECT %s::bigint, (SELECT count(*) FROM a), (SELECT count(*) FROM b), '
    '(SELECT count(*) FROM ((SELECT * FROM a EXCEPT SELECT * FROM b) UNION ALL (SELECT * FROM b EXCEPT SELECT * FROM a)) x)',
    tbl, t, rank, tbl, n);
END $$;

-- the texts: 40 English documents of 40 words out of 400; near copies of 30
-- of them with 1 to 8 words replaced (similarities from about 0.95 down to
-- 0.5), copies of those copies (chains), exact copies, one with an appended
-- line; 10 Chinese documents of 60 characters with copies edited the same
-- way; and bodies without content ('', '   ', '!!!', '。。。', twice each,
-- and NULL)
CREATE TABLE src (n int PRIMARY KEY, body text, prio int);
INSERT INTO src
SELECT i, (SELECT string_agg('w' || (abs(hashint4(i * 53 + j)) % 400), ' ' ORDER BY j) FROM generate_series(1, 40) j), i % 5
FROM generate_series(1, 40) i;
CREATE FUNCTION edit_words(body text, seed int, r int) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(CASE WHEN abs(hashint4(seed * 7 + j::int)) % 40 < r THEN 'x' || (abs(hashint4(seed + j::int)) % 1000) ELSE w END, ' ' ORDER BY j)
  FROM unnest(string_to_array(body, ' ')) WITH ORDINALITY AS u(w, j)
$$;
INSERT INTO src SELECT 100 + n, edit_words(body, n, 1 + n % 8), (n + 2) % 5 FROM src WHERE n <= 30;
INSERT INTO src SELECT 100 + n, edit_words(body, n + 500, 2), n % 3 FROM src WHERE n BETWEEN 101 AND 112;
INSERT INTO src SELECT 300 + n, body, 4 FROM src WHERE n <= 5;
INSERT INTO src SELECT 400 + n, body || ' posted by the editors of the weekly list', 1 FROM src WHERE n BETWEEN 6 AND 8;
INSERT INTO src
SELECT 500 + i, (SELECT string_agg(chr(19968 + abs(hashint4(i * 71 + j)) % 600), '' ORDER BY j) FROM generate_series(1, 60) j), i % 4
FROM generate_series(1, 10) i;
INSERT INTO src
SELECT 100 + n, (SELECT string_agg(CASE WHEN abs(hashint4(n * 11 + j::int)) % 60 < 1 + n % 5 THEN chr(20500 + abs(hashint4(n + j::int)) % 300) ELSE c END, '' ORDER BY j)
                 FROM unnest(regexp_split_to_array(body, '')) WITH ORDINALITY AS u(c, j)), n % 3
FROM src WHERE n BETWEEN 501 AND 508;
INSERT INTO src SELECT 200 + n, body || '。本文由编辑部发布，欢迎转载。', 2 FROM src WHERE n BETWEEN 509 AND 510;
INSERT INTO src VALUES (801, '', 0), (802, '', 0), (803, '   ', 0), (804, '   ', 1), (805, '!!!', 0), (806, '!!!', 2),
  (807, '。。。', 0), (808, '。。。', 0), (809, NULL, 0), (810, NULL, 0);
SELECT count(*) AS texts, count(*) FILTER (WHERE n > 800) AS without_content FROM src;

-- the fingerprint the call reads: shingle_simhash256 is parts 0 and 1 of
-- shingle_simhash128, from one shingling of the text
SELECT count(*) AS texts,
       count(*) FILTER (WHERE shingle_simhash256(body, 3, 'auto') =
                              ARRAY[shingle_simhash128(body, 3, 'auto', 0), shingle_simhash128(body, 3, 'auto', 1)]) AS equal,
       count(*) FILTER (WHERE shingle_simhash256(body) =
                              ARRAY[shingle_simhash128(body), shingle_simhash128(body, 3, 'words', 1)]) AS equal_by_default,
       count(*) FILTER (WHERE shingle_simhash256(body, 1, 'characters') =
                              ARRAY[shingle_simhash128(body, 1, 'characters', 0), shingle_simhash128(body, 1, 'characters', 1)]) AS equal_in_characters
FROM src WHERE body IS NOT NULL;
SELECT shingle_simhash256(NULL) IS NULL AS strict, shingle_simhash256('!!!') AS without_content;

-- three keys, none in the order of the rows' numbers
CREATE TABLE m_big (id bigint PRIMARY KEY, body text, prio int, dup bigint);
INSERT INTO m_big SELECT (n * 7919) % 1009, body, prio FROM src;
CREATE TABLE m_uuid (id uuid PRIMARY KEY, body varchar, prio int, dup uuid);
INSERT INTO m_uuid SELECT md5(n::text)::uuid, body, prio FROM src;
CREATE TABLE m_text (id text PRIMARY KEY, body text, prio int, dup text);
INSERT INTO m_text SELECT 'doc ' || ((n * 7919) % 1009), body, prio FROM src;

-- every table at the default threshold, and at two others; with a rank
-- column and a rank expression (the longest text kept)
SELECT 'm_big' AS tbl, * FROM mark_check('m_big')
UNION ALL SELECT 'm_uuid', * FROM mark_check('m_uuid')
UNION ALL SELECT 'm_text', * FROM mark_check('m_text');
SELECT t, c.* FROM unnest('{0.5,0.65,0.9,0.95,1}'::float8[]) t, mark_check('m_uuid', t) c;
SELECT 'prio' AS rank, * FROM mark_check('m_big', 0.8, 'prio')
UNION ALL SELECT '-length(body)', * FROM mark_check('m_text', 0.8, '-length(body)')
UNION ALL SELECT 'prio, uuid', * FROM mark_check('m_uuid', 0.7, 'prio');

-- the kept rows and their duplicates are near-duplicates at the threshold
-- (center linkage: no chain), and the key of a kept row is never marked
SELECT count(*) AS pairs, min(shingle_similarity(d.body, k.body, 3, 'auto')) >= 0.7 AS similar,
       bool_and(k.dup IS NULL) AS kept_unmarked
FROM m_uuid d JOIN m_uuid k ON k.id = d.dup;
-- bodies without content are never marked and never kept for another row
SELECT count(*) AS without_content,
       count(*) FILTER (WHERE d.dup IS NOT NULL OR EXISTS (SELECT 1 FROM m_big o WHERE o.dup = d.id)) AS in_a_group
FROM m_big d WHERE coalesce(cardinality(shingle_set(d.body, 3, 'auto')), 0) = 0;
-- the Chinese copies are found
SELECT count(*) AS chinese_marked FROM m_big WHERE dup IS NOT NULL AND body ~ '[一-龥]';

-- a rerun after changes: kept rows deleted (their duplicates go to another
-- kept row or are no longer marked), new near copies and a new text that
-- ranks first inserted
DELETE FROM m_uuid WHERE id IN (SELECT dup FROM m_uuid WHERE dup IS NOT NULL ORDER BY dup LIMIT 5);
INSERT INTO m_uuid (id, body, prio)
SELECT md5('new' || n)::uuid, edit_words(body, n + 900, 1), -1 FROM src WHERE n BETWEEN 10 AND 19;
SELECT * FROM mark_check('m_uuid', 0.7, 'prio');
SELECT * FROM mark_check('m_uuid');
-- a mark set by hand on a row that is no duplicate is cleared
UPDATE m_big SET dup = id WHERE id = (SELECT min(id) FROM m_big WHERE dup IS NULL);
SELECT * FROM mark_check('m_big');
-- an empty table, and a table of one row
TRUNCATE m_text;
SELECT simhash_mark_duplicates('m_text', 'body', 'dup') AS empty;
INSERT INTO m_text VALUES ('a', 'one text of its own', 0, 'b');
SELECT simhash_mark_duplicates('m_text', 'body', 'dup') AS one_row;
SELECT id, dup FROM m_text;

-- the settings the call changes are its own
SET work_mem = '1MB';
SELECT simhash_mark_duplicates('m_big', 'body', 'dup') > 0 AS marked,
       current_setting('work_mem') AS work_mem, current_setting('simhash.pairs_recall') AS pairs_recall;

-- errors
-- the SQLSTATE and message of a call with these arguments
CREATE FUNCTION mark_error(args text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  state text;
  message text;
BEGIN
  EXECUTE 'SELECT simhash_mark_duplicates(' || args || ')';
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
  RETURN state || ': ' || message;
END $$;
CREATE TABLE m_nokey (id bigint, body text, dup bigint);
CREATE TABLE m_pair (a int, b int, body text, dup int, PRIMARY KEY (a, b));
ALTER TABLE m_big ADD dup_text text, ADD n int, ADD gen bigint GENERATED ALWAYS AS (id) STORED;
SELECT args, mark_error(args) FROM (VALUES
  ($$'m_big', 'nobody', 'dup'$$),
  ($$'m_big', 'body', 'nomark'$$),
  ($$'m_big', 'body', 'dup_text'$$),
  ($$'m_big', 'n', 'dup'$$),
  ($$'m_big', 'body', 'id'$$),
  ($$'m_big', 'body', 'gen'$$),
  ($$'m_big', 'body', 'dup', 0.3$$),
  ($$'m_big', 'body', 'dup', 1.01$$),
  ($$'m_big', 'body', 'dup', 'NaN'$$),
  ($$'m_big', 'body', 'dup', NULL$$),
  ($$'m_big', 'body', 'dup', 0.8, 'prio; DROP TABLE src'$$),
  ($$'m_big', 'body', 'dup', 0.8, 'no_such_column'$$),
  ($$'m_nokey', 'body', 'dup'$$),
  ($$'m_pair', 'body', 'dup'$$),
  ($$'no_such_table', 'body', 'dup'$$)) v(args);
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT simhash_mark_duplicates('m_big', 'body', 'dup', 0.3);
SELECT simhash_mark_duplicates('m_big', 'body', 'dup_text');
SELECT simhash_mark_duplicates('m_nokey', 'body', 'dup');
\set SHOW_CONTEXT errors
\set VERBOSITY terse

-- the caller's privileges: reading is not enough to mark
CREATE ROLE regress_simhash_mark_reader NOSUPERUSER;
GRANT SELECT ON m_big TO regress_simhash_mark_reader;
SET ROLE regress_simhash_mark_reader;
SELECT mark_error($$'m_big', 'body', 'dup'$$);
RESET ROLE;
GRANT UPDATE (dup) ON m_big TO regress_simhash_mark_reader;
SET ROLE regress_simhash_mark_reader;
SELECT simhash_mark_duplicates('m_big', 'body', 'dup') > 0 AS marked_with_update_on_the_mark;
RESET ROLE;
REVOKE ALL ON m_big FROM regress_simhash_mark_reader;
DROP ROLE regress_simhash_mark_reader;

DROP TABLE src, m_big, m_uuid, m_text, m_nokey, m_pair;
DROP FUNCTION bf_mark(regclass, float8, text), mark_check(regclass, float8, text), edit_words(text, int, int), mark_error(text);
