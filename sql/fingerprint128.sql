-- simhash128(): frozen values, the high half = simhash() of the same text and
-- options, the array and tsvector forms, options and NULLs.  The values are
-- those of the independent Python reference (test/reference.py: simhash128,
-- simhash128_ngram), not of the C code.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TEMP TABLE doc (label text, body text);
INSERT INTO doc VALUES
	('empty', ''),
	('punctuation only', '!!! ... ??? --- ,,,'),
	('one word', 'hello'),
	('two words', 'hello world'),
	('english', 'The quick brown fox jumps over the lazy dog, and the lazy dog sleeps on.'),
	('english edited', 'The quick brown fox jumped over a lazy dog, and the lazy dog slept on.'),
	('repeated words', 'the the the the cat cat the'),
	('upper case and digits', 'The 3 QUICK brown Foxes2 jumped OVER 42 lazy DOGS'),
	('chinese', E'\u6211\u4eec\u7684\u6570\u636e\u5e93\u652f\u6301\u4e2d\u6587\u5168\u6587\u68c0\u7d22\u3002'),
	('mixed cjk latin', E'\u6211\u7528PostgreSQL\u6570\u636e\u5e93 abc\u4e2ddef \u4e2d\u6587abc\u4e2d\u6587'),
	('kana and hangul', E'\u304b\u3099\u304d \u30cf\u309a\u4e2d \ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8'),
	('combining marks', E'cafe\u0301 caf\u00e9 CAFE\u0301 na\u0308ive'),
	('word of 300', repeat('a', 300) || ' b c'),
	('long text', repeat('lorem ipsum dolor sit amet consectetur adipiscing elit ', 40) || 'sed do eiusmod');
SELECT label, simhash128(body) AS "3 sublinear", simhash128(body, 1, 'tf') AS "1 tf",
       simhash128(body, 2, 'binary') AS "2 binary"
FROM doc ORDER BY label COLLATE "C";
SELECT label, simhash128_ngram(body) AS "ngram 3 tf", simhash128_ngram(body, 1, 'sublinear') AS "ngram 1 sublinear"
FROM doc ORDER BY label COLLATE "C";

-- the high half is the 64-bit fingerprint, for every form and option
SELECT bool_and(simhash128_high(simhash128(body, n, w)) = simhash(body, n, w)) AS text_high_is_simhash,
       bool_and(simhash128_high(simhash128_ngram(body, n, w)) = simhash_ngram(body, n, w)) AS ngram_high_is_simhash,
       bool_and(simhash128_high(simhash128(body::varchar, n, w)) = simhash(body, n, w)) AS varchar_high_is_simhash,
       bool_and(simhash128(body::varchar, n, w) = simhash128(body, n, w)) AS varchar_is_text
FROM doc, generate_series(1, 4) n, unnest('{tf,binary,sublinear}'::text[]) w;
SELECT bool_and(simhash128_high(simhash128(to_tsvector('simple', body))) = simhash(to_tsvector('simple', body))) AS tsvector_high,
       bool_and(simhash128_high(simhash128(strip(to_tsvector('simple', body)))) = simhash(strip(to_tsvector('simple', body)))) AS stripped_tsvector_high,
       bool_and(simhash128_high(simhash128(regexp_split_to_array(body, ' '))) = simhash(regexp_split_to_array(body, ' '))) AS array_high
FROM doc;
-- the halves are not copies of each other
SELECT count(*) FILTER (WHERE simhash128_high(simhash128(body)) = simhash128_low(simhash128(body))) AS equal_halves
FROM doc WHERE body <> '' AND body !~ '^[[:punct:] ]*$';

-- the array and tsvector forms: features as given (reference: fingerprint128
-- of XXH3 of each element; a lexeme counted once per position)
SELECT simhash128('{a,b,c,a}'::text[]) AS array_form,
       simhash128(ARRAY[]::text[]) AS empty_array,
       simhash128('a:1,3 b:2 c:4'::tsvector) AS tsvector_form,
       simhash128('a:1,3 b:2 c:4'::tsvector) = simhash128('{a,b,c,a}'::text[]) AS positions_are_repeats,
       simhash128('a b c'::tsvector) = simhash128('{a,b,c}'::text[]) AS stripped_is_once;
-- a lexeme of 20 positions (weights above 15 take their own path)
SELECT simhash128(('x:' || string_agg(i::text, ',') || ' y:21 z:22')::tsvector)
	   = simhash128(array_fill('x'::text, ARRAY[20]) || '{y,z}'::text[]) AS many_positions
FROM generate_series(1, 20) i;

-- distinct features beyond work_mem: the counts spill to a sort, same value
CREATE TEMP TABLE big AS
SELECT string_agg('w' || (i % 6000)::text || ' ' || 'v' || (i * 7 % 5000)::text, ' ') AS body
FROM generate_series(1, 30000) i;
SELECT simhash128(body) AS default_work_mem, simhash128(body, 1, 'binary') AS binary_1 FROM big \gset
SET work_mem = '64kB';
SELECT simhash128(body) = :'default_work_mem' AS sublinear_spilled_same,
       simhash128(body, 1, 'binary') = :'binary_1' AS binary_spilled_same
FROM big;
RESET work_mem;

-- a near-duplicate is near, an unrelated text far
SELECT simhash128(a.body) <~> simhash128(replace(a.body, 'eiusmod', 'tempor')) AS edited_distance,
       simhash128(a.body) <~> simhash128(c.body) AS unrelated_distance
FROM doc a, doc c
WHERE a.label = 'long text' AND c.label = 'english';

