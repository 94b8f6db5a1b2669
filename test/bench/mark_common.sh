# test/bench/mark_common.sh: sourced, with the script's arguments, by the
# benchmarks of simhash_mark_duplicates (bench_mark.sh,
# bench_parallel_mark.sh) from the repository's root.  Sets n (the first
# argument, default 1,000,000 documents) and runs (MARK_RUNS, default 3),
# and declares times, the seconds of the runs by label.
#
#   mark_start PORT [postgresql.conf lines...]
#       installs what the benchmark needs and the extension (test/deps.sh),
#       starts a throwaway cluster on PGPORT_WANTED or PORT with the lines
#       and the settings of both benchmarks; sets work, py and docs: the
#       documents, MARK_DOCS or a file of test/bench/gen_corpus.py n --seed 1
#   mark_header TITLE HEADER ALIGNMENT
#                    the start of the report: its title, the machine and its
#                    load average, and the header of the table of runs
#   median           the median of the numbers on stdin (one per word)

n=${1:-1000000}
runs=${MARK_RUNS:-3}
declare -A times

mark_start() {
	local port=$1
	shift
	mkdir -p test/out
	source test/cluster.sh
	source test/deps.sh
	prepare_machine cluster
	PGPORT_WANTED=${PGPORT_WANTED:-$port} start_cluster "$work/cluster" "shared_buffers = '1GB'" \
		"jit = off" "max_wal_size = '8GB'" "maintenance_work_mem = '1GB'" "autovacuum = off" "$@"
	py=python3
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3
	if ! $py -c 'import numpy' 2>/dev/null && [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-numpy bc >/dev/null
	fi
	docs=${MARK_DOCS:-}
	if [ -z "$docs" ]; then
		local t0
		docs=$work/docs.tsv
		t0=$(date +%s.%N)
		$py test/bench/gen_corpus.py "$n" --seed 1 >"$docs"
		echo "generated $n documents in $(echo "$(date +%s.%N) - $t0" | bc) s" >&2
		[ "$(id -u)" = 0 ] && chmod 644 "$docs"
	fi
}

mark_header() {
	printf '# %s\n\n' "$1"
	echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '\n%s\n%s\n' "$2" "$3"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
