#!/usr/bin/env bash
# test/bench/bench_live.sh: a hamming index on a table that keeps taking
# inserts, against a fresh REINDEX, an index whose tail is never merged,
# btree and GIN (details in test/bench/bench_live.py).
#
#   bash test/bench/bench_live.sh [ROWS]     (default 1000000)
#   bash test/bench/bench_live.sh --concurrent [ROWS]   (4 writers and a reader)
#   bash test/bench/bench_live.sh --after-merge [ROWS]  (right after a merge, autovacuum off)
#   bash test/bench/bench_live.sh --sweep [ROWS]        (what tail_limit trades)
#   bash test/bench/bench_live.sh --levels [ROWS]       (what keeping k = 3 near a fresh index would cost)
#   bash test/bench/bench_live.sh --merge-memory [ROWS] (merges with little memory)
#   bash test/bench/bench_live.sh --build-memory [ROWS] (CREATE INDEX and a merge in runs on temporary files)
#   bash test/bench/bench_live.sh --merge-stall [ROWS]  (lookups and inserts while a merge runs)
#
# As root it installs what it needs and builds and installs simhash, as
# test/run-tests.sh does.  Output: markdown tables on stdout and in
# test/out/bench_live.md (bench_live_concurrent.md, bench_live_after_merge.md,
# bench_live_sweep.md, bench_live_levels.md, bench_live_merge_memory.md,
# bench_live_build_memory.md, bench_live_merge_stall.md).  Autovacuum is on (autovacuum_naptime = 10s, the
# other settings default).  About 15 minutes at 1M rows on 2 cores.
set -euo pipefail

start_time=$SECONDS
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out

source test/cluster.sh
source test/deps.sh
install_deps
build_and_install
dir=$(mktemp -d /tmp/bench_live.XXXXXX)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-5494} start_cluster "$dir" "shared_buffers = '2GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" "autovacuum_naptime = 10s" \
	"maintenance_work_mem = '1GB'" "max_wal_size = '8GB'"

out=test/out/bench_live.md
[[ " $* " == *" --concurrent "* ]] && out=test/out/bench_live_concurrent.md
[[ " $* " == *" --after-merge "* ]] && out=test/out/bench_live_after_merge.md
[[ " $* " == *" --sweep "* ]] && out=test/out/bench_live_sweep.md
[[ " $* " == *" --levels "* ]] && out=test/out/bench_live_levels.md
[[ " $* " == *" --merge-memory "* ]] && out=test/out/bench_live_merge_memory.md
[[ " $* " == *" --build-memory "* ]] && out=test/out/bench_live_build_memory.md
[[ " $* " == *" --merge-stall "* ]] && out=test/out/bench_live_merge_stall.md
python3 test/bench/bench_live.py "$@" | tee "$out"
elapsed=$((SECONDS - start_time))
line="Wall time of test/bench/bench_live.sh${*:+ $*}: ${elapsed} s"
echo "$line"
echo "$line" >>"$out"
