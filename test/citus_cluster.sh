# test/citus_cluster.sh: sourced by test/citus.sh and test/bench/bench_citus.sh
# (after test/cluster.sh).  A Citus cluster on loopback TCP ports: a
# coordinator and two workers, each an ordinary throwaway cluster with
# shared_preload_libraries = 'citus' (initdb's default trust authentication).
#
#   citus_installed                 is citus.so in $PG_CONFIG --pkglibdir?
#   start_citus DIR PORT            coordinator on PORT, workers on PORT+1 and
#                                   PORT+2; CREATE EXTENSION citus, simhash
#   stop_citus DIR
#   psql_on PORT ARGS...            psql, unaligned, stops at the first error
#   cq ARGS...                      psql_on the coordinator

citus_installed() {
	[ -f "$("${PG_CONFIG:-pg_config}" --pkglibdir)/citus.so" ]
}

psql_on() {
	local p=$1
	shift
	psql -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$p" -U postgres -d postgres "$@"
}

cq() { psql_on "$CITUS_COORDINATOR_PORT" "$@"; }

start_citus() {
	local dir=$1 port=$2 i=0 n
	export CITUS_COORDINATOR_PORT=$port
	for n in coordinator worker1 worker2; do
		PGPORT_WANTED=$((port + i)) start_cluster "$dir/$n" \
			"listen_addresses = '127.0.0.1'" "shared_preload_libraries = 'citus'" \
			"max_connections = 100" "log_min_messages = warning" \
			"shared_buffers = 256MB" "max_worker_processes = 16" || return 1
		psql_on $((port + i)) -c "CREATE EXTENSION citus"
		i=$((i + 1))
	done
	cq -c "SELECT citus_set_coordinator_host('127.0.0.1', $port)" >/dev/null
	cq -c "SELECT citus_add_node('127.0.0.1', $((port + 1)))" >/dev/null
	cq -c "SELECT citus_add_node('127.0.0.1', $((port + 2)))" >/dev/null
	cq -c "CREATE EXTENSION simhash"
}

stop_citus() {
	local n
	for n in coordinator worker1 worker2; do stop_cluster "$1/$n"; done
}
