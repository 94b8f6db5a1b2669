#!/usr/bin/env bash
# test/bench/bench_citus_mark.sh: simhash_mark_duplicates on a Citus table
# (a coordinator and two workers on loopback, all on this machine) against
# the single-node call on the same rows.
#   bash test/bench/bench_citus_mark.sh [N]      (default 100000; as root)
#   KEY_TYPES='bigint uuid' bash test/bench/bench_citus_mark.sh [N]
#   BENCH_FORM=query bash test/bench/bench_citus_mark.sh [N]
# N documents of test/bench/gen_corpus.py (or the first N of MARK_DOCS, a file
# of id <TAB> body that the server can read), for each key type of KEY_TYPES
# (bigint, uuid, text; default bigint) in a local table on the coordinator
# and in a distributed table of 32 shards, keyed by the document's number
# (bigint), md5 of it as a uuid, or 'doc-' and the number (text).  Then,
# MARK_RUNS times (default 1) in new sessions, for each key type:
#   single node   SELECT simhash_mark_duplicates('loc_T', 'body', 'dup') with
#                 max_parallel_workers_per_gather = 0, on the coordinator
#   distributed   SELECT simhash_mark_duplicates('dist_T', 'body', 'dup')
# each with its wall time, the CPU time of each node (its postmaster, its
# processes and their exited children, from /proc), and for the distributed
# call the bytes that the coordinator's backend received on its TCP sockets
# (ss; every connection to the workers kept open until the session ends)
# against the verified pairs; then the marks of the two tables compared.
# BENCH_FORM=query (bigint keys) times the query-text form instead,
#   simhash_dedup('SELECT id, shingle_simhash128(body, 3, ''auto'', 0),
#   shingle_simhash128(body, 3, ''auto'', 1), body FROM T', 49, 0.8, 3, 'auto')
# at simhash.pairs_recall = 0.99 (the radius and recall of the marks), on the
# local table, on the distributed one (on the workers), and on the
# distributed one in a READ ONLY transaction (the query's rows pulled to the
# coordinator, which does the rest); each prints the duplicates and an md5
# of every (id, duplicate_of).  Then simhash_pairs() of the same arguments
# on the distributed table: the verified pairs, their number and md5.
# CITUS_PORT as in test/citus.sh (the workers use the next two ports).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
source test/cluster.sh
source test/citus_cluster.sh
citus_installed || { echo "bench_citus_mark: Citus is not installed" >&2; exit 1; }
export PATH="$("$PG_CONFIG" --bindir):$PATH"
n=${1:-100000}
runs=${MARK_RUNS:-1}
key_types=${KEY_TYPES:-bigint}
form=${BENCH_FORM:-mark}
case $form in mark) ;; query) key_types=bigint ;; *) echo "bench_citus_mark: BENCH_FORM: $form is not mark or query" >&2; exit 2 ;; esac
for t in $key_types; do
	case $t in bigint | uuid | text) ;; *) echo "bench_citus_mark: KEY_TYPES: $t is not bigint, uuid or text" >&2; exit 2 ;; esac
done
make -s with_llvm=no WERROR=1 >/dev/null
make -s with_llvm=no install >/dev/null
work=$(mktemp -d /tmp/simhash-bench-citus-mark.XXXXXX)
chmod 755 "$work"
trap 'stop_citus "$work"; rm -rf "$work"' EXIT
start_citus "$work" "${CITUS_PORT:-55610}"
for node in coordinator worker1 worker2; do
	cat >>"$work/$node/data/postgresql.conf" <<'CONF'
maintenance_work_mem = '1GB'
work_mem = '64MB'
jit = off
autovacuum = off
max_wal_size = '8GB'
CONF
	as_pg_user "$(pg_bin pg_ctl)" -D "$work/$node/data" -l "$work/$node/server.log" -w restart >/dev/null
done

docs=${MARK_DOCS:-}
if [ -z "$docs" ]; then
	docs=$work/docs.tsv
	py=python3
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3
	$py test/bench/gen_corpus.py "$n" --seed 1 >"$docs"
	chmod 644 "$docs"
fi
cq -c "CREATE TABLE src (id bigint PRIMARY KEY, body text)" -c "COPY src FROM PROGRAM 'head -n $n $docs'"
for t in $key_types; do
	case $t in bigint) key="s.id" ;; uuid) key="md5(s.id::text)::uuid" ;; text) key="'doc-' || s.id" ;; esac
	cq <<SQL
