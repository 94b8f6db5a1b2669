#!/usr/bin/env bash
# test/bench/bench_parallel_mark.sh: simhash_mark_duplicates (or, with
# MARK_FORM=query, simhash_clusters with a query that computes the
# fingerprints) on N generated documents (default 1,000,000) serially and
# with parallel workers, side by side in one run.
#
#   bash test/bench/bench_parallel_mark.sh [N]
#   MARK_RUNS=3 MARK_DOCS=docs.tsv PGPORT_WANTED=5496 bash test/bench/bench_parallel_mark.sh N
#   MARK_FORM=query bash test/bench/bench_parallel_mark.sh [N]
#   MARK_SETTINGS='-c maintenance_work_mem=32MB' bash test/bench/bench_parallel_mark.sh [N]
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
# MARK_RUNS times each (default 3); MARK_SETTINGS (options as in PGOPTIONS)
# are added to both modes, for example a maintenance_work_mem that the rows
# spill beyond.  Reported: each run with its phases (from
# the call's DEBUG messages) and the workers that ran, the medians, the ratio
# parallel / serial, and whether every parallel run marked exactly the rows
# of the first serial run with the same kept rows.  As root it installs what
# it needs, as test/run-tests.sh does.  Output in test/out/bench_parallel_mark.md,
# and the DEBUG lines of the last run of each mode in
# test/out/bench_parallel_mark.{serial,parallel}.debug.
#
# MARK_FORM=query times instead, with simhash.pairs_recall = 0.99 (the bands
# of simhash_mark_duplicates) and work_mem = 1GB (as maintenance_work_mem),
#
#   SELECT count(*), sum(hashtext(id || ':' || cluster_id)) FROM simhash_clusters(
#     'SELECT id, f[1], f[2] FROM (SELECT id, shingle_simhash256(body, 3, ''auto'') AS f FROM docs OFFSET 0) s', 49);
#
# the 256-bit fingerprints computed by the query that the function runs
# (with parallel workers when PostgreSQL plans them, as it does on a table of
# a million documents; the report says how many); the query's phase is
# the time to the function's first DEBUG message, once it read every row.
# The rows and the sum of hashes must equal the first serial run's.  Output
# in test/out/bench_parallel_query.md (.serial.debug, .parallel.debug).
set -euo pipefail

cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
source test/bench/mark_common.sh "$@"
form=${MARK_FORM:-mark}
out=test/out/bench_parallel_$form.md
mark_start 5496 "max_worker_processes = 8" "max_parallel_workers = 8"
psql -X -q -v ON_ERROR_STOP=1 -v docs="$docs" <<'EOF'
CREATE EXTENSION simhash;
CREATE TABLE docs (id bigint PRIMARY KEY, body text, dup bigint);
COPY docs (id, body) FROM :'docs';
VACUUM ANALYZE docs;
EOF

# one call in a new backend: seconds, rows marked (or the answer), and its
# DEBUG lines, each after the seconds since the start at which it came
run() {
	local settings=$1 t0 s
	psql -X -q -c "UPDATE docs SET dup = NULL WHERE dup IS NOT NULL" -c "VACUUM docs"
	t0=$(date +%s.%N)
	PGOPTIONS="$settings -c client_min_messages=debug1" psql -X -At -F ' ' -c "$call" >"$work/marked" \
		2> >(while IFS= read -r line; do echo "$(echo "$(date +%s.%N) - $t0" | bc) $line"; done >"$work/debug")
	s=$(echo "$(date +%s.%N) - $t0" | bc)
	wait
	echo "$s $(cat "$work/marked")"
}
# the first (or last) number of what a pattern matches in the DEBUG lines
phase() { grep -o "$1" "$work/debug" | grep -o '[0-9][0-9.]*' | "${2:-head}" -1 || true; }

if [ "$form" = query ]; then
	query="SELECT id, f[1], f[2] FROM (SELECT id, shingle_simhash256(body, 3, 'auto') AS f FROM docs OFFSET 0) s"
	call="SELECT count(*), sum(hashtext(id || ':' || cluster_id)) FROM simhash_clusters('${query//\'/\'\'}', 49)"
	mark_header "simhash_clusters with the query's 256-bit fingerprints on $n generated documents, serial and parallel" \
		"| run | mode | seconds | query read s | band workers | bands by workers | rows | same answer as serial |" \
		"|---:|---|---:|---:|---:|---:|---:|---|" >"$out"
	# the workers of the query's plan in the parallel runs
	planned=$(PGOPTIONS="-c max_parallel_workers_per_gather=2" psql -X -At -c "EXPLAIN (COSTS OFF) $query" |
		awk '/Workers Planned:/ {print $3}')
else
	call="SELECT simhash_mark_duplicates('docs', 'body', 'dup')"
	mark_header "simhash_mark_duplicates on $n generated documents, serial and parallel${MARK_SETTINGS:+ ($MARK_SETTINGS)}" \
		"| run | mode | seconds | fingerprints s | fingerprint workers | duplicates s | band workers | bands by workers | verification workers | texts by workers | rows marked | same marks as serial |" \
		"|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|" >"$out"
fi
for r in $(seq 1 "$runs"); do
	for mode in serial parallel; do
		if [ "$mode" = serial ]; then
			settings="-c max_parallel_workers_per_gather=0 -c simhash.verify_workers=0 -c simhash.band_workers=0"
		else
			settings="-c max_parallel_workers_per_gather=2"
		fi
		[ "$form" = query ] && settings+=" -c simhash.pairs_recall=0.99 -c work_mem=1GB"
		settings+=" ${MARK_SETTINGS:-}"
		read -r s marked < <(run "$settings")
		cp "$work/debug" "test/out/bench_parallel_$form.$mode.debug"
		times[$mode]="${times[$mode]:-} $s"
		if [ "$form" = query ]; then
			if [ "$mode" = serial ] && [ "$r" = 1 ]; then
				reference=$marked
				same=reference
			elif [ "$marked" = "$reference" ]; then
				same=yes
			else
				same=NO
			fi
			printf '| %d | %s | %.1f | %s | %s | %s | %s | %s |\n' "$r" "$mode" "$s" \
				"$(awk '/DEBUG:  simhash_clusters: /{printf "%.1f", $1; exit}' "$work/debug")" \
				"$(phase '[0-9]* of [0-9]* parallel workers started for')" \
				"$(phase '[0-9]* tables enumerated by')" "${marked%% *}" "$same" | tee -a "$out" >&2
			continue
		fi
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
	if [ "$form" = query ]; then
		echo "In the parallel runs the query is planned with ${planned:-no} parallel workers."
	fi
} | tee -a "$out"
