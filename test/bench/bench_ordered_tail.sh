#!/usr/bin/env bash
# test/bench/bench_ordered_tail.sh: index pages an ordered scan of a hamming index
# reads when most rows are in the tail (100,000 rows in the probe tables,
# 200,000 inserted after CREATE INDEX): EXPLAIN (ANALYZE, BUFFERS) of
# ORDER BY fp <~> q LIMIT 10 for 5 queries, on a throwaway cluster.  Buffer
# counts do not depend on the machine.  Run from the repo root:
#   bash test/bench/bench_ordered_tail.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/cluster.sh
dir=$(mktemp -d /tmp/simhash-tail.XXXXXX)
chmod 755 "$dir"
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
PGPORT_WANTED=5493 start_cluster "$dir" "shared_buffers = '256MB'"
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION simhash;
SELECT setseed(0.26);
CREATE TABLE big (id bigserial, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO big (fp) SELECT ((random() * 4294967296)::bigint << 32 | (random() * 4294967296)::bigint)::simhash
FROM generate_series(1, 100000);
CREATE INDEX big_fp ON big USING hamming (fp);
INSERT INTO big (fp) SELECT ((random() * 4294967296)::bigint << 32 | (random() * 4294967296)::bigint)::simhash
FROM generate_series(1, 200000);
VACUUM ANALYZE big;
SET enable_seqscan = off;
CREATE FUNCTION index_buffers(q simhash) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM big ORDER BY fp <~> %L LIMIT 10', q) INTO plan;
  plan := plan->0->'Plan'->'Plans'->0;
  RETURN (plan->>'Shared Hit Blocks')::int + (plan->>'Shared Read Blocks')::int;
END $$;
SELECT pg_relation_size('big_fp') / 8192 AS index_pages;
SELECT q, index_buffers(q::simhash) AS buffers
FROM unnest(ARRAY['0123456789abcdef', 'fedcba9876543210', '0000000000000000', 'a5a5a5a5a5a5a5a5', '3c3c3c3c3c3c3c3c']) q;
SQL
