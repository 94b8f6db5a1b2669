#!/usr/bin/env bash
# test/bench/bench_pairs.sh: benchmark of simhash_pairs() (batch near-duplicates).
#
# What it measures
#   Tables of 100k, 1M and 10M rows (id bigint, fp simhash): 99% uniformly
#   random 64-bit fingerprints and 1% near copies of random rows among them,
#   1 to 3 bits apart.  Every query runs in a fresh backend, on one core
#   (max_parallel_workers_per_gather = 0, jit = off, shared_buffers = 1GB,
#   tables prewarmed); it is timed and its peak memory taken from
#   log_statement_stats ("elapsed", CPU = user + system, "max resident size",
#   which is ru_maxrss of the backend).
#     - SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM t', 3) with
#       work_mem = 1GB (in memory): median of 3 runs; once with the default
#       work_mem of 4MB (the rows spill to a temporary file)
#     - the same with max_distance 6, once (1GB)
#     - simhash_clusters and simhash_dedup at k = 3, once (1GB)
#     - the hand-written pigeonhole self-join at k = 3: four btree expression
#       indexes on the 16-bit chunks ((fp::bigint >> 48) & 65535) etc., and
#       either the join ON (chunk1 = chunk1 OR ... OR chunk4 = chunk4) or the
#       UNION of four equi-joins, both filtered by a.id < b.id and
#       bit_count((a.fp::bigint # b.fp::bigint)::bit(64)) <= 3: both forms at
#       100k, the faster one above (median of 3; at 10M once, cancelled after
#       5 minutes by statement_timeout)
#     - baseline memory: the backend's peak RSS when it only reads the table
#       (SELECT count(*) FROM (SELECT id, fp FROM t OFFSET 0) s), so that
#       "peak RSS - baseline" is what the function itself allocated
#   simhash_pairs and the hand-written join must return the same number of
#   pairs (the script fails otherwise).  Targets (k = 3, in memory): 100k in
#   60 ms, 1M in 1 s, 10M in 15 s.
#
# How to run (from the repository root, after make install):
#   bash test/bench/bench_pairs.sh            100k, 1M and 10M (about 15 minutes)
#   bash test/bench/bench_pairs.sh --quick    100k and 1M only
#   bash test/bench/bench_pairs.sh --skew     skewed inputs (many identical
#                                       fingerprints): test/bench/bench_pairs_skew.sh
# Output: a markdown table on stdout and in test/out/bench_pairs.md; the
# plans of the hand-written joins go to test/out/bench_pairs.plans.txt.
set -euo pipefail

start_time=$SECONDS
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out

sizes="100000 1000000 10000000"
case "${1:-}" in
	--quick) sizes="100000 1000000" ;;
	--skew) shift; exec bash test/bench/bench_pairs_skew.sh "$@" ;;
	"") ;;
	*) echo "usage: bash test/bench/bench_pairs.sh [--quick | --skew [TABLE...]]" >&2; exit 2 ;;
esac

source test/cluster.sh
dir=$(mktemp -d)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=5494 start_cluster "$dir" "shared_buffers = '1GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off"

python3 test/bench/bench_pairs.py "$root/test/out/bench_pairs.md" "$root/test/out/bench_pairs.plans.txt" $sizes

elapsed=$((SECONDS - start_time))
line="Wall time of test/bench/bench_pairs.sh: ${elapsed} s"
echo "$line"
echo "$line" >>test/out/bench_pairs.md
