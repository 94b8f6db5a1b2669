#!/usr/bin/env bash
# test/bench/bench_parallel_build.sh: CREATE INDEX ... USING hamming built
# serially and with parallel workers, side by side.
#
# What it measures
#   A table of N (default 1,000,000) uniformly random 64-bit fingerprints
#   (and an id), vacuumed and checkpointed; or, with KIND = text, a table of
#   the N generated documents of test/bench/gen_corpus.py (seed 1) and the
#   index on its text column (simhash_text_ops: each text fingerprinted, its
#   four quarters sorted).  Each round builds the index once
#   serially (max_parallel_maintenance_workers = 0) and once with W parallel
#   workers (default 2: max_parallel_maintenance_workers and the table's
#   parallel_workers), in alternating order, with maintenance_work_mem = 1GB,
#   and times CREATE INDEX in the server's session (psql \timing); a
#   checkpoint after each build keeps one out of the next.  Medians of R
#   rounds (default 3) and their ratio; the workers each parallel build
#   started (its DEBUG1 message); and the two indexes compared
#   (hamming_index_check, the same number of entries, the same rows within
#   k = 3 of 20 random fingerprints, or with KIND = text the same rows
#   ~= 20 of the documents).
#
# How to run (from anywhere in the repository; builds and installs simhash
# for $PG_CONFIG, as test/run-tests.sh does, and starts a throwaway cluster
# on port $PGPORT_WANTED, default 5494):
#   bash test/bench/bench_parallel_build.sh [N] [W] [R] [KIND]    (KIND: fingerprints, the default, or text)
#   BUILD_DOCS=docs.tsv bash test/bench/bench_parallel_build.sh 1000000 2 3 text   (the documents of a corpus made before)
# Output: a markdown table on stdout and in test/out/bench_parallel_build_KIND.md.
# Takes about a minute at 1M rows on 2 cores.
set -euo pipefail

n=${1:-1000000}
workers=${2:-2}
rounds=${3:-3}
kind=${4:-fingerprints}
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out

source test/cluster.sh
source test/deps.sh
build_and_install
dir=$(mktemp -d /tmp/bench_parallel_build.XXXXXX)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-5494} start_cluster "$dir" "shared_buffers = '512MB'" \
	"maintenance_work_mem = '1GB'" "max_worker_processes = 16" "max_parallel_workers = 16" \
	"jit = off" "autovacuum = off" "max_wal_size = '4GB'"

if [ "$kind" = text ]; then
	py=python3
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3	# Debian's, with numpy
	docs="$dir/docs.tsv"
	if [ -n "${BUILD_DOCS:-}" ]; then
		head -n "$n" "$BUILD_DOCS" >"$docs"	# a corpus made before (gen_corpus.py N --seed 1)
	else
		$py test/bench/gen_corpus.py "$n" --seed 1 >"$docs"
	fi
	chmod 644 "$docs"
	column=body
	psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION simhash;
CREATE TABLE fps (id bigint, body text) WITH (parallel_workers = $workers);
COPY fps FROM '$docs';
VACUUM ANALYZE fps;
CHECKPOINT;
SQL
else
	column=fp
	psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION simhash;
CREATE TABLE fps (id int, fp simhash) WITH (parallel_workers = $workers);
INSERT INTO fps SELECT i, (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash
FROM generate_series(1, $n) i;
VACUUM ANALYZE fps;
CHECKPOINT;
SQL
fi

# build the index named $2 with $1 workers (0: serially); prints "ms workers"
build() {
	local out ms launched
	out=$(psql -X -v ON_ERROR_STOP=1 2>&1 <<SQL
SET max_parallel_maintenance_workers = $1;
SET client_min_messages = debug1;
\timing on
CREATE INDEX $2 ON fps USING hamming ($column);
\timing off
RESET client_min_messages;
CHECKPOINT;
SQL
	)
	ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | head -1)
	launched=$(sed -n 's/.*with \([0-9]*\) of [0-9]* requested parallel workers.*/\1/p' <<<"$out")
	echo "$ms ${launched:-0}"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

serial=()
parallel=()
started=()
for ((r = 1; r <= rounds; r++)); do
	for mode in $( ((r % 2)) && echo "serial parallel" || echo "parallel serial"); do
		psql -X -q -c "DROP INDEX IF EXISTS fps_$mode"
		if [ "$mode" = serial ]; then
			read -r ms _ < <(build 0 fps_serial)
			serial+=("$ms")
		else
			read -r ms launched < <(build "$workers" fps_parallel)
			parallel+=("$ms")
			started+=("$launched")
		fi
		echo "round $r, $mode: $ms ms" >&2
	done
done

# the last round left both indexes: the same index, the same answers
if [ "$kind" = text ]; then
	queries="CREATE TEMP TABLE q AS SELECT body AS fp FROM fps ORDER BY random() LIMIT 20;"
	near="f.body ~= q.fp"
else
	queries="CREATE TEMP TABLE q AS SELECT (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash AS fp FROM generate_series(1, 20);"
	near="f.fp <~> q.fp <= 3"
fi
check=$(psql -X -q -At -v ON_ERROR_STOP=1 <<SQL
SELECT hamming_index_check('fps_serial'), hamming_index_check('fps_parallel');
SELECT (SELECT table_entries FROM hamming_index_info('fps_serial')) =
       (SELECT table_entries FROM hamming_index_info('fps_parallel'));
$queries
SET enable_seqscan = off; SET enable_bitmapscan = off;
DROP INDEX fps_serial;
CREATE TEMP TABLE a_parallel AS SELECT q.fp AS q, f.id FROM q, fps f WHERE $near;
SET enable_seqscan = on; SET enable_indexscan = off;
CREATE TEMP TABLE a_seq AS SELECT q.fp AS q, f.id FROM q, fps f WHERE $near;
SELECT count(*) FROM ((TABLE a_parallel EXCEPT ALL TABLE a_seq) UNION ALL (TABLE a_seq EXCEPT ALL TABLE a_parallel)) x;
SQL
)
same_entries=$(sed -n 2p <<<"$check")
mismatches=$(sed -n 3p <<<"$check")

s=$(printf '%s\n' "${serial[@]}" | median)
p=$(printf '%s\n' "${parallel[@]}" | median)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
	echo "## CREATE INDEX ... USING hamming, $n $( [ "$kind" = text ] && echo "generated documents (the text column)" || echo "random fingerprints"), serial and with $workers parallel workers"
	echo
	echo "$(nproc) cores ($cpu), PostgreSQL $(psql -X -At -c 'SHOW server_version'), maintenance_work_mem = 1GB, medians of $rounds alternated rounds"
	echo
	echo "| build | every round (ms) | median (ms) |"
	echo "|---|---|---|"
	echo "| serial | ${serial[*]} | $s |"
	echo "| $workers workers (started: ${started[*]}) | ${parallel[*]} | $p |"
	echo
	echo "Parallel / serial wall time: $(awk -v p="$p" -v s="$s" 'BEGIN { printf "%.2f", p / s }')x;" \
		"same entries: $same_entries; rows of 20 queries ($near) differing from a sequential scan: $mismatches"
} | tee "test/out/bench_parallel_build_$kind.md"
