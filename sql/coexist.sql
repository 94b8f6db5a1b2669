-- simhash beside pg_trgm, and pgvector where it is installed, in one
-- schema: each extension's operators keep their meaning, and each index
-- serves its own.  (expected/coexist_1.out: without pgvector.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE EXTENSION pg_trgm;
SELECT count(*) > 0 AS have_vector FROM pg_available_extensions WHERE name = 'vector' \gset
\if :have_vector
CREATE EXTENSION vector;
\endif
SELECT extname FROM pg_extension WHERE extname IN ('simhash', 'pg_trgm', 'vector') ORDER BY 1;

CREATE TABLE co (id int PRIMARY KEY, body text);
INSERT INTO co SELECT g, 'report number ' || g % 40 || ' on the harbour, the ferries and the weather of week ' || g % 40 || ' in the north'
FROM generate_series(1, 400) g;
INSERT INTO co VALUES (1000, '港口天气报告 第一周 渡轮照常运行 北部地区有小雨'), (1001, '港口天气报告 第一周 渡轮照常运行 北部地区有小雨 欢迎订阅');
CREATE INDEX co_trgm ON co USING gin (body gin_trgm_ops);
CREATE INDEX co_near ON co USING hamming (body);
ANALYZE co;

-- each operator on text goes to its own index
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM co WHERE body % 'report number 7 on the harbour';
EXPLAIN (COSTS OFF) SELECT id FROM co WHERE body ~= 'report number 7 on the harbour, the ferries and the weather of week 7 in the north';
SELECT count(*) AS near_7 FROM co WHERE body ~= 'report number 7 on the harbour, the ferries and the weather of week 7 in the north';
SELECT array_agg(id ORDER BY id) AS near_zh FROM co WHERE simhash_similar(body, '港口天气报告 第一周 渡轮照常运行 北部地区有小雨', 0.7);
SELECT count(*) AS trgm_7 FROM co WHERE body % 'report number 7 on the harbour, the ferries and the weather of week 7 in the north';
RESET enable_seqscan;
SELECT count(*) AS near_7_seq FROM co WHERE body ~= 'report number 7 on the harbour, the ferries and the weather of week 7 in the north';

-- literals: pg_trgm's % and similarity() on text, ours on fingerprints and texts
SELECT 'harbour report' % 'harbour reports' AS trgm_similar, similarity('abc', 'abd') AS trgm_similarity,
       simhash_similar('0000000000000000', '0000000000000001') AS fingerprints_similar,
       'the ferries run on time today' ~= 'the ferries run on time today' AS texts_near;
-- the text operators named ~= are ours only
SELECT o.oprleft::regtype, o.oprright::regtype, e.extname
FROM pg_operator o JOIN pg_depend d ON d.classid = 'pg_operator'::regclass AND d.objid = o.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid
WHERE o.oprname = '~=' ORDER BY 1, 2;

\if :have_vector
-- pgvector's operators and ours, side by side (its <~> is on bit strings, ours on fingerprints)
CREATE TABLE vec (id int, v vector(3));
INSERT INTO vec VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]');
CREATE INDEX ON vec USING hnsw (v vector_l2_ops);
SET enable_seqscan = off;
SELECT array_agg(id) AS nearest FROM (SELECT id FROM vec ORDER BY v <-> '[1,0,0]' LIMIT 2) s;
RESET enable_seqscan;
SELECT '0000000000000000'::simhash <~> '0000000000000003'::simhash AS simhash_distance,
       B'101' <~> B'111' AS bit_distance;
-- pgvector has a hamming_distance(bit, bit) too: name the type of literals
SELECT hamming_distance('0000000000000000'::simhash, '0000000000000007'::simhash) AS typed_literals;
\endif

-- the others leave the database as they came (later tests call
-- hamming_distance with untyped literals)
SET client_min_messages = warning;
\if :have_vector
DROP EXTENSION vector CASCADE;
\endif
DROP EXTENSION pg_trgm CASCADE;
RESET client_min_messages;
