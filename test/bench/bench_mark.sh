#!/usr/bin/env bash
# test/bench/bench_mark.sh: simhash_mark_duplicates end to end on N generated
# documents (default 1,000,000), with bigint keys and with uuid keys side by
# side, and its quality on the public corpus.
#
#   bash test/bench/bench_mark.sh [N]
#   MARK_RUNS=3 MARK_DOCS=docs.tsv PGPORT_WANTED=5495 bash test/bench/bench_mark.sh N
#
# The documents come from test/bench/gen_corpus.py N (or MARK_DOCS, a file
# of id <TAB> body that the server can read, ids 1..N).  They are loaded into
# two tables with the same texts: docs_bigint (id bigint PRIMARY KEY, the
# generator's ids) and docs_uuid (id uuid PRIMARY KEY, md5 of the id: random
# order, as gen_random_uuid() gives), each with a mark column of its key's
# type.  Each run clears the marks and VACUUMs, then times one call of
#
#   SELECT simhash_mark_duplicates('docs_bigint', 'body', 'dup');
#
# in a new backend (fingerprints, candidates, verification, the marks
# written), alternately on the two tables, MARK_RUNS times (default 3);
# reported: each run, the median, the rows marked, and the uuid / bigint
# ratio.  Then test/bench/mark_quality.py on the public corpus.  As root it
# installs what it needs, as test/run-tests.sh does.  Output in
# test/out/bench_mark.md.  At a million documents: 1.25 GB of text per table,
# about 12 minutes on 2 cores.
set -euo pipefail

cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
source test/bench/mark_common.sh "$@"
out=test/out/bench_mark.md
mark_start 5495 "max_parallel_workers_per_gather = 0"
psql -X -q -v ON_ERROR_STOP=1 -v docs="$docs" <<'EOF'
CREATE EXTENSION simhash;
CREATE TABLE docs_bigint (id bigint PRIMARY KEY, body text, dup bigint);
COPY docs_bigint (id, body) FROM :'docs';
CREATE TABLE docs_uuid (id uuid PRIMARY KEY, body text, dup uuid);
INSERT INTO docs_uuid SELECT md5(id::text)::uuid, body FROM docs_bigint;
VACUUM ANALYZE docs_bigint, docs_uuid;
EOF

mark_header "simhash_mark_duplicates on $n generated documents" \
	"| run | key | seconds | rows marked |" \
	"|---:|---|---:|---:|" >"$out"
for r in $(seq 1 "$runs"); do
	for key in bigint uuid; do
		psql -X -q -c "UPDATE docs_$key SET dup = NULL WHERE dup IS NOT NULL" -c "VACUUM docs_$key"
		t0=$(date +%s.%N)
		marked=$(psql -X -At -c "SELECT simhash_mark_duplicates('docs_$key', 'body', 'dup')")
		s=$(echo "$(date +%s.%N) - $t0" | bc)
		times[$key]="${times[$key]:-} $s"
		printf '| %d | %s | %.1f | %s |\n' "$r" "$key" "$s" "$marked" | tee -a "$out" >&2
	done
done
mb=$(echo "${times[bigint]}" | median)
mu=$(echo "${times[uuid]}" | median)
{
	echo
	printf 'median of %d: bigint %.1f s, uuid %.1f s, uuid / bigint %.2f\n' "$runs" "$mb" "$mu" "$(echo "$mu / $mb" | bc -l)"
	echo
	echo "## Quality on the public corpus"
	echo
	$py test/bench/mark_quality.py
} | tee -a "$out"
