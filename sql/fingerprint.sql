-- Fingerprints: pinned values (a compatibility promise: these must never
-- change), the tokenizer's rules, every input form, and bad arguments.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

CREATE TEMP TABLE samples (lang text, body text);
INSERT INTO samples VALUES
 ('en', 'The quick brown fox jumps over the lazy dog.'),
 ('en', 'PostgreSQL is a powerful, open source object-relational database system with over 35 years of active development.'),
 ('zh', '中文新闻去重是一个老问题：同一篇报道被多家网站转载，标题和正文只有细微差别。'),
 ('zh', '北京时间今天上午，国家统计局发布了最新的经济数据。'),
 ('ja', '東京都は今日、新しい交通計画を発表しました。ひらがなとカタカナも含みます。'),
 ('ko', '서울특별시는 오늘 새로운 교통 계획을 발표했습니다.'),
 ('mixed', 'PostgreSQL 15 发布了，新功能包括 MERGE 命令和更快的排序。'),
 ('mixed', 'Ünïcödé façade – naïve café, Straße ΣΊΣΥΦΟΣ 123');

-- pinned fingerprints for every feature choice
SELECT lang, simhash(body) AS default_features,
       simhash(body, 1, 'tf') AS words_tf,
       simhash(body, 2) AS shingle2,
       simhash(body, 3, 'binary') AS shingle3_binary,
       simhash(body || ' ' || body || ' ' || lang, 1, 'sublinear') AS sublinear,
       simhash_ngram(body) AS ngram3,
       simhash_ngram(body, 4, 'binary') AS ngram4_binary
FROM samples ORDER BY lang, body;

-- no features: one documented fingerprint, never an error
SELECT simhash(''::text) AS empty, simhash('  ,.;!? '::text) AS punctuation_only,
       simhash_ngram(''::text) AS ngram_empty, simhash('{}'::text[]) AS no_features,
       simhash(''::tsvector) AS empty_tsvector;
-- NULL in, NULL out
SELECT simhash(NULL::text) IS NULL AS null_text, simhash(NULL::text[]) IS NULL AS null_array,
       simhash(NULL::tsvector) IS NULL AS null_tsvector, simhash('x'::text, NULL) IS NULL AS null_shingle;

-- tokenizer rules, each as an equality that must hold
SELECT simhash('Hello, World!'::text) = simhash('hello world'::text) AS case_and_punctuation_ignored,
       simhash('ＨＥＬＬＯ　ｗｏｒｌｄ'::text) = simhash('hello world'::text) AS fullwidth_is_nfkc_folded,
       simhash(E'cafe\u0301'::text) = simhash(E'caf\u00e9'::text) AS combining_mark_composed,
       simhash('ﬁle'::text) = simhash('file'::text) AS ligature_decomposed,
       simhash('ÀÉÎÕÜ'::text) = simhash('àéîõü'::text) AS non_ascii_lower_case,
       simhash('ｶﾞｷﾞ'::text) = simhash('ガギ'::text) AS halfwidth_kana_with_voicing,
       simhash('中文 新闻'::text) = simhash('中文新闻'::text) AS spaces_inside_cjk_ignored,
       simhash('中文，新闻'::text) <> simhash('中文新闻'::text) AS punctuation_breaks_cjk_runs,
       simhash('a  b'::text) = simhash(E'a\n\tb'::text) AS any_white_space;
-- CJK text is bigrams, not one giant token: texts sharing most bigrams are close
SELECT simhash('中华人民共和国国务院新闻办公室今天举行新闻发布会'::text, 1)
   <~> simhash('中华人民共和国国务院新闻办公室昨天举行新闻发布会'::text, 1) AS near_cjk,
       simhash('中华人民共和国国务院新闻办公室今天举行新闻发布会'::text, 1)
   <~> simhash('东京都は今日新しい交通計画を発表しました'::text, 1) AS far_cjk;
-- the features, spelled out: words and CJK bigrams are the tokens
SELECT simhash('linux内核开发'::text, 1, 'tf') = simhash(ARRAY['linux', '内核', '核开', '开发']) AS mixed_tokens,
       simhash('单'::text, 1, 'tf') = simhash(ARRAY['单']) AS lone_cjk_unigram,
       simhash('a b a'::text, 1, 'tf') = simhash(ARRAY['a', 'b', 'a']) AS term_frequency,
       simhash('a b a'::text, 1, 'binary') = simhash(ARRAY['a', 'b']) AS binary_weighting,
       simhash('a a a a b c b'::text, 1, 'sublinear') = simhash(ARRAY['a', 'b', 'c'], ARRAY[3, 2, 1]) AS sublinear_weighting,
       simhash('alpha beta'::text, 3) = simhash('alpha beta'::text, 2) AS short_text_is_one_shingle,
       simhash('one two three four five'::text, 1) = simhash('five four three two one'::text, 1) AS words_ignore_order,
       simhash('one two three four five'::text) = simhash('one two three four five'::text, 3, 'sublinear') AS default_is_3_sublinear,
       simhash('one two three four five'::text, 2) <> simhash('five four three two one'::text, 2) AS shingles_see_order;

