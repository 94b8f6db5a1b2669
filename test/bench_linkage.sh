#!/usr/bin/env bash
# test/bench_linkage.sh: the cost of linkage 'center' against 'single'.
#
# What it measures
#   A table of N rows (default 1,000,000; id bigint, fp simhash, rank
#   integer): 98% uniformly random fingerprints and 2% near copies (1 to 3
#   bits flipped) of 5,000 of them and of each other, planted clusters with
#   chains; rank is random.  Each query runs in a fresh backend on one core
#   (max_parallel_workers_per_gather = 0, jit = off, work_mem = 1GB, table
#   prewarmed), three times; the median wall time (psql's \timing) is
#   reported, with its ratio to simhash_clusters(query, 3):
#     - simhash_clusters(query, 3)            connected components (0.3.0)
#     - simhash_clusters(query, 3, 'single')  the same through the linkage form
#     - simhash_clusters(query, 3, 'center')  greedy centers in id order
#     - the two with a rank column            (SELECT id, fp, rank FROM ...)
#     - simhash_dedup(query, 3) and simhash_lineage(query, 3, 'center')
#   Each query returns count(*) and count(DISTINCT cluster): the script
#   prints them, so that the answers can be compared run to run.
#
# How to run (from the repository root, after make install):
#   bash test/bench_linkage.sh [ROWS]      about 2 minutes at 1M on 2 cores
# Output: a markdown table on stdout and in test/out/bench_linkage.md.
set -euo pipefail

rows=${1:-1000000}
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out

source test/cluster.sh
dir=$(mktemp -d)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=5495 start_cluster "$dir" "shared_buffers = '512MB'" \
	"max_parallel_workers_per_gather = 0" "jit = off" "work_mem = '1GB'"

psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" <<'EOF'
CREATE EXTENSION simhash;
CREATE EXTENSION pg_prewarm;
SELECT setseed(0.5);
CREATE TABLE t (id bigint, fp simhash, rank integer);
INSERT INTO t
	SELECT g, ((floor(random() * 4294967296)::bigint << 32) | floor(random() * 4294967296)::bigint)::simhash,
		   floor(random() * 1000000)::integer
	FROM generate_series(1, (:rows * 0.98)::bigint) g;
-- near copies of the first 5,000 rows and of earlier copies: 1 to 3 bits
INSERT INTO t
	SELECT (:rows * 0.98)::bigint + g,
		   (b.fp::bigint # ((1::bigint << floor(random() * 64)::integer) |
							(1::bigint << floor(random() * 64)::integer) |
							(1::bigint << floor(random() * 64)::integer)))::simhash,
		   floor(random() * 1000000)::integer
	FROM generate_series(1, (:rows * 0.02)::bigint) g
	JOIN t b ON b.id = (g * 7919) % 5000 + 1;
INSERT INTO t
	SELECT (:rows + 1) + g,
		   (b.fp::bigint # (1::bigint << floor(random() * 64)::integer))::simhash,
		   floor(random() * 1000000)::integer
	FROM generate_series(1, (:rows * 0.005)::bigint) g
	JOIN t b ON b.id = (:rows * 0.98)::bigint + g;
VACUUM ANALYZE t;
SELECT pg_prewarm('t');
EOF

# query label: median of 3 runs, each in a fresh backend
declare -A median answer
queries=(
	"clusters|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp FROM t', 3)"
	"clusters single|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp FROM t', 3, 'single')"
	"clusters center|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp FROM t', 3, 'center')"
	"clusters single, rank|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp, rank FROM t', 3, 'single')"
	"clusters center, rank|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp, rank FROM t', 3, 'center')"
	"dedup|SELECT count(*), count(duplicate_of) FROM simhash_dedup('SELECT id, fp FROM t', 3)"
	"lineage center|SELECT count(*), count(DISTINCT kept_id) FROM simhash_lineage('SELECT id, fp FROM t', 3, 'center')"
)
labels=()
for q in "${queries[@]}"; do
	label=${q%%|*}
	sql=${q#*|}
	labels+=("$label")
	times=()
	for run in 1 2 3; do
		out=$(psql -X -q -A -t -c '\timing on' -c "$sql")
		answer[$label]=$(echo "$out" | head -1)
		times+=("$(echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')")
	done
	median[$label]=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
	echo "$label: ${times[*]} ms (answer ${answer[$label]})" >&2
done

cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)
{
	echo "Rows: $rows (k = 3, one core, work_mem = 1GB; $(nproc) cores, $cpu)"
	echo
	echo "| query | median s | ratio to clusters | rows, clusters (or kept) |"
	echo "|---|---|---|---|"
	base=${median[clusters]}
	for label in "${labels[@]}"; do
		awk -v l="$label" -v m="${median[$label]}" -v b="$base" -v a="${answer[$label]}" \
			'BEGIN { printf "| %s | %.2f | %.2fx | %s |\n", l, m / 1000, m / b, a }'
	done
} | tee test/out/bench_linkage.md
