#!/usr/bin/env bash
# test/bench/bench_linkage.sh: the cost of linkage 'center' against 'single'.
#
# What it measures
#   A table of N rows (default 1,000,000; id bigint, fp simhash, rank
#   integer): 98% uniformly random fingerprints and 2% near copies (1 to 3
#   bits flipped) of 5,000 of them and of each other, planted clusters with
#   chains; rank is random.  Each query runs in a fresh backend on one core
#   (max_parallel_workers_per_gather = 0, jit = off, work_mem = 1GB, table
#   prewarmed), three times; the median CPU time of the backend (user +
#   system, from log_statement_stats) is reported, with its ratio to
#   simhash_clusters(query, 3) and to the same query with 'single' (the
#   pairs engine is shared, so the ratio is what 'center' costs), and the
#   median wall time (psql's \timing), which on a shared machine also
#   measures the neighbours:
#     - simhash_clusters(query, 3)            connected components (0.3.0)
#     - simhash_clusters(query, 3, 'single')  the same through the linkage form
#     - simhash_clusters(query, 3, 'center')  greedy centers in id order
#     - the two with a rank column            (SELECT id, fp, rank FROM ...)
#     - simhash_dedup(query, 3): the engine of 'center' alone
#     - simhash_lineage(query, 3, linkage) for both linkages
#   Each query returns count(*) and the number of groups, printed beside.
#
#   With --keyed, the same table with two more keys per row, uid uuid (an
#   md5 of the id) and key text ('k' and that md5, 33 bytes), and the cost
#   of ids of another type and of the stable order: simhash_pairs and
#   simhash_dedup at k = 3, each against its _keyed form with NULL::bigint
#   (the ids as they are, only the order added), NULL::uuid and NULL::text
#   (rows numbered and mapped back), and simhash_pairs with an ORDER BY;
#   ratios to simhash_pairs and to the integer form of the same function.
#
# How to run (from the repository root, after make install):
#   bash test/bench/bench_linkage.sh [ROWS]   about 2 CPU minutes at 1M (far longer
#                                            in wall time on a busy machine)
#   bash test/bench/bench_linkage.sh --keyed [ROWS]
# Output: a markdown table on stdout and in test/out/bench_linkage.md
# (test/out/bench_keyed.md with --keyed).
set -euo pipefail

keyed=false
if [ "${1:-}" = --keyed ]; then
	keyed=true
	shift
fi
rows=${1:-1000000}
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
mkdir -p test/out

source test/cluster.sh
dir=$(mktemp -d)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
PGPORT_WANTED=${PGPORT_WANTED:-5495} start_cluster "$dir" "shared_buffers = '512MB'" \
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
EOF
if $keyed; then
	psql -X -q -v ON_ERROR_STOP=1 <<'EOF'
ALTER TABLE t ADD COLUMN uid uuid, ADD COLUMN key text;
UPDATE t SET uid = md5(id::text)::uuid, key = 'k' || md5(id::text);
EOF
fi
psql -X -q -v ON_ERROR_STOP=1 -c 'VACUUM ANALYZE t' -c "SELECT pg_prewarm('t')" >/dev/null