CREATE TABLE loc_$t (id $t PRIMARY KEY, body text, dup $t);
INSERT INTO loc_$t SELECT $key, s.body FROM src AS s;
SET citus.shard_count = 32;
CREATE TABLE dist_$t (LIKE loc_$t INCLUDING ALL);
SELECT create_distributed_table('dist_$t', 'id');
INSERT INTO dist_$t SELECT * FROM loc_$t;
VACUUM ANALYZE loc_$t;
VACUUM ANALYZE dist_$t;
SQL
done
echo "== $(cq -c "SELECT count(*) FROM src") documents, $(cq -c "SELECT pg_size_pretty(sum(length(body))) FROM src") of text, keys: $key_types; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# cpu DIR: clock ticks used so far by a node (its postmaster, its live
# processes, and the children the postmaster has reaped)
cpu() {
	local pm
	pm=$(head -n 1 "$1/data/postmaster.pid")
	{ awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat"
	  for c in $(cat "/proc/$pm/task/$pm/children"); do awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || true; done
	} | awk '{s += $1} END {print s}'
}
hz=$(getconf CLK_TCK)
nodes="coordinator worker1 worker2"
# call TABLE [pairs]: the timed statement, its result in a column named marked
call() {
	local q="'SELECT id, shingle_simhash128(body, 3, ''auto'', 0), shingle_simhash128(body, 3, ''auto'', 1), body FROM $1', 49, 0.8, 3, 'auto'"
	if [ "$form" = mark ]; then
		echo "SELECT simhash_mark_duplicates('$1', 'body', 'dup') AS marked;"
	elif [ "${2:-}" = pairs ]; then
		echo "SET simhash.pairs_recall = 0.99;"
		echo "SELECT count(*) || ' ' || md5(string_agg(p::text, ',' ORDER BY p::text)) AS marked FROM simhash_pairs($q) AS p;"
	else
		echo "SET simhash.pairs_recall = 0.99;"
		echo "SELECT count(duplicate_of) || ' ' || md5(string_agg(id || ':' || coalesce(duplicate_of::text, '-'), ',' ORDER BY id)) AS marked"
		echo "FROM simhash_dedup($q);"
	fi
}
# timed LABEL TABLE SETTINGS [pairs]: one call in a new session
timed() {
	local label=$1 tab=$2 set=$3 t0 t1 out node
	declare -A c0
	for node in $nodes; do c0[$node]=$(cpu "$work/$node"); done
	t0=$(date +%s.%N)
	out=$(cq <<SQL 2>&1
$set
SET citus.max_cached_conns_per_worker = 64;
SET client_min_messages = debug1;
SELECT pg_backend_pid() AS pid \gset
\setenv BACKEND :pid
\! ss -tinpH state established | awk -v p="pid=\$BACKEND," 'index(\$0, p) {f = 1; next} f && match(\$0, /bytes_received:[0-9]+/) {s += substr(\$0, RSTART + 15, RLENGTH - 15)} {f = 0} END {print "received before", s + 0}'
$(call "$tab" "${4:-}")
\! ss -tinpH state established | awk -v p="pid=\$BACKEND," 'index(\$0, p) {f = 1; next} f && match(\$0, /bytes_received:[0-9]+/) {s += substr(\$0, RSTART + 15, RLENGTH - 15)} {f = 0} END {print "received after", s + 0}'
SQL
)
	t1=$(date +%s.%N)
	sleep 1	# the session's processes exit and are reaped
	printf '%s: %s s wall, %s marked;' "$label" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')" "$(grep -E '^[0-9]+( [0-9a-f]{32})?$' <<<"$out" | tail -n 1)"
	for node in $nodes; do
		printf ' %s %s s CPU' "$node" "$(awk -v a="${c0[$node]}" -v b="$(cpu "$work/$node")" -v hz="$hz" 'BEGIN {printf "%.2f", (b - a) / hz}')"
	done
	echo
	awk '/^received before/ {b = $3} /^received after/ {print "  coordinator backend received " $3 - b " bytes (its TCP sockets)"}' <<<"$out"
	grep -oE 'simhash_(mark_duplicates|query_distributed|dist_verify): .*' <<<"$out" | sed 's/^/  /' || true
}
for run in $(seq 1 "$runs"); do
	for t in $key_types; do
		cq -c "UPDATE loc_$t SET dup = NULL WHERE dup IS NOT NULL" -c "UPDATE dist_$t SET dup = NULL WHERE dup IS NOT NULL" -c "VACUUM loc_$t" -c "VACUUM dist_$t"
		timed "$t keys, single node, run $run" "loc_$t" "SET max_parallel_workers_per_gather = 0;"
		timed "$t keys, distributed, run $run" "dist_$t" ""
		if [ "$form" = query ]; then
			timed "$t keys, distributed, rows pulled to the coordinator (READ ONLY), run $run" "dist_$t" "BEGIN READ ONLY;"
			timed "$t keys, distributed, simhash_pairs (the verified pairs), run $run" "dist_$t" "" pairs
		fi
	done
done
[ "$form" = mark ] || exit 0
for t in $key_types; do
	echo "$t keys: marks differing: $(cq -c "SELECT count(*) FROM ((SELECT id, dup FROM loc_$t EXCEPT SELECT id, dup FROM dist_$t) UNION ALL (SELECT id, dup FROM dist_$t EXCEPT SELECT id, dup FROM loc_$t)) x")"
	# the verified pairs as the coordinator receives them: one row each (two
	# keys and two NULL ranks) in Citus's binary protocol, 7 bytes a row, 4 a
	# column, and the keys' binary forms
	case $t in bigint) send=int8send ;; uuid) send=uuid_send ;; text) send=textsend ;; esac
	echo "$t keys: size of a verified pair on the wire: about $(cq -c "SELECT round(avg(7 + 4 * 4 + octet_length($send(id)) + octet_length($send(dup)))) FROM loc_$t WHERE dup IS NOT NULL") bytes"
done
