#!/usr/bin/env bash
# test/bench/bench_citus.sh: what Citus costs and gives (a coordinator and two
# workers on loopback, all on this machine).
#   bash test/bench/bench_citus.sh [ROWS]        (default 1000000; about 10 minutes)
# ROWS uniformly random fingerprints plus 1% near copies (1..3 bits) of random
# rows, the same rows in a local table and in distributed tables of 4, 8 and
# 32 shards, each with a GIN index.
#  1. k = 3 lookups (a literal fingerprint, fanned out to every shard), local
#     and by shard count: pgbench, one client, median of 3 runs of the average.
#  2. simhash_nearest(..., 10) of a random fingerprint: latency (16 cached
#     connections per worker), and remote commands per call.
#  3. Whole-table pairs within 3 bits: simhash_pairs on one node, on the
#     32-shard table (on the workers, and in a READ ONLY transaction: the rows
#     pulled to the coordinator), against the block-keyed self-join on the workers (4 and 5 blocks: 4 and 10 keys per
#     row, 32 shards), with the time to fill the key table; same pairs checked.
# Needs Citus (../shared/vendor/build-citus.sh).  CITUS_PORT as in test/citus.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
source test/cluster.sh
source test/citus_cluster.sh
citus_installed || { echo "bench_citus: Citus is not installed" >&2; exit 1; }
export PATH="$("$PG_CONFIG" --bindir):$PATH"
rows=${1:-1000000}
make -s with_llvm=no WERROR=1 >/dev/null
make -s with_llvm=no install >/dev/null
work=$(mktemp -d /tmp/simhash-bench-citus.XXXXXX)
chmod 755 "$work"
trap 'stop_citus "$work"; rm -rf "$work"' EXIT
start_citus "$work" "${CITUS_PORT:-55610}"
port=$CITUS_COORDINATOR_PORT

seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}'; }

