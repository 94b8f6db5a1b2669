#!/usr/bin/env bash
# test/bench/bench_knn.sh: nearest-first (ORDER BY fp <~> q LIMIT 10) latency at 1M
# rows with the GiST opclass; see test/bench/bench_knn.sql.  Run from the repo root:
#   bash test/bench/bench_knn.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/cluster.sh
dir=$(mktemp -d /tmp/simhash-knn.XXXXXX)
chmod 755 "$dir"
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
PGPORT_WANTED=5492 start_cluster "$dir" "shared_buffers = '1GB'"
psql -X -q -c 'CREATE EXTENSION simhash'
mkdir -p test/out
psql -X -q -f test/bench/bench_knn.sql | tee test/out/bench_knn.txt