-- options and NULLs as simhash()
SELECT simhash128(NULL::text) IS NULL AS null_text, simhash128('x'::text, NULL) IS NULL AS null_shingle,
       simhash128(NULL::tsvector) IS NULL AS null_tsvector, simhash128(NULL::text[]) IS NULL AS null_array;
SELECT simhash128('x'::text, 0);
SELECT simhash128('x'::text, 17);
SELECT simhash128('x'::text, 3, 'log');
SELECT simhash128_ngram('x', 0);
SELECT simhash128(ARRAY['a', NULL]);
SELECT simhash128(ARRAY[['a'], ['b']]);
-- a literal is read as the type's input, as for simhash
SELECT simhash128('hello world');

-- shingle_simhash128(): the shingle set's fingerprint.  Its definition is the
-- SQL below, made of shingle_set() and simhash(text[]) (both frozen, and
-- pinned by their own tests); the C function must equal it for every text,
-- shingle size and units, and its values are pinned here.
CREATE FUNCTION pg_temp.shingle_simhash128_sql(body text, n int, units text, part int DEFAULT 0) RETURNS simhash128
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT (int8send(simhash(ARRAY(SELECT chr(97 + 2 * part) || h FROM unnest(shingle_set(body, n, units)) AS s(h)))::bigint) ||
          int8send(simhash(ARRAY(SELECT chr(98 + 2 * part) || h FROM unnest(shingle_set(body, n, units)) AS s(h)))::bigint))::simhash128
$$;
SELECT count(*) AS cases,
       count(*) FILTER (WHERE shingle_simhash128(body, n, u) = pg_temp.shingle_simhash128_sql(body, n, u)) AS equal_to_sql
FROM doc, generate_series(1, 5) n, unnest('{words,characters,auto}'::text[]) u;
SELECT count(*) FILTER (WHERE shingle_simhash128(body) = pg_temp.shingle_simhash128_sql(body, 3, 'words')) AS defaults_are_3_words
FROM doc;
-- every part (0 .. 12) equals its SQL definition; part 0 is the default
SELECT count(*) AS cases,
       count(*) FILTER (WHERE shingle_simhash128(body, n, u, p) = pg_temp.shingle_simhash128_sql(body, n, u, p)) AS equal_to_sql
FROM doc, generate_series(1, 3) n, unnest('{words,auto}'::text[]) u, generate_series(0, 12) p;
SELECT count(*) FILTER (WHERE shingle_simhash128(body, 3, 'words', 0) = shingle_simhash128(body)) AS part_0_is_default
FROM doc;
SELECT label, shingle_simhash128(body) AS "3 words", shingle_simhash128(body, 3, 'auto') AS "3 auto",
       shingle_simhash128(body, 1, 'characters') AS "1 characters"
FROM doc ORDER BY label COLLATE "C";
SELECT label, shingle_simhash128(body, 3, 'words', 1) AS "3 words, part 1", shingle_simhash128(body, 3, 'auto', 12) AS "3 auto, part 12"
FROM doc ORDER BY label COLLATE "C";
-- a set: how often a shingle occurs changes nothing
SELECT shingle_simhash128('a b c a b c d e f') = shingle_simhash128('a b c a b c a b c a b c d e f') AS repeats_same,
       simhash128('a b c a b c d e f'::text) = simhash128('a b c a b c a b c a b c d e f'::text) AS simhash128_repeats_same;
-- the halves are independent, and the distance follows the sets' similarity
SELECT count(*) FILTER (WHERE simhash128_high(shingle_simhash128(body)) = simhash128_low(shingle_simhash128(body))) AS equal_halves
FROM doc WHERE body <> '' AND body !~ '^[[:punct:] ]*$';
SELECT shingle_simhash128(a.body) <~> shingle_simhash128(replace(a.body, 'eiusmod', 'tempor')) AS edited_distance,
       shingle_simhash128(a.body) <~> shingle_simhash128(c.body) AS unrelated_distance
FROM doc a, doc c
WHERE a.label = 'long text' AND c.label = 'english';
-- the parts are independent of each other: no two of a text's 26 halves are
-- equal, and a part's distance follows the similarity as part 0's does
SELECT count(*) AS texts, count(*) FILTER (WHERE halves <> 26) AS texts_with_equal_halves
FROM (SELECT d.label, count(DISTINCT h) AS halves
      FROM doc d, generate_series(0, 12) p,
           LATERAL (VALUES (simhash128_high(shingle_simhash128(d.body, 3, 'words', p))),
                           (simhash128_low(shingle_simhash128(d.body, 3, 'words', p)))) v(h)
      WHERE cardinality(shingle_set(d.body, 3, 'words')) > 0
      GROUP BY d.label) t;
SELECT shingle_simhash128(a.body, 3, 'words', 1) <~> shingle_simhash128(replace(a.body, 'eiusmod', 'tempor'), 3, 'words', 1) AS edited_distance_part_1,
       shingle_simhash128(a.body, 3, 'words', 1) <~> shingle_simhash128(c.body, 3, 'words', 1) AS unrelated_distance_part_1
FROM doc a, doc c
WHERE a.label = 'long text' AND c.label = 'english';
-- arguments as shingle_set()
SELECT shingle_simhash128(NULL) IS NULL AS null_text, shingle_simhash128('x', NULL) IS NULL AS null_n;
SELECT shingle_simhash128('x', 0);
SELECT shingle_simhash128('x', 3, 'letters');
SELECT shingle_simhash128('x', 3, 'words', NULL) IS NULL AS null_part;
SELECT shingle_simhash128('x', 3, 'words', 13);
SELECT shingle_simhash128('x', 3, 'words', -1);