echo "== $rows rows + 1% near copies"
cq <<SQL
CREATE TABLE loc (id bigint, fp simhash);
INSERT INTO loc SELECT i, (hashint8extended(i, 1) # (hashint8extended(i, 2) << 13))::simhash
FROM generate_series(1, $rows) i;
-- near copies of 1% of the rows, 1..3 bits away
INSERT INTO loc SELECT $rows + i, (fp::bigint # (1::bigint << (i % 64)) # ((i % 3 > 0)::int::bigint << ((i * 7) % 64))
	# ((i % 3 > 1)::int::bigint << ((i * 13 + 5) % 64)))::simhash
FROM (SELECT (row_number() OVER ())::int AS i, fp FROM loc WHERE id % 100 = 1) s;
CREATE INDEX ON loc USING gin (fp);
ANALYZE loc;
SQL
for shards in 4 8 32; do
	cq -c "SET citus.shard_count = $shards" -c "CREATE TABLE d$shards (LIKE loc)" \
		-c "SELECT create_distributed_table('d$shards', 'id')" -c "INSERT INTO d$shards SELECT * FROM loc" \
		-c "CREATE INDEX ON d$shards USING gin (fp)" -c "ANALYZE d$shards" >/dev/null
done

echo "== 1. k = 3 lookups (ms per query, median of 3 pgbench runs of 300)"
cat >"$work/lookup.sql" <<'EOF'
\set i random(1, 1000000)
SELECT id FROM :tab WHERE fp <~> (hashint8extended(:i, 1) # (hashint8extended(:i, 2) << 13))::simhash <= 3;
EOF
declare -A lat
for run in 1 2 3; do
	for tab in loc d4 d8 d32; do
		l=$(pgbench -n -h 127.0.0.1 -p "$port" -U postgres -c 1 -t 300 -D tab="$tab" -f "$work/lookup.sql" postgres 2>/dev/null |
			awk '/latency average/ {print $4}')
		lat[$tab]="${lat[$tab]:-} $l"
	done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for tab in loc d4 d8 d32; do echo "lookup $tab: $(echo "${lat[$tab]}" | median) ms (runs:${lat[$tab]})"; done
# Citus keeps one connection per worker between queries by default, and opens
# more (after citus.executor_slow_start_interval) to run shards in parallel
for opt in citus.max_cached_conns_per_worker=16 citus.max_adaptive_executor_pool_size=1; do
	for tab in d8 d32; do
		runs=""
		for run in 1 2 3; do
			runs="$runs $(PGOPTIONS="-c $opt" pgbench -n -h 127.0.0.1 -p "$port" -U postgres -c 1 -t 300 -D tab="$tab" \
				-f "$work/lookup.sql" postgres 2>/dev/null | awk '/latency average/ {print $4}')"
		done
		echo "lookup $tab with $opt: $(echo "$runs" | median) ms (runs:$runs)"
	done
done
echo "rows found per lookup (d32): $(cq -c "SELECT count(*) FROM d32 WHERE fp <~> (hashint8extended(1, 1) # (hashint8extended(1, 2) << 13))::simhash <= 3")"

echo "== 2. simhash_nearest(..., 10)"
cat >"$work/nearest.sql" <<'EOF'
\set i random(1, 1000000)
SELECT * FROM simhash_nearest('SELECT id, fp FROM :tab', (hashint8extended(:i, 1) # (hashint8extended(:i, 2) << 13))::simhash, 10);
EOF
for tab in loc d4 d32; do
	l=$(PGOPTIONS="-c citus.max_cached_conns_per_worker=16" pgbench -n -h 127.0.0.1 -p "$port" -U postgres -c 1 -t 100 -D tab="$tab" -f "$work/nearest.sql" postgres 2>/dev/null |
		awk '/latency average/ {print $4}')
	echo "simhash_nearest $tab: $l ms"
done
for tab in d4 d32; do
	n=$(cq -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = log" \
		-c "SELECT count(*) FROM simhash_nearest('SELECT id, fp FROM $tab', (hashint8extended(5, 1) # (hashint8extended(5, 2) << 13))::simhash, 10)" 2>&1 |
		grep -c "issuing" || true)
	echo "simhash_nearest $tab: $n remote commands per call"
done
n=$(cq -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = log" \
	-c "SELECT count(*) FROM d32 WHERE fp <~> (hashint8extended(5, 1) # (hashint8extended(5, 2) << 13))::simhash <= 3" 2>&1 | grep -c "issuing" || true)
echo "one lookup on d32: $n remote commands"

echo "== 3. pairs within 3 bits"
for run in 1 2 3; do
	echo "simhash_pairs on one node (local table), run $run: $(seconds cq -c "SET work_mem = '1GB'" \
		-c "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM loc', 3)") s"
done
echo "simhash_pairs over d32 (on the workers): $(seconds cq -c "SET work_mem = '1GB'" \
	-c "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM d32', 3)") s"
echo "simhash_pairs over d32 (READ ONLY: rows pulled to the coordinator): $(seconds cq -c "SET work_mem = '1GB'" \
	-c "BEGIN READ ONLY" -c "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM d32', 3)" -c "COMMIT") s"
for nb in 4 5; do
	keys=keys$nb
	cq -c "SET citus.shard_count = 32" -c "CREATE TABLE $keys (key bigint, tab int, id bigint, fp simhash)" \
		-c "SELECT create_distributed_table('$keys', 'key')" >/dev/null
	echo "nblocks = $nb: filling the key table from d32 ($(cq -c "SELECT count(*) FROM simhash_block_keys(0::bigint::simhash, 3, $nb)") keys per row): $(seconds cq \
		-c "INSERT INTO $keys SELECT k.key, k.tab, d.id, d.fp FROM d32 d CROSS JOIN LATERAL simhash_block_keys(d.fp, 3, $nb) k") s"
	cq -c "VACUUM ANALYZE $keys"
	echo "nblocks = $nb: key table $(cq -c "SELECT pg_size_pretty(citus_table_size('$keys'))"), d32 $(cq -c "SELECT pg_size_pretty(citus_table_size('d32'))")"
	join="SELECT a.id AS id_a, b.id AS id_b, (a.fp <~> b.fp)::int AS distance
		FROM $keys a JOIN $keys b ON a.key = b.key AND a.tab = b.tab AND a.id < b.id
		WHERE a.fp <~> b.fp <= 3 AND simhash_first_common_table(a.fp, b.fp, 3, $nb) = a.tab"
	for run in 1 2 3; do
		echo "nblocks = $nb: block-keyed self-join on the workers, run $run: $(seconds cq -c "SELECT count(*) FROM ($join) j") s"
	done
	echo "nblocks = $nb: pairs: local $(cq -c "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM loc', 3)"), distributed $(cq -c "SELECT count(*) FROM ($join) j"), differing $(cq -c "SELECT count(*) FROM ((SELECT * FROM simhash_pairs('SELECT id, fp FROM loc', 3) EXCEPT SELECT * FROM ($join) j) UNION ALL (SELECT * FROM ($join) j EXCEPT SELECT * FROM simhash_pairs('SELECT id, fp FROM loc', 3))) x")"
done