# per query: median of 3 runs, each in a fresh backend, of the backend's CPU
# time (user + system, log_statement_stats: the machine is shared, so wall
# time would measure the neighbours) and of the wall time
declare -A cpu wall answer
queries=(
	"clusters|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp FROM t', 3)"
	"dedup|SELECT count(*), count(DISTINCT coalesce(duplicate_of, id)) FROM simhash_dedup('SELECT id, fp FROM t', 3)"
	"clusters single|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp FROM t', 3, 'single')"
	"clusters center|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp FROM t', 3, 'center')"
	"clusters single, rank|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp, rank FROM t', 3, 'single')"
	"clusters center, rank|SELECT count(*), count(DISTINCT cluster_id) FROM simhash_clusters('SELECT id, fp, rank FROM t', 3, 'center')"
	"lineage single|SELECT count(*), count(DISTINCT kept_id) FROM simhash_lineage('SELECT id, fp FROM t', 3, 'single')"
	"lineage center|SELECT count(*), count(DISTINCT kept_id) FROM simhash_lineage('SELECT id, fp FROM t', 3, 'center')"
)
out_file=test/out/bench_linkage.md
if $keyed; then
	out_file=test/out/bench_keyed.md
	queries=(
		"pairs|SELECT count(*), count(DISTINCT id_a) FROM simhash_pairs('SELECT id, fp FROM t', 3)"
		"pairs, ORDER BY id_a, id_b|SELECT count(*), count(DISTINCT id_a) FROM (SELECT * FROM simhash_pairs('SELECT id, fp FROM t', 3) ORDER BY id_a, id_b) s"
		"pairs keyed bigint|SELECT count(*), count(DISTINCT id_a) FROM simhash_pairs_keyed(NULL::bigint, 'SELECT id, fp FROM t', 3)"
		"pairs keyed uuid|SELECT count(*), count(DISTINCT id_a) FROM simhash_pairs_keyed(NULL::uuid, 'SELECT uid, fp FROM t', 3)"
		"pairs keyed text|SELECT count(*), count(DISTINCT id_a) FROM simhash_pairs_keyed(NULL::text, 'SELECT key, fp FROM t', 3)"
		"dedup|SELECT count(*), count(DISTINCT coalesce(duplicate_of, id)) FROM simhash_dedup('SELECT id, fp FROM t', 3)"
		"dedup keyed bigint|SELECT count(*), count(DISTINCT coalesce(duplicate_of, id)) FROM simhash_dedup_keyed(NULL::bigint, 'SELECT id, fp FROM t', 3)"
		"dedup keyed uuid|SELECT count(*), count(DISTINCT coalesce(duplicate_of, id)) FROM simhash_dedup_keyed(NULL::uuid, 'SELECT uid, fp FROM t', 3)"
		"dedup keyed text|SELECT count(*), count(DISTINCT coalesce(duplicate_of, id)) FROM simhash_dedup_keyed(NULL::text, 'SELECT key, fp FROM t', 3)"
	)
fi
labels=()
for q in "${queries[@]}"; do
	label=${q%%|*}
	sql=${q#*|}
	labels+=("$label")
	cpus=()
	walls=()
	for run in 1 2 3; do
		out=$(psql -X -q -A -t -c 'SET client_min_messages = log' -c 'SET log_statement_stats = on' \
			-c '\timing on' -c "$sql" 2>&1)
		answer[$label]=$(echo "$out" | grep '|' | head -1 | sed 's/|/, /')
		cpus+=("$(echo "$out" | sed -n 's/^!\s*\([0-9.]*\) s user, \([0-9.]*\) s system.*/\1 \2/p' | awk '{ print $1 + $2 }')")
		walls+=("$(echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')")
	done
	cpu[$label]=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n 2p)
	wall[$label]=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 2p)
	echo "$label: CPU ${cpus[*]} s, wall ${walls[*]} ms (answer ${answer[$label]})" >&2
done

model=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)
{
	echo "Rows: $rows (k = 3, one core, work_mem = 1GB; $(nproc) cores, $model)"
	echo
	if $keyed; then
		echo "| query | CPU s (median of 3) | CPU ratio to pairs | CPU ratio to the integer form | wall s | rows, groups |"
	else
		echo "| query | CPU s (median of 3) | CPU ratio to clusters | CPU ratio to 'single' alike | wall s | rows, groups |"
	fi
	echo "|---|---:|---:|---:|---:|---|"
	for label in "${labels[@]}"; do
		if $keyed; then
			alike=${label%%[ ,]*}
		else
			alike=${label/center/single}
			[ "$label" = dedup ] && alike=clusters
		fi
		awk -v l="$label" -v c="${cpu[$label]}" -v b="${cpu[${labels[0]}]}" -v s="${cpu[$alike]}" \
			-v w="${wall[$label]}" -v a="${answer[$label]}" \
			'BEGIN { printf "| %s | %.2f | %.2fx | %.2fx | %.2f | %s |\n", l, c, c / b, c / s, w / 1000, a }'
	done
} | tee "$out_file"
