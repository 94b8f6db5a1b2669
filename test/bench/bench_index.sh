#!/usr/bin/env bash
# test/bench/bench_index.sh: latency benchmark of exact Hamming search in PostgreSQL,
# for every radius k, side by side with a sequential scan and with FAISS.
#
# What it measures (details in test/bench/bench_index.py)
#   A table of N = 1M (and 10M with --10m) uniformly random 64-bit fingerprints
#   and 30 query fingerprints, each with one planted neighbour at every
#   distance 0..16 (numpy, fixed seed; the same arrays go to PostgreSQL by COPY
#   and to FAISS).  One backend, max_parallel_workers_per_gather = 0, jit off.
#   For k = 0..24 (--quick: 0, 3, 6, 9, 12, 14, 16, 20, 24), the median
#   latency of WHERE fp <~> q <= k inside the backend, re-planned each time
#   (EXECUTE ... USING) and with a cached plan (static PL/pgSQL SQL), of
#     a sequential scan (popcount filter), the GIN simhash_ops index (5 blocks),
#     the hamming access method when it is installed (pg_am), and the plan the
#     planner picks with every index present;
#   the planner's pick against the fastest forced plan for every k = 0..64
#   (the issue-7 rule: within 1.3x); ORDER BY fp <~> q LIMIT 10 by seq scan +
#   sort, GiST, hamming, the planner's pick and simhash_nearest(); build time
#   and size of each index; FAISS 1.7 (python3-faiss), one thread, one query
#   per call: IndexBinaryFlat (range_search, search top 10) and
#   IndexBinaryMultiHash (3 tables of 21 bits, range_search).  Every answer
#   (FAISS too) is compared with the sequential scan's.
#
# How to run (from anywhere in the repository; as root it installs what it
# needs, python3-numpy, python3-faiss and python3-matplotlib included, and
# builds and installs simhash, as test/run-tests.sh does):
#   bash test/bench/bench_index.sh [--quick] [--10m] [--queries N]
# Output: markdown tables on stdout and in test/out/bench_index.md, the plans
# in test/out/bench_index.plans.txt, the plot test/out/radius_latency.png.
# Takes 14-20 minutes at 1M rows on 2 busy cores (--quick: about 4);
# --10m adds roughly 40 minutes and needs ~4 GB of disk in /tmp.
set -euo pipefail

start_time=$SECONDS
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out

source test/cluster.sh
source test/deps.sh
SIMHASH_PACKAGES="$SIMHASH_PACKAGES python3-numpy python3-faiss python3-matplotlib"
install_deps
build_and_install
dir=$(mktemp -d /tmp/bench_index.XXXXXX)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-5493} start_cluster "$dir" "shared_buffers = '4GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" \
	"maintenance_work_mem = '1GB'" "work_mem = '64MB'"

# the system python, where python3-faiss and python3-matplotlib install
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" test/bench/bench_index.py "$root/test/out" "$@"

elapsed=$((SECONDS - start_time))
line="Wall time of test/bench/bench_index.sh${*:+ $*}: ${elapsed} s"
echo "$line"
echo "$line" >>test/out/bench_index.md
