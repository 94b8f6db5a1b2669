-- The memory a backend keeps for lookups of a hamming index stays within
-- simhash.tail_cache_size: the kept tail entries and the heads of their
-- lists together.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

CREATE TABLE mem (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO mem SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash FROM generate_series(1, 40000) i;
CREATE INDEX mem_fp ON mem USING hamming (fp);
-- a tail of 100 full pages: 58,200 entries, more than 1 MB keeps
INSERT INTO mem SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash FROM generate_series(40001, 98200) i;
SELECT tail_pages FROM hamming_index_info('mem_fp');

SET simhash.tail_cache_size = '1MB';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
-- lookups that probe: each keeps the full tail pages it reads, as many as fit
SELECT count(*) FROM mem WHERE fp <@ simhash_ball(('x' || md5('5'))::bit(64)::bigint::simhash, 3);
SELECT count(*) FROM mem WHERE fp <@ simhash_ball(('x' || md5('50005'))::bit(64)::bigint::simhash, 3);
SELECT count(*) AS caches, sum(total_bytes) BETWEEN 512 * 1024 AND 1024 * 1024 + 64 * 1024 AS within_setting
	FROM pg_backend_memory_contexts WHERE name = 'hamming tail cache';
-- the same answers as a sequential scan
SET enable_indexscan = off;
SET enable_seqscan = on;
SELECT count(*) FROM mem WHERE fp <@ simhash_ball(('x' || md5('5'))::bit(64)::bigint::simhash, 3);
SELECT count(*) FROM mem WHERE fp <@ simhash_ball(('x' || md5('50005'))::bit(64)::bigint::simhash, 3);
RESET enable_indexscan;
RESET enable_seqscan;
-- a smaller setting: the pages kept before go first
SET simhash.tail_cache_size = '256kB';
SET enable_seqscan = off;
SELECT count(*) FROM mem WHERE fp <@ simhash_ball(('x' || md5('5'))::bit(64)::bigint::simhash, 3);
SELECT count(*) FROM mem WHERE fp <@ simhash_ball(('x' || md5('50005'))::bit(64)::bigint::simhash, 3);
SELECT coalesce(sum(total_bytes), 0) <= 256 * 1024 + 64 * 1024 AS within_setting
	FROM pg_backend_memory_contexts WHERE name = 'hamming tail cache';
DROP TABLE mem;
