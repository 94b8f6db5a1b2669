#!/usr/bin/env bash
# test/bench/bench_pages.sh: the hamming index's page loops, eight entries at
# a time with AVX-512 (VPOPCNTQ) against one at a time (a build with
# SIMHASH_NO_AVX512=1, what CPUs without AVX-512 run), side by side.
#
#   bash test/bench/bench_pages.sh [ROWS] [TAIL]   (default 2000000 and 75000)
#
# As root it installs what it needs.  Builds simhash both ways, then on a
# throwaway cluster: ROWS random fingerprints with a hamming index and TAIL
# rows inserted after it (the tail every scan reads: the most a merge leaves
# at this size with tail_limit unset is about this), and the same ROWS in an
# index WITH (probe_tables = off) (every query a pass over its pages).  Five
# rounds, each build in turn (installed as a new file, so that no running
# backend maps the replaced one): the median over 200 random queries of
#   fp <~> q <= k, k = 3, 9, 16, and ORDER BY fp <~> q LIMIT 10
# (one backend, cached plans), and the answers' checksums for the first 10
# against the sequential scan's.  Prints the medians of the five rounds and their ratio;
# leaves the default build installed.  About 5 minutes on 2 cores.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
rows=${1:-2000000}
tail=${2:-75000}
source test/cluster.sh
source test/deps.sh
install_deps
dir=$(mktemp -d /tmp/bench_pages.XXXXXX)
trap 'stop_cluster "$dir/pg"; rm -rf "$dir"; make -s clean >/dev/null' EXIT
[ "$(id -u)" = 0 ] && chmod 755 "$dir"
make -s clean >/dev/null
make -s with_llvm=no WERROR=1 SIMHASH_NO_AVX512=1
cp simhash.so "$dir/one_by_one.so"
build_and_install
cp simhash.so "$dir/avx512.so"
lib=$("$PG_CONFIG" --pkglibdir)
grep -qw avx512_vpopcntdq /proc/cpuinfo && cpu="has" || cpu="does NOT have (both builds run one at a time)"

PGPORT_WANTED=${PGPORT_WANTED:-5493} start_cluster "$dir/pg" "shared_buffers = '2GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off"
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION simhash;
SELECT setseed(0.5);
CREATE FUNCTION random_fp() RETURNS simhash LANGUAGE sql VOLATILE AS
\$\$ SELECT (((random() * 4294967296)::bigint << 32) | (random() * 4294967296)::bigint)::simhash \$\$;
CREATE TABLE t (id bigint, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO t SELECT i, random_fp() FROM generate_series(1, $rows) i;
CREATE TABLE flat WITH (autovacuum_enabled = off) AS SELECT * FROM t;
CREATE INDEX t_fp ON t USING hamming (fp) WITH (tail_limit = 2147483647);
CREATE INDEX flat_fp ON flat USING hamming (fp) WITH (probe_tables = off);
INSERT INTO t SELECT -i, random_fp() FROM generate_series(1, $tail) i;
CREATE TABLE qs AS SELECT j, random_fp() AS fp FROM generate_series(1, 200) j;
VACUUM ANALYZE qs; ANALYZE t; ANALYZE flat;
CREATE FUNCTION timed(tbl regclass, k int, queries int) RETURNS text LANGUAGE plpgsql AS \$f\$
DECLARE v simhash; q int; t0 timestamptz; r bigint; sum bigint := 0; ms float8[] := '{}'; pass int;
BEGIN
  FOR pass IN 1..2 LOOP
    FOR q, v IN SELECT j, fp FROM qs WHERE j <= queries ORDER BY j LOOP
      t0 := clock_timestamp();
      IF tbl = 'flat'::regclass THEN
        SELECT count(*) INTO r FROM flat WHERE fp <~> v <= k;
      ELSIF k < 0 THEN
        SELECT sum(d) INTO r FROM (SELECT fp <~> v AS d FROM t ORDER BY fp <~> v LIMIT 10) s;
      ELSE
        SELECT count(*) INTO r FROM t WHERE fp <~> v <= k;
      END IF;
      IF pass = 2 OR queries <= 10 THEN
        ms := ms || extract(epoch FROM clock_timestamp() - t0) * 1000;
        sum := sum + CASE WHEN q <= 10 THEN coalesce(r, 0) ELSE 0 END;
      END IF;
    END LOOP;
    EXIT WHEN queries <= 10;	-- the sequential scan's answers: once
  END LOOP;
  RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ms) x) || ' ' || sum;
END \$f\$;
SQL
info=$(psql -X -Atc "SELECT table_entries || ' in the tables, ' || tail_entries || ' in the tail' FROM hamming_index_info('t_fp')")
shapes=("t 3" "t 9" "t 16" "t -1" "flat 3" "flat 16")
names=("k = 3" "k = 9" "k = 16" "LIMIT 10" "k = 3, pass" "k = 16, pass")
# run_shapes index|seqscan: each shape's median ms and checksum, |-separated
run_shapes() {
	local sql="SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off; SELECT"
	local s sep=" " queries=200
	[ "$1" = seqscan ] && sql="SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT" queries=10
	for s in "${shapes[@]}"; do
		set -- $s
		sql+="$sep timed('$1', $2, $queries)"
		sep=","
	done
	psql -X -Atq -F '|' -c "$sql" | tail -n 1
}
truth=$(run_shapes seqscan | sed 's/[0-9.e-]* //g')
declare -A med
for build in one_by_one avx512; do med[$build]=""; done
for round in 1 2 3 4 5; do
	for build in one_by_one avx512; do
		install -m 755 "$dir/$build.so" "$lib/simhash.so"
		out=$(run_shapes index)
		if [ "$(echo "$out" | sed "s/[0-9.e-]* //g")" != "$truth" ]; then
			echo "truth: $truth, got: $out" >&2
			echo "bench_pages: the $build build's answers differ from the sequential scan's" >&2
			exit 1
		fi
		med[$build]+="$(echo "$out" | sed 's/ [0-9-]*//g')"$'\n'
		echo "round $round, $build: $(echo "$out" | sed 's/ [0-9-]*//g')" >&2
	done
done
install -m 755 "$dir/avx512.so" "$lib/simhash.so"

echo "## The page loops: AVX-512 against one entry at a time"
echo
echo "$rows random fingerprints ($info) with a hamming index, and an index of the same rows WITH (probe_tables = off);"
echo "median ms over 200 random queries, the median of five rounds, the builds in turn; the CPU $cpu AVX-512 VPOPCNTDQ;"
echo "the answers to the first 10 queries equal the sequential scan's."
echo
echo "| query | one at a time | AVX-512 | ratio |"
echo "|---|---:|---:|---:|"
for i in "${!names[@]}"; do
	col=$((i + 1))
	a=$(echo -n "${med[one_by_one]}" | cut -d'|' -f$col | sort -g | sed -n 3p)
	b=$(echo -n "${med[avx512]}" | cut -d'|' -f$col | sort -g | sed -n 3p)
	awk -v n="${names[$i]}" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.4f | %.4f | %.2fx |\n", n, a, b, a / b }'
done