-- simhash(tsvector): lexemes are features, weight = positions (1 when stripped)
SELECT simhash(to_tsvector('simple', 'cat dog cat')) = simhash(ARRAY['cat', 'dog', 'cat']) AS tsvector_positions,
       simhash(strip(to_tsvector('simple', 'cat dog cat'))) = simhash(ARRAY['cat', 'dog']) AS stripped_weight_one;

-- simhash(text[], float8[]) and the aggregate agree
SELECT simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1.0, 2.5, 0.5]) AS weighted,
       simhash(ARRAY['alpha', 'beta'], ARRAY[1, 1]::float8[]) = simhash(ARRAY['alpha', 'beta']) AS unit_weights;
-- both arrays are read in place: elements of 1 to 300 bytes (short and long
-- headers), zero and negative weights, the same as the aggregate
SELECT simhash(array_agg(f ORDER BY g), array_agg(w ORDER BY g)) = simhash_agg(f, w) AS long_weighted_equals_agg
FROM (SELECT g, repeat(chr(97 + g % 26), 1 + g % 300) AS f, (g % 7 - 3)::float8 / 2 AS w
      FROM generate_series(1, 20000) g) s;
SELECT simhash_agg(f, w) = simhash(ARRAY['alpha', 'beta', 'gamma'], ARRAY[1.0, 2.5, 0.5]) AS agg_equals_array,
       simhash_agg(f, w) FILTER (WHERE false) IS NULL AS agg_no_rows_is_null
FROM (VALUES ('gamma', 0.5), ('alpha', 1.0), (NULL, 3.0), ('beta', 2.5)) v(f, w);
SELECT g, simhash_agg(word, 1) AS fp FROM (VALUES (1, 'a'), (1, 'b'), (2, 'c')) v(g, word) GROUP BY g ORDER BY g;

-- bad arguments: clear errors, each with its SQLSTATE
CREATE FUNCTION error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT q, error_of(q) FROM (VALUES
  ($$SELECT simhash(ARRAY['a', NULL])$$),
  ($$SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0])$$),
  ($$SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, NULL])$$),
  ($$SELECT simhash(ARRAY['a', NULL, 'c'], ARRAY[1.0])$$),
  ($$SELECT simhash(ARRAY['a', 'b'], ARRAY[[1.0], [2.0]])$$),
  ($$SELECT simhash(ARRAY['a'], ARRAY['NaN'::float8])$$),
  ($$SELECT simhash(ARRAY['a'], ARRAY['-Infinity'::float8])$$),
  ($$SELECT simhash(ARRAY[['a', 'b'], ['c', 'd']])$$),
  ($$SELECT simhash_agg('a', 'NaN'::float8)$$),
  ($$SELECT simhash('text'::text, 0)$$),
  ($$SELECT simhash('text'::text, 17)$$),
  ($$SELECT simhash('text'::text, 1, 'idf')$$),
  ($$SELECT simhash_ngram('text'::text, 0)$$),
  ($$SELECT simhash('not hex')$$)) v(q);
\set VERBOSITY default
SELECT simhash('text'::text, 1, 'idf');
SELECT simhash(array_fill('a'::text, ARRAY[9]) || NULL::text, array_fill(1::float8, ARRAY[10]));
SELECT simhash(array_fill('a'::text, ARRAY[10]), array_fill(1::float8, ARRAY[9]) || NULL::float8);
\set VERBOSITY terse

-- the distinct-feature counts stay within work_mem: a text with 200,000
-- distinct words spills, with the same fingerprint
CREATE TEMP TABLE many AS SELECT string_agg(md5(i::text), ' ') AS body FROM generate_series(1, 200000) i;
SET work_mem = '64MB';
SELECT simhash(body) AS fp_default, simhash(body, 1, 'binary') AS fp_binary FROM many \gset
SET work_mem = '64kB';
SELECT simhash(body) = :'fp_default' AS same_after_spill, simhash(body, 1, 'binary') = :'fp_binary' AS same_binary_after_spill FROM many;
RESET work_mem;

-- varchar columns call the function (not a cast)
CREATE TEMP TABLE vc (title varchar(100));
INSERT INTO vc VALUES ('Hello world');
SELECT simhash(title) = simhash('hello world'::text) AS varchar_column FROM vc;

-- a long text is cancellable while it is being fingerprinted
CREATE TEMP TABLE big AS SELECT repeat('lorem ipsum dolor 中文新闻 ', 2000000) AS body;
SELECT octet_length(body) > 50000000 AS over_50mb FROM big;
SET statement_timeout = '20ms';
SELECT simhash(body) FROM big;
RESET statement_timeout;
SELECT simhash(body) = simhash(repeat('lorem ipsum dolor 中文新闻 ', 2000000)) AS deterministic FROM big;
