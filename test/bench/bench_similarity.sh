#!/usr/bin/env bash
# test/bench/bench_similarity.sh: benchmark of the verified near-duplicate pipeline
# on the public evaluation corpus (needs ../shared/data, hence a benchmark and
# not a regression test): agreement of shingle_similarity() with the corpus's
# exact Jaccard (shingle.py), the cost of one verification from the texts and
# from stored shingle sets, and the whole-table verified simhash_pairs /
# simhash_clusters / simhash_dedup against simhash_pairs alone plus one read
# of the text.  See test/bench/bench_similarity.py.
#
# How to run (from the repo root; the extension must be installed):
#     bash test/bench/bench_similarity.sh       # about a minute on 2 cores
# Environment: SIMHASH_DATA = corpus directory (default: <repo>/../shared/data).
# It starts a throwaway cluster (private Unix socket in a temporary directory,
# removed on exit).  The report goes to stdout and test/out/bench_similarity.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && git rev-parse --show-toplevel)
cd "$root"
data=${SIMHASH_DATA:-$root/../shared/data}
data=$(cd "$data" && pwd)

source test/cluster.sh
dir=$(mktemp -d)
chmod 755 "$dir"
cleanup() {
	stop_cluster "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT

PGPORT_WANTED=5497 start_cluster "$dir" "jit = off" "shared_buffers = 256MB" "work_mem = 64MB"
psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash'
for s in natural edited; do
	for l in en zh; do
		psql -X -q -v ON_ERROR_STOP=1 \
			-c "CREATE TABLE ${s}_${l} (id text PRIMARY KEY, body text NOT NULL)" \
			-c "\\copy ${s}_${l} FROM PROGRAM 'xzcat $data/$s/docs.$l.tsv.xz'"
	done
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "CREATE TABLE truth_${s} (id_a text, id_b text, jaccard float8, inter int, size_a int, size_b int)" \
		-c "\\copy truth_${s} FROM PROGRAM 'xzcat $data/$s/truth.tsv.xz | grep -v ^# | cut -f1-6'"
done
mkdir -p test/out
/usr/bin/python3 test/bench/bench_similarity.py test/out/bench_similarity.md
