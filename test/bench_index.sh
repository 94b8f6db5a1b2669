#!/usr/bin/env bash
# test/bench_index.sh: latency benchmark of exact Hamming-radius search with
# the simhash GIN operator class, against the alternatives a user has.
#
# What it measures
#   Tables of N = 1M and 10M uniformly random 64-bit fingerprints, plus 1,000
#   query fingerprints with 10 planted neighbours each (1..3 distinct bits
#   flipped) at random positions in the table; setseed() makes it repeatable.
#   Queries "all rows within k bits of q", k = 3, 6, 10:
#     (a) sequential scan, core bit_count, fp stored as bigint, no index:
#         WHERE bit_count((fp::bigint # $1::bigint)::bit(64)) <= k  (50 queries)
#     (b) hand-written pigeonhole: 4 btree expression indexes on the 16-bit
#         chunks of a bigint, OR of the 4 chunk equalities AND bit_count <= 3
#         (BitmapOr of 4 index scans; exact only for k <= 3, so k = 3 only)
#     (c) this extension: WHERE fp <~> $1 <= k with a GIN simhash_ops index,
#         blocks = 4, 5 (default) and 6, one index at a time (k = 3 on all
#         1,000 queries; k = 6, 10 on 100: up to ~1 s each at 10M)
#     KNN reference (1M only, 20 queries): ORDER BY fp <~> $1 LIMIT 10, no index
#   Per-query wall time inside one backend: a PL/pgSQL loop over the query
#   fingerprints times each query with clock_timestamp(), (1) run with
#   EXECUTE ... USING (parsed and planned each time) and (2) for (b)/(c) as
#   static SQL with a cached plan (like a prepared statement); median and p95,
#   after a warm-up run and pg_prewarm.  Checks: plan shapes (EXPLAIN, literal
#   and generic), row sets of (b)/(c) equal (a)'s on the first 50 queries, all
#   planted neighbours found.  Also index build time (single process) and
#   size per row, and table sizes.
#   Server: its own cluster, shared_buffers 4GB, one core per query
#   (max_parallel_workers_per_gather = 0), jit off.
#
# How to run (from anywhere in the repository, after make install):
#   bash test/bench_index.sh [--quick]      --quick: the 1M table only
# Output: markdown tables on stdout and in test/out/bench_index.md, the plans in
# test/out/bench_index.plans.txt, the plot test/out/index_latency.png (median
# latency at k = 3 against table size; matplotlib, else gnuplot).
# Takes about 25 minutes (full), 10 (--quick) on 2 cores; needs ~6 GB of disk in /tmp.
set -euo pipefail

start_time=$SECONDS
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out

source test/cluster.sh
dir=$(mktemp -d /tmp/bench_index.XXXXXX)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=5493 start_cluster "$dir" "shared_buffers = '4GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" \
	"maintenance_work_mem = '1GB'" "work_mem = '64MB'"

# the system python, where python3-matplotlib installs
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" test/bench_index.py "$root/test/out" "$@"

elapsed=$((SECONDS - start_time))
line="Wall time of test/bench_index.sh${*:+ $*}: ${elapsed} s"
echo "$line"
echo "$line" >>test/out/bench_index.md
