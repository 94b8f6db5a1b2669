#!/usr/bin/env bash
# test/bench/bench_parallel_mark.sh: simhash_mark_duplicates on N generated
# documents (default 1,000,000) serially and with parallel workers, side by
# side in one run.
#
#   bash test/bench/bench_parallel_mark.sh [N]
#   MARK_RUNS=3 MARK_DOCS=docs.tsv PGPORT_WANTED=5496 bash test/bench/bench_parallel_mark.sh N
#
# The documents come from test/bench/gen_corpus.py N (or MARK_DOCS, a file
# of id <TAB> body that the server can read), loaded into docs (id bigint
# PRIMARY KEY, body text, dup bigint).  Each run clears the marks, VACUUMs
# and times one call of
#
#   SELECT simhash_mark_duplicates('docs', 'body', 'dup');
#
# in a new backend, alternately
#   serial    max_parallel_workers_per_gather = 0, simhash.verify_workers = 0,
#             simhash.band_workers = 0
#   parallel  max_parallel_workers_per_gather = 2 (the fingerprints by
#             parallel query, the bands of the candidates and the texts of
#             the verification by workers)
# MARK_RUNS times each (default 3).  Reported: each run with its phases (from
# the call's DEBUG messages) and the workers that ran, the medians, the ratio
# parallel / serial, and whether every parallel run marked exactly the rows
# of the first serial run with the same kept rows.  As root it installs what
# it needs, as test/run-tests.sh does.  Output in test/out/bench_parallel_mark.md,
# and the DEBUG lines of the last run of each mode in
# test/out/bench_parallel_mark.{serial,parallel}.debug.
set -euo pipefail

cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
source test/bench/mark_common.sh "$@"
out=test/out/bench_parallel_mark.md
mark_start 5496 "max_worker_processes = 8" "max_parallel_workers = 8"
psql -X -q -v ON_ERROR_STOP=1 -v docs="$docs" <<'EOF'
CREATE EXTENSION simhash;
CREATE TABLE docs (id bigint PRIMARY KEY, body text, dup bigint);
COPY docs (id, body) FROM :'docs';
VACUUM ANALYZE docs;
EOF

# one call in a new backend: seconds, rows marked, and its DEBUG lines
run() {
	local settings=$1 t0 s
	psql -X -q -c "UPDATE docs SET dup = NULL WHERE dup IS NOT NULL" -c "VACUUM docs"
	t0=$(date +%s.%N)
	PGOPTIONS="$settings -c client_min_messages=debug1" psql -X -At \
		-c "SELECT simhash_mark_duplicates('docs', 'body', 'dup')" >"$work/marked" 2>"$work/debug"
	s=$(echo "$(date +%s.%N) - $t0" | bc)
	echo "$s $(cat "$work/marked")"
}
# the first (or last) number of what a pattern matches in the DEBUG lines
phase() { grep -o "$1" "$work/debug" | grep -o '[0-9][0-9.]*' | "${2:-head}" -1 || true; }

mark_header "simhash_mark_duplicates on $n generated documents, serial and parallel" \
	"| run | mode | seconds | fingerprints s | fingerprint workers | duplicates s | band workers | bands by workers | verification workers | texts by workers | rows marked | same marks as serial |" \
	"|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|" >"$out"
for r in $(seq 1 "$runs"); do
	for mode in serial parallel; do
		if [ "$mode" = serial ]; then
			settings="-c max_parallel_workers_per_gather=0 -c simhash.verify_workers=0 -c simhash.band_workers=0"
		else
			settings="-c max_parallel_workers_per_gather=2"
		fi
		read -r s marked < <(run "$settings")
		cp "$work/debug" "test/out/bench_parallel_mark.$mode.debug"
		times[$mode]="${times[$mode]:-} $s"
		if [ "$mode" = serial ] && [ "$r" = 1 ]; then
			psql -X -q -c "CREATE TABLE serial_marks AS SELECT id, dup FROM docs"
			same=reference
		elif [ "$(psql -X -At -c "SELECT count(*) FROM docs JOIN serial_marks s USING (id) WHERE s.dup IS DISTINCT FROM docs.dup")" = 0 ]; then
			same=yes
		else
			same=NO
		fi
		printf '| %d | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$r" "$mode" "$s" \
			"$(phase 'with content in [0-9.]* s')" "$(phase '[0-9]* parallel workers$')" \
			"$(phase 'duplicates within .* in [0-9.]* s$' tail)" \
			"$(phase '[0-9]* of [0-9]* parallel workers started for')" \
			"$(phase '[0-9]* tables enumerated by')" \
			"$(phase '[0-9]* of [0-9]* parallel workers launched')" \
			"$(phase '[0-9]* texts tokenized by')" "$marked" "$same" | tee -a "$out" >&2
	done
done
ms=$(echo "${times[serial]}" | median)
mp=$(echo "${times[parallel]}" | median)
{
	echo
	printf 'median of %d: serial %.1f s, parallel %.1f s, parallel / serial %.2f; load average at the end: %s\n' \
		"$runs" "$ms" "$mp" "$(echo "$mp / $ms" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$out"
