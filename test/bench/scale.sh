#!/usr/bin/env bash
# test/bench/scale.sh: near-duplicates at scale, side by side: today's 64-bit
# pipeline (simhash(body), k = 16), simhash128(body) at k = 28 with banded
# candidates (simhash.pairs_recall), and a MinHash LSH baseline written for
# the benchmark (100 permutations of the same shingles, 20 bands of 5 rows,
# numpy); every method's candidates verified the same way (Jaccard >= 0.8 of
# the 3-shingle sets).  Quality on the public corpus (eval.py's truth), p(k)
# of the real and of the generated corpus, and N generated documents
# (test/bench/gen_corpus.py) end to end: fingerprints, candidates,
# verification, clusters.  Results go to stdout and test/out/scale_*.json,
# the plot to test/bench/plots/scale.png (see doc/scale.md).
#
#     bash test/bench/scale.sh [N]          # default N = 1000000
#
# Needs python3-numpy and python3-matplotlib (Debian packages), the extension
# installed (`make install`) and the public corpus (SIMHASH_DATA, default
# <repo>/../shared/data).  Environment: SCALE_RECALL (simhash.pairs_recall of
# simhash128, default 0.9), SCALE_RECALL256 (of the 256-bit fingerprint, parts 0
# and 1 of shingle_simhash128 at k = 49, default 0.99), SCALE_RECALL64 (of simhash, default 0.9; 1 is the
# exact tables, quadratic at k = 16 beyond ~100,000 rows), SCALE_RUNS (runs of
# the fingerprint and candidate steps, median; default 1), SCALE_STEPS (of
# "quality pk scale plot", the default), SCALE_MINHASH=0 (the scale step
# without the MinHash baseline, whose Python plumbing takes most of its time
# at a million documents), SCALE_DOCS and SCALE_TRUTH (a corpus made before
# by gen_corpus.py N --truth FILE, instead of a new one), SCALE_METHODS (of
# simhash64,simhash128,shingle_simhash128,shingle_simhash256), SCALE_MAX_VERIFY (verify and
# cluster only below this many candidates per document; default 5).  It starts a
# throwaway cluster on port SCALE_PORT (default 5496; work_mem 1GB: the rows stay in memory).
# Generated corpora live in a temporary directory, never in the repository.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && git rev-parse --show-toplevel)
cd "$root"
n=${1:-1000000}
export SIMHASH_DATA=${SIMHASH_DATA:-$root/../shared/data}
export SIMHASH_DATA=$(cd "$SIMHASH_DATA" && pwd)
export SCALE_OUT=$root/test/out

source test/cluster.sh
dir=$(mktemp -d)
chmod 755 "$dir"
cleanup() {
	stop_cluster "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
PGPORT_WANTED=${SCALE_PORT:-5496} start_cluster "$dir" "jit = off" "shared_buffers = 512MB" "work_mem = 1GB" \
	"max_parallel_workers_per_gather = 0" "checkpoint_timeout = 30min" "max_wal_size = 8GB"
psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash'

opts=(--recall "${SCALE_RECALL:-0.9}" --recall64 "${SCALE_RECALL64:-0.9}" --recall256 "${SCALE_RECALL256:-0.99}"
	--runs "${SCALE_RUNS:-1}")
scale_opts=()
[ "${SCALE_MINHASH:-1}" = 0 ] && scale_opts+=(--no-minhash)
[ -n "${SCALE_DOCS:-}" ] && scale_opts+=(--docs "$SCALE_DOCS" --truth "$SCALE_TRUTH")
[ -n "${SCALE_METHODS:-}" ] && scale_opts+=(--methods "$SCALE_METHODS")
[ -n "${SCALE_MAX_VERIFY:-}" ] && scale_opts+=(--max-verify-per-doc "$SCALE_MAX_VERIFY")
for step in ${SCALE_STEPS:-quality pk scale plot}; do
	case $step in
	quality) /usr/bin/python3 test/bench/scale.py quality "${opts[@]}" ;;
	pk) /usr/bin/python3 test/bench/scale.py pk ;;
	scale) /usr/bin/python3 test/bench/scale.py scale "$n" "${opts[@]}" "${scale_opts[@]}" ;;
	plot) /usr/bin/python3 test/bench/scale.py plot "$n" ;;
	*) echo "scale.sh: unknown step $step (quality, pk, scale, plot)" >&2; exit 2 ;;
	esac
done
