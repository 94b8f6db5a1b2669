#!/usr/bin/env bash
# test/bench/speed.sh: fingerprint speed benchmark for the simhash extension.
#
# What it measures
#   Single-core throughput (MB/s of body text) of computing one expression per
#   row over two tables of real text, >= 100 MB of body text each:
#     en  rows of ../shared/data/{natural,edited}/docs.en.tsv.xz, replicated
#     zh  rows of ../shared/data/{natural,edited}/docs.zh.tsv.xz, replicated
#   (copies keep the body unchanged; the copy number goes into the id).
#   Expressions, each in a query that evaluates it once for every row:
#     (a) sum(length(body))                 baseline: reading and detoasting
#     (b) hashtextextended(body, 0)         a fast hash of the whole text
#     (c) to_tsvector('simple', body)       PostgreSQL's own tokenizer
#     (d) simhash(body)                     the default fingerprint
#     (e) simhash(body, shingle => 1|2|3) (1 = single words, the earlier
#         default; the report shows each call with defaults filled in),
#         simhash_ngram(body, n => 3)
#   Queries (b)..(e) have the form
#     SELECT count(*) FROM t WHERE (expr) IS NOT NULL
#   and the plans are checked (EXPLAIN VERBOSE) to evaluate expr in the scan.
#   Each query runs 5 times, round-robin over all queries and both tables,
#   timed by EXPLAIN (ANALYZE, TIMING OFF) "Execution Time" (wall) and by the
#   backend's user+system CPU time from /proc/PID/stat (cpu; robust when other
#   jobs compete for the cores, 10 ms resolution); the medians are
#   reported, with MB/s = table MB (1e6 bytes of body) / median seconds,
#   MB/s net of the baseline = MB / (t_expr - t_a), and the speed ratio of
#   each expression to to_tsvector('simple').
#   Then (test/bench/speed_forms.py) the array and tsvector forms: simhash(text[])
#   over regexp_split_to_array(lower(body), '\W+') and simhash(tsvector) over
#   to_tsvector('simple', body) of the English table, beside the time of
#   reading those values alone.
#   body is SET STORAGE EXTERNAL before loading: long bodies are TOASTed out of
#   line but never compressed, so no measurement pays for decompression.
#   The server runs with max_parallel_workers_per_gather = 0 (one core),
#   jit = off and shared_buffers = 1GB; tables are prewarmed.  If simhash(body)
#   misses the targets (>= 150 MB/s, >= 10x to_tsvector) and perf has hardware
#   counters, a perf stat of the backend is appended.
#
# How to run (from the repository root, after make install):
#   bash test/bench/speed.sh
# Environment:
#   SIMHASH_DATA   data directory (default: <repo>/../shared/data)
#   SPEED_REPS     repetitions per query (default 5)
#   SPEED_MIN_MB   minimum body MB per table (default 100)
#   SPEED_REVS     git revisions to time beside the installed code, e.g.
#                  "636edec d39e6c0": each is built as a second library
#                  (build_revision in test/cluster.sh) and its simhash(body),
#                  shingle 1 and 2 and simhash_ngram(body) run in the same
#                  rounds, as simhash_rXXXXXXX(...)
# Output: a markdown table on stdout and in test/out/speed.md; the checked
# plans go to test/out/speed.plans.txt.
set -euo pipefail

start_time=$SECONDS
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
export SIMHASH_DATA=${SIMHASH_DATA:-$root/../shared/data}
SIMHASH_DATA=$(cd "$SIMHASH_DATA" && pwd)
mkdir -p test/out

for f in natural/docs.en.tsv.xz edited/docs.en.tsv.xz natural/docs.zh.tsv.xz edited/docs.zh.tsv.xz; do
	[ -r "$SIMHASH_DATA/$f" ] || { echo "missing $SIMHASH_DATA/$f" >&2; exit 1; }
done

source test/cluster.sh
dir=$(mktemp -d)
trap 'stop_cluster "$dir/cluster"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
libs=()
for rev in ${SPEED_REVS:-}; do
	tag=r$(git rev-parse --short=7 "$rev")
	echo "== building $rev as simhash_$tag.so" >&2
	build_revision "$rev" "simhash_$tag" "$dir/$tag"
	libs+=("$tag=$dir/$tag/simhash_$tag.so")
done
export SPEED_LIBS="${libs[*]}"
PGPORT_WANTED=5497 start_cluster "$dir/cluster" "shared_buffers = '1GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" "shared_preload_libraries = 'simhash'"

python3 test/bench/speed.py "$root/test/out/speed.md" "$root/test/out/speed.plans.txt"
python3 test/bench/speed_forms.py "$root/test/out/speed.md"

elapsed=$((SECONDS - start_time))
line="Wall time of test/bench/speed.sh: ${elapsed} s"
echo "$line"
echo "$line" >>test/out/speed.md
