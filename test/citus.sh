#!/usr/bin/env bash
# test/citus.sh: simhash on a real Citus cluster (a coordinator and two workers
# on loopback TCP ports), every query shape of the README on a distributed table
# against the same rows in a local table, and the distributed whole-table
# de-duplication against simhash_pairs.
#   bash test/citus.sh          (as root or as the server's user; about a minute)
# Skips (exit 0) when Citus is not installed in the PostgreSQL that PG_CONFIG
# names (../shared/vendor/build-citus.sh installs it).  Prints PASS or FAIL for
# every check; exits non-zero on any failure.  CITUS_PORT (default 55610) is
# the coordinator's port, the workers use the next two.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
source test/cluster.sh
source test/citus_cluster.sh
if ! citus_installed; then
	echo "citus: skipped (not installed)"
	exit 0
fi
export PATH="$("$PG_CONFIG" --bindir):$PATH"
started=$(date +%s)

make -s with_llvm=no WERROR=1 >/dev/null
make -s with_llvm=no install >/dev/null

work=$(mktemp -d /tmp/simhash-citus.XXXXXX)
chmod 755 "$work"
trap 'stop_citus "$work"; rm -rf "$work"' EXIT
start_citus "$work" "${CITUS_PORT:-55610}"
q() { cq "$@"; }

failures=0
checks=0
pass() { checks=$((checks + 1)); echo "PASS  $1"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL  $1${2:+: $2}"; }

# same NAME SQL_DIST SQL_LOCAL: both give the same rows (and at least one)
same() {
	local name=$1 a b na nb
	a=$(q -c "SELECT count(*) || ' ' || coalesce(md5(string_agg(r::text, ';' ORDER BY r::text)), '') FROM ($2) r" 2>&1) || true
	b=$(q -c "SELECT count(*) || ' ' || coalesce(md5(string_agg(r::text, ';' ORDER BY r::text)), '') FROM ($3) r" 2>&1) || true
	na=${a%% *}
	nb=${b%% *}
	if [ "$a" = "$b" ] && [ "${na:-0}" -gt 0 ] 2>/dev/null; then
		pass "$name ($na rows)"
	else
		fail "$name" "distributed '$a', local '$b'"
	fi
}

# agree NAME GOT WANT: the distributed result GOT equals the local WANT
agree() {
	if [ "$2" = "$3" ] && [ -n "$3" ]; then pass "$1 ($3)"; else fail "$1" "distributed '$2', local '$3'"; fi
}

# expect NAME SQL VALUE: SQL (a psql script: its last output line) gives VALUE
expect() {
	local got
	got=$(q -c "$2" 2>&1 | tail -n 1) || true
	if [ "$got" = "$3" ]; then pass "$1"; else fail "$1" "got '$got', expected '$3'"; fi
}

echo "== data"
# 20,000 pseudo-random fingerprints, 2,000 near copies 0..8 bits away, 50
# exact copies; the same rows in a distributed table (32 shards, by id) and a
# local one
q >/dev/null <<'SQL'
CREATE FUNCTION flip(fp simhash, nbits int, seed int) RETURNS simhash
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT (fp::bigint # coalesce((SELECT bit_or(1::bigint << b) FROM
		(SELECT b FROM generate_series(0, 63) b ORDER BY hashint4(b + 64 * seed) LIMIT nbits) s), 0))::simhash
$$;
CREATE TABLE loc (id bigint PRIMARY KEY, fp simhash);
INSERT INTO loc SELECT i, (hashint8extended(i, 1) # (hashint8extended(i, 2) << 13))::simhash
FROM generate_series(1, 20000) i;
INSERT INTO loc SELECT 100000 + id, flip(fp, (id % 9)::int, id::int) FROM loc WHERE id <= 2000;
INSERT INTO loc SELECT 200000 + id, fp FROM loc WHERE id <= 50;
CREATE INDEX ON loc USING gin (fp);
SET citus.shard_count = 32;
CREATE TABLE dist (LIKE loc INCLUDING ALL);
SELECT create_distributed_table('dist', 'id');
INSERT INTO dist SELECT * FROM loc;
-- probes: 40 planted originals, as a reference table and a local one
CREATE TABLE probes_loc AS SELECT id AS pid, fp FROM loc WHERE id % 50 = 7 AND id <= 2000;
CREATE TABLE probes (LIKE probes_loc);
SELECT create_reference_table('probes');
INSERT INTO probes SELECT * FROM probes_loc;
ANALYZE loc; ANALYZE dist; ANALYZE probes; ANALYZE probes_loc;
SQL
probe=$(q -c "SELECT fp FROM loc WHERE id = 1007")
expect "same extension version on every node" \
	"SELECT count(DISTINCT result) || ' ' || bool_and(result = (SELECT extversion FROM pg_extension WHERE extname = 'simhash'))
	 FROM run_command_on_all_nodes(\$\$SELECT extversion FROM pg_extension WHERE extname = 'simhash'\$\$)" "1 true"
expect "GIN index on every shard" \
	"SELECT count(*) FROM run_command_on_shards('dist', \$\$SELECT count(*) FROM pg_indexes WHERE tablename = '%s' AND indexdef LIKE '%%gin%%'\$\$) WHERE result = '1'" "32"

echo "== lookups"
for k in 0 3 6 9; do
	same "fp <~> q <= $k, literal" \
		"SELECT id FROM dist WHERE fp <~> '$probe' <= $k" "SELECT id FROM loc WHERE fp <~> '$probe' <= $k"
	same "fp <~> q <= $k, join with a reference table" \
		"SELECT p.pid, d.id, d.fp <~> p.fp FROM probes p JOIN dist d ON d.fp <~> p.fp <= $k" \
		"SELECT p.pid, d.id, d.fp <~> p.fp FROM probes_loc p JOIN loc d ON d.fp <~> p.fp <= $k"
done
same "k < fp <~> q, = k" \
	"SELECT p.pid, d.id FROM probes p JOIN dist d ON 4 > d.fp <~> p.fp OR d.fp <~> p.fp = 6" \
	"SELECT p.pid, d.id FROM probes_loc p JOIN loc d ON 4 > d.fp <~> p.fp OR d.fp <~> p.fp = 6"
same "simhash_within" \
	"SELECT p.pid, d.id FROM probes p JOIN dist d ON simhash_within(d.fp, p.fp, 5)" \
	"SELECT p.pid, d.id FROM probes_loc p JOIN loc d ON simhash_within(d.fp, p.fp, 5)"
same "fp <@ simhash_ball(q, k)" \
	"SELECT p.pid, d.id FROM probes p JOIN dist d ON d.fp <@ simhash_ball(p.fp, 4)" \
	"SELECT p.pid, d.id FROM probes_loc p JOIN loc d ON d.fp <@ simhash_ball(p.fp, 4)"
same "simhash_ball(q, k) @> fp, literal" \
	"SELECT id FROM dist WHERE simhash_ball('$probe', 8) @> fp" "SELECT id FROM loc WHERE simhash_ball('$probe', 8) @> fp"
same "fp = q, router query on the distribution column" \
	"SELECT id FROM dist WHERE id = 1007 AND fp = '$probe'" "SELECT id FROM loc WHERE id = 1007 AND fp = '$probe'"
# (Citus plans prepared statements with custom plans; it refuses
# plan_cache_mode = force_generic_plan on distributed tables)
agree "prepared, k as a parameter, 8 executions" \
	"$(q <<<"PREPARE near(simhash, int) AS SELECT count(*) FROM dist WHERE fp <~> \$1 <= \$2;
		$(for r in 1 2 3 4 5 6 7 8; do echo "EXECUTE near('$probe', 8);"; done)" | sort -u)" \
	"$(q -c "SELECT count(*) FROM loc WHERE fp <~> '$probe' <= 8")"

# on_every_shard TABLE INDEX QUERY: the hamming index INDEX of TABLE is on
# each of its 32 shards, and each shard's plan of QUERY scans it
on_every_shard() {
	local plan used
	expect "$2 on every shard" \
		"SELECT count(*) FROM run_command_on_shards('$1', \$\$SELECT count(*) FROM pg_indexes WHERE tablename = '%s' AND indexname LIKE '$2%%' AND indexdef LIKE '%%USING hamming%%'\$\$) WHERE result = '1'" "32"
	plan=$(q -c "SET citus.explain_all_tasks = on" -c "EXPLAIN (COSTS OFF) $3" 2>&1 || true)
	used=$(grep -cE "Index Scan (using|on) $2" <<<"$plan" || true)
	if [ "$used" = 32 ]; then pass "every shard's plan scans $2: $3"; else fail "every shard's plan scans $2: $3" "$used of 32: $(grep -A6 -m1 'Task$' <<<"$plan" | tr '\n' ' ' | head -c 400)"; fi
}

echo "== a hamming index on the shards"
# CREATE INDEX ... USING hamming on a distributed table builds one index per
# shard (probe tables from the rows already there; later rows in the tail)
q >/dev/null <<'SQL'
CREATE TABLE dist_h (LIKE loc);
SELECT create_distributed_table('dist_h', 'id');
INSERT INTO dist_h SELECT * FROM loc WHERE id % 10 <> 3;
CREATE INDEX dist_h_fp ON dist_h USING hamming (fp);
INSERT INTO dist_h SELECT * FROM loc WHERE id % 10 = 3;
ANALYZE dist_h;
SQL
on_every_shard dist_h dist_h_fp "SELECT id FROM dist_h WHERE fp <~> '$probe' <= 3"
for k in 0 3 9 16; do
	same "hamming shards: fp <~> q <= $k, literal" \
		"SELECT id FROM dist_h WHERE fp <~> '$probe' <= $k" "SELECT id FROM loc WHERE fp <~> '$probe' <= $k"
	same "hamming shards: fp <~> q <= $k, join with a reference table" \
		"SELECT p.pid, d.id FROM probes p JOIN dist_h d ON d.fp <~> p.fp <= $k" \
		"SELECT p.pid, d.id FROM probes_loc p JOIN loc d ON d.fp <~> p.fp <= $k"
done
agree "hamming shards: ORDER BY fp <~> q LIMIT 25, the distances in order" \
	"$(q -c "SELECT string_agg(d::text, ',') FROM (SELECT fp <~> '$probe' AS d FROM dist_h ORDER BY fp <~> '$probe' LIMIT 25) s")" \
	"$(q -c "SELECT string_agg(d::text, ',') FROM (SELECT fp <~> '$probe' AS d FROM loc ORDER BY 1 LIMIT 25) s")"

echo "== the % operator after a plain SET"
# the first query of a session, before anything loaded the library: the
# threshold cannot be written into the query; the answer is right or an error
out=$(q -c "SET simhash.max_distance = 0" -c "SELECT count(*) FROM dist d, probes p WHERE p.pid = 1007 AND d.fp % p.fp" 2>&1 || true)
want=$(q -c "SELECT count(*) FROM loc WHERE fp <~> '$probe' <= 0")
if [ "$out" = "$want" ] || grep -q "reached a Citus node without its threshold" <<<"$out"; then
	pass "% as the first query of a session: right answer or an error ($(head -c 60 <<<"$out"))"
else
	fail "% as the first query of a session" "got '$out', local '$want'"
fi

# loaded at the start of every session of the database: the same query is right
q -c "ALTER DATABASE postgres SET session_preload_libraries = 'simhash'"
agree "% as the first query of a session, with session_preload_libraries = 'simhash'" \
	"$(q -c "SET simhash.max_distance = 0" -c "SELECT count(*) FROM dist d, probes p WHERE p.pid = 1007 AND d.fp % p.fp")" "$want"
q -c "ALTER DATABASE postgres RESET session_preload_libraries"
# with simhash preloaded on the coordinator, every query carries the threshold
q -c "ALTER SYSTEM SET shared_preload_libraries = citus, simhash"
as_pg_user "$(pg_bin pg_ctl)" -D "$work/coordinator/data" -l "$work/coordinator/server.log" -w restart >/dev/null
expect "shared_preload_libraries = citus, simhash on the coordinator" "SHOW shared_preload_libraries" "citus, simhash"
for k in 0 2 6; do
	agree "% after SET simhash.max_distance = $k, literal" \
		"$(q -c "SET simhash.max_distance = $k" -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM dist WHERE fp % '$probe'")" \
		"$(q -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM loc WHERE fp <~> '$probe' <= $k")"
	agree "% after SET simhash.max_distance = $k, join with a reference table" \
		"$(q -c "SET simhash.max_distance = $k" -c "SELECT count(*) FROM probes p JOIN dist d ON d.fp % p.fp")" \
		"$(q -c "SELECT count(*) FROM probes_loc p JOIN loc d ON d.fp <~> p.fp <= $k")"
done
# a prepared statement re-planned after the setting changes
agree "% in a CTE and a subquery" \
	"$(q -c "SET simhash.max_distance = 5" -c "WITH c AS MATERIALIZED (SELECT id, fp FROM dist WHERE fp % '$probe')
		SELECT string_agg(id::text, ',' ORDER BY id) FROM c WHERE id IN (SELECT id FROM dist WHERE fp % '$probe')")" \
	"$(q -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM loc WHERE fp <~> '$probe' <= 5")"
agree "% in a prepared statement, the setting changed after 7 executions" \
	"$(q <<<"SET simhash.max_distance = 0; PREPARE sim(simhash) AS SELECT count(*) FROM dist WHERE fp % \$1;
		$(for r in 1 2 3 4 5 6 7; do echo "EXECUTE sim('$probe');"; done)
		SET simhash.max_distance = 8; EXECUTE sim('$probe');" | uniq | paste -sd ' ')" \
	"$(q -c "SELECT count(*) FROM loc WHERE fp <~> '$probe' <= 0") $(q -c "SELECT count(*) FROM loc WHERE fp <~> '$probe' <= 8")"
echo "== the text index and ~= on the shards"
# CREATE INDEX ... USING hamming (body) on a distributed table of texts: each
# shard's index answers body ~= q and simhash_similar(body, q, t), in one
# round trip to every shard, as a sequential scan of the same rows does; with
# simhash preloaded (above), ~= carries the session's threshold to the nodes
q >/dev/null <<'SQL'
CREATE TABLE near_loc (id bigint PRIMARY KEY, body text);
INSERT INTO near_loc SELECT g, 'notice ' || g % 97 || ' of the harbour office on ferries, tides and the weather of week ' || g % 97
	|| CASE WHEN g % 3 = 0 THEN ' with a note ' || g ELSE '' END FROM generate_series(1, 3000) g;
INSERT INTO near_loc VALUES (5001, ''), (5002, NULL), (5003, '港口办公室关于渡轮和潮汐的通知 第十二周 北部地区有小雨'),
	(5004, '港口办公室关于渡轮和潮汐的通知 第十二周 北部地区有小雨 欢迎订阅');
SET citus.shard_count = 32;
CREATE TABLE near_dist (LIKE near_loc INCLUDING ALL);
SELECT create_distributed_table('near_dist', 'id');
INSERT INTO near_dist SELECT * FROM near_loc WHERE id % 4 <> 1;
CREATE INDEX near_dist_body ON near_dist USING hamming (body);
INSERT INTO near_dist SELECT * FROM near_loc WHERE id % 4 = 1;
ANALYZE near_dist;
SQL
text_probe='notice 5 of the harbour office on ferries, tides and the weather of week 5'
on_every_shard near_dist near_dist_body "SELECT id FROM near_dist WHERE body ~= '$text_probe'"
same "text index on the shards: body ~= q" \
	"SELECT id FROM near_dist WHERE body ~= '$text_probe'" "SELECT id FROM near_loc WHERE body ~= '$text_probe'"
same "text index on the shards: simhash_similar(body, q, 0.7), Chinese" \
	"SELECT id FROM near_dist WHERE simhash_similar(body, '港口办公室关于渡轮和潮汐的通知 第十二周 北部地区有小雨', 0.7)" \
	"SELECT id FROM near_loc WHERE simhash_similar(body, '港口办公室关于渡轮和潮汐的通知 第十二周 北部地区有小雨', 0.7)"
# a word more than 21 of the texts: 0.94 similar to them, so ~= finds them at
# the default 0.8 and not after SET simhash.similarity_threshold = 0.95, on
# the nodes as on one server
for t in 0.8 0.95; do
	agree "text index on the shards: ~= at the session's setting $t (rows)" \
		"$(q -c "SET simhash.similarity_threshold = $t" -c "SELECT count(*) FROM near_dist WHERE body ~= '$text_probe today'")" \
		"$(q -c "SELECT count(*) FROM near_loc WHERE simhash_similar(body, '$text_probe today', $t)")"
done
same "text index on the shards: every 50th text as a query, joined" \
	"SELECT q.id, t.id FROM near_loc q JOIN near_dist t ON t.body ~= q.body WHERE q.id % 50 = 0" \
	"SELECT q.id, t.id FROM near_loc q JOIN near_loc t ON t.body ~= q.body WHERE q.id % 50 = 0"

echo "== nearest first"
same "ORDER BY fp <~> q LIMIT 10" \
	"SELECT id, fp <~> '$probe' AS d FROM dist ORDER BY 2, 1 LIMIT 10" \
	"SELECT id, fp <~> '$probe' AS d FROM loc ORDER BY 2, 1 LIMIT 10"
same "simhash_nearest" \
	"SELECT * FROM simhash_nearest('SELECT id, fp FROM dist', '$probe', 10)" \
	"SELECT * FROM simhash_nearest('SELECT id, fp FROM loc', '$probe', 10)"
same "simhash_nearest, n beyond the first radius" \
	"SELECT * FROM simhash_nearest('SELECT id, fp FROM dist', '$probe', 30)" \
	"SELECT * FROM simhash_nearest('SELECT id, fp FROM loc', '$probe', 30)"

echo "== batch functions over a distributed table (rows pulled to the coordinator)"
same "simhash_pairs" "SELECT * FROM simhash_pairs('SELECT id, fp FROM dist', 3)" \
	"SELECT * FROM simhash_pairs('SELECT id, fp FROM loc', 3)"
same "simhash_clusters" "SELECT * FROM simhash_clusters('SELECT id, fp FROM dist', 3)" \
	"SELECT * FROM simhash_clusters('SELECT id, fp FROM loc', 3)"
same "simhash_dedup" "SELECT * FROM simhash_dedup('SELECT id, fp FROM dist', 6)" \
	"SELECT * FROM simhash_dedup('SELECT id, fp FROM loc', 6)"

echo "== distributed whole-table de-duplication (block keys, 5 blocks, max_distance 3)"
q >/dev/null <<'SQL'
SET citus.shard_count = 32;
CREATE TABLE dist_keys (key bigint, tab int, id bigint, fp simhash);
SELECT create_distributed_table('dist_keys', 'key');
INSERT INTO dist_keys SELECT k.key, k.tab, d.id, d.fp FROM dist d CROSS JOIN LATERAL simhash_block_keys(d.fp, 3, 5) k;
ANALYZE dist_keys;
CREATE TABLE dist_pairs AS
SELECT a.id AS id_a, b.id AS id_b, (a.fp <~> b.fp)::int AS distance, a.fp AS fp_a, b.fp AS fp_b
FROM dist_keys a JOIN dist_keys b ON a.key = b.key AND a.tab = b.tab AND a.id < b.id
WHERE a.fp <~> b.fp <= 3 AND simhash_first_common_table(a.fp, b.fp, 3, 5) = a.tab;
SQL
expect "key table holds 10 keys per row" "SELECT (SELECT count(*) FROM dist_keys) = 10 * (SELECT count(*) FROM loc)" "t"
# explained NAME SQL VALUE: the lines of EXPLAIN (COSTS OFF) SQL that name the
# Citus scan, its task count or a repartitioning, joined, are VALUE
explained() {
	local got
	got=$(q -c "EXPLAIN (COSTS OFF) $2" 2>&1 | grep -oE 'Custom Scan \(Citus [A-Za-z]+\)|Task Count: [0-9]+|Repartition[A-Za-z ]*' | paste -sd ' ') || true
	if [ "$got" = "$3" ]; then pass "$1"; else fail "$1" "got '$got', expected '$3'"; fi
}
explained "self-join on the keys runs on every shard, nothing repartitioned" \
	"SELECT a.id, b.id FROM dist_keys a JOIN dist_keys b ON a.key = b.key AND a.tab = b.tab AND a.id < b.id
	 WHERE a.fp <~> b.fp <= 3 AND simhash_first_common_table(a.fp, b.fp, 3, 5) = a.tab" \
	"Custom Scan (Citus Adaptive) Task Count: 32"
same "distributed pairs = simhash_pairs, each pair once" \
	"SELECT id_a, id_b, distance FROM dist_pairs" "SELECT * FROM simhash_pairs('SELECT id, fp FROM loc', 3)"
expect "no pair twice" "SELECT count(*) = count(DISTINCT (id_a, id_b)) FROM dist_pairs" "t"
same "same key table, k = 2" \
	"SELECT a.id, b.id, a.fp <~> b.fp FROM dist_keys a JOIN dist_keys b ON a.key = b.key AND a.tab = b.tab AND a.id < b.id
	 WHERE a.fp <~> b.fp <= 2 AND simhash_first_common_table(a.fp, b.fp, 3, 5) = a.tab" \
	"SELECT * FROM simhash_pairs('SELECT id, fp FROM loc', 2)"
paired="SELECT id_a, fp_a FROM dist_pairs UNION SELECT id_b, fp_b FROM dist_pairs"
same "clusters merged on the coordinator = simhash_clusters" \
	"SELECT * FROM simhash_clusters('$paired', 3)" \
	"SELECT c.* FROM simhash_clusters('SELECT id, fp FROM loc', 3) c
	 WHERE cluster_id IN (SELECT cluster_id FROM simhash_clusters('SELECT id, fp FROM loc', 3) GROUP BY 1 HAVING count(*) > 1)"
same "keep-the-first merged on the coordinator = simhash_dedup" \
	"SELECT * FROM simhash_dedup('$paired', 3) WHERE duplicate_of IS NOT NULL" \
	"SELECT * FROM simhash_dedup('SELECT id, fp FROM loc', 3) WHERE duplicate_of IS NOT NULL"

echo "== simhash_mark_duplicates on a distributed table (32 shards)"
# 1,500 texts of 40 words, near copies of 400 of them (the last word
# changed: similarity 0.95, or the last six: 0.73), exact copies, NULL and
# contentless bodies; the same rows in a local table and a distributed one
q >/dev/null <<'SQL'
CREATE FUNCTION words(seed int, n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT string_agg('w' || (hashint4(seed * 1000 + i) & 4095), ' ' ORDER BY i) FROM generate_series(1, n) i
$$;
CREATE TABLE mk_loc (id bigint PRIMARY KEY, body text, created int, dup bigint);
INSERT INTO mk_loc (id, body, created) SELECT i, words(i, 40), hashint4(i) % 1000 FROM generate_series(1, 1500) i;
INSERT INTO mk_loc (id, body, created)
SELECT 10000 + i, CASE WHEN i % 4 = 0 THEN words(i, 34) || ' ' || words(-i, 6) ELSE words(i, 39) || ' changed' END, hashint4(i + 7) % 1000
FROM generate_series(1, 400) i;
INSERT INTO mk_loc (id, body, created) SELECT 20000 + id, body, -id::int FROM mk_loc WHERE id BETWEEN 401 AND 450;
INSERT INTO mk_loc (id, body, created) VALUES (30001, NULL, 0), (30002, '!!!', 0), (30003, '!!!', 0);
SET citus.shard_count = 32;
CREATE TABLE mk (LIKE mk_loc INCLUDING ALL);
SELECT create_distributed_table('mk', 'id');
INSERT INTO mk SELECT * FROM mk_loc;
SQL
# marked NAME ARGS [TABLE]: simhash_mark_duplicates(TABLE, ARGS) gives the
# same count and the same marks as on TABLE_loc, and marks some rows (TABLE:
# mk by default)
marked() {
	local t=${3:-mk} dist loc
	dist=$(q -c "SELECT simhash_mark_duplicates('$t', $2)" -c "SELECT count(dup) || ' ' || md5(string_agg(id || ':' || coalesce(dup::text, '-'), ',' ORDER BY id)) FROM $t" | paste -sd ' ')
	loc=$(q -c "SELECT simhash_mark_duplicates('${t}_loc', $2)" -c "SELECT count(dup) || ' ' || md5(string_agg(id || ':' || coalesce(dup::text, '-'), ',' ORDER BY id)) FROM ${t}_loc" | paste -sd ' ')
	if [ "$dist" = "$loc" ] && [ "${loc%% *}" -gt 0 ] 2>/dev/null; then pass "$1 (${loc% *})"; else fail "$1" "distributed '$dist', local '$loc'"; fi
}
# distribute TABLE...: each TABLE, of 32 shards by its id, a copy of TABLE_loc
distribute() {
	local t
	for t in "$@"; do
		q -c "SET citus.shard_count = 32" -c "CREATE TABLE $t (LIKE ${t}_loc INCLUDING ALL)" \
			-c "SELECT create_distributed_table('$t', 'id')" -c "INSERT INTO $t SELECT * FROM ${t}_loc" >/dev/null
	done
}
# the same rows keyed by a uuid (mku) and by a text (mkt, whose order is not
# the numbers'), n the number of the row in mk
q >/dev/null <<'SQL'
CREATE TABLE mku_loc (id uuid PRIMARY KEY, n bigint, body text, created int, dup uuid);
INSERT INTO mku_loc SELECT md5(id::text)::uuid, id, body, created FROM mk_loc;
CREATE TABLE mkt_loc (id text PRIMARY KEY, n bigint, body text, created int, dup text);
INSERT INTO mkt_loc SELECT 'doc-' || id, id, body, created FROM mk_loc;
SQL
distribute mku mkt
marked "marks = the single-node call" "'body', 'dup'"
out=$(q -c "SET client_min_messages = debug1" -c "SELECT simhash_mark_duplicates('mk', 'body', 'dup')" 2>&1 || true)
if grep -q "candidates within 49 bits, bands at recall 0.99" <<<"$out" && grep -q "duplicates linked on the coordinator" <<<"$out"; then
	pass "candidates from the bands on the workers, linked on the coordinator"
else
	fail "candidates from the bands on the workers" "$(grep -m3 simhash_mark <<<"$out")"
fi
# the verification moves each shingle set at most once per worker that
# lacks it: the candidates are simhash_pairs() of the local rows (the same
# bands); the worker of each row in a candidate pair builds its set once, and
# the set of a pair's larger key goes to the worker of the smaller key only
# when that is another worker, once for each row and worker
want=$(q <<'SQL'
SET simhash.pairs_recall = 0.99;
CREATE TEMPORARY TABLE cand AS SELECT p.id_a AS a, p.id_b AS b FROM simhash_pairs('SELECT id, shingle_simhash128(body, 3, ''auto'', 0),
	shingle_simhash128(body, 3, ''auto'', 1) FROM mk_loc WHERE cardinality(shingle_set(body, 3, ''auto'')) > 0', 49) AS p;
CREATE TEMPORARY TABLE node AS SELECT m.id, p.groupid FROM mk_loc AS m
	JOIN pg_dist_placement AS p ON p.shardid = get_shard_id_for_distribution_column('mk', m.id);
SELECT count(*) || ' candidates, ' || (SELECT count(*) FROM (SELECT a FROM cand UNION SELECT b FROM cand) AS r) || ' shingle sets built, '
	|| (SELECT count(*) FROM (SELECT DISTINCT c.b, na.groupid FROM cand AS c JOIN node AS na ON na.id = c.a JOIN node AS nb ON nb.id = c.b
							   WHERE na.groupid <> nb.groupid) AS s) || ' sent to another worker'
FROM cand;
SQL
)
got=$(grep -oE '[0-9]+ candidates|[0-9]+ shingle sets built, [0-9]+ sent to another worker' <<<"$out" | paste -sd '|' | sed 's/|/, /')
read -r ncand _ _ _ _ _ nsent _ <<<"$got"
if [ "$got" = "$want" ] && [ "${nsent:-0}" -gt 0 ] && [ "$nsent" -lt "$ncand" ]; then
	pass "the verification sends a set once for each row and other worker, not once per pair ($got)"
else
	fail "the verification sends a set once for each row and other worker" "got '$got', expected '$want'"
fi
marked "marks with a rank = the single-node call" "'body', 'dup', rank => 'created'"
marked "min_similarity 0.6 with a rank = the single-node call" "'body', 'dup', 0.6, 'created'"
# new rows (copies that rank first: they become the kept rows) and deleted
# rows (kept rows: their duplicates are kept or linked anew)
for t in mk mk_loc; do
	q >/dev/null <<SQL
INSERT INTO $t (id, body, created) SELECT 40000 + id, body || ' extra', -5000 FROM $t WHERE id BETWEEN 1 AND 60;
DELETE FROM $t WHERE id BETWEEN 61 AND 120 OR id BETWEEN 10121 AND 10140;
SQL
done
marked "after inserts and deletes, with a rank" "'body', 'dup', rank => 'created'"
marked "after inserts and deletes, without a rank" "'body', 'dup'"
marked "uuid key: marks = the single-node call" "'body', 'dup'" mku
marked "text key: marks with a rank = the single-node call" "'body', 'dup', rank => 'created'" mkt
for t in mku mku_loc mkt mkt_loc; do
	case $t in mku*) key="md5((40000 + n)::text)::uuid" ;; *) key="'doc-' || 40000 + n" ;; esac
	q >/dev/null <<SQL
INSERT INTO $t (id, n, body, created) SELECT $key, 40000 + n, body || ' extra', -5000 FROM $t WHERE n BETWEEN 1 AND 60;
DELETE FROM $t WHERE n BETWEEN 61 AND 120 OR n BETWEEN 10121 AND 10140;
SQL
done
marked "uuid key, after inserts and deletes, with a rank" "'body', 'dup', rank => 'created'" mku
marked "text key, after inserts and deletes, without a rank" "'body', 'dup'" mkt
# shared NAME TABLE BITS RANK: ids of BITS bits, so that keys share a hash:
# the duplicates are those that the single-node call marked in TABLE_loc
shared() {
	local out
	out=$(q -c "SET client_min_messages = debug1" \
		-c "SELECT simhash_mark_distributed('$2', 'id', 'body', 0.8, simhash_similarity_radius(0.8), $4, $3)" \
		-c "SELECT 'differing ' || count(*) FROM ((SELECT k, kept FROM pg_temp.simhash_mark_dups EXCEPT SELECT id, dup FROM $2_loc WHERE dup IS NOT NULL)
			UNION ALL (SELECT id, dup FROM $2_loc WHERE dup IS NOT NULL EXCEPT SELECT k, kept FROM pg_temp.simhash_mark_dups)) x" 2>&1 || true)
	if grep -qE "ids of the keys, [1-9][0-9]* shared a hash" <<<"$out" && grep -qx "differing 0" <<<"$out"; then
		pass "$1: the same duplicates ($(grep -oE '[0-9]+ shared a hash' <<<"$out"))"
	else
		fail "$1" "$(grep -E 'shared a hash|differing|ERROR' <<<"$out" | head -c 300)"
	fi
}
shared "uuid key, keys that share a hash (ids of 11 bits for 2,000 rows)" mku 11 "'created'"
# keys of a type whose = is not pg_catalog's and that has no extended hash
# (isn's ean13: its text is hashed), and of a type with a typmod (char(6))
q >/dev/null <<'SQL'
CREATE EXTENSION isn;
CREATE TABLE mke_loc (id ean13 PRIMARY KEY, n bigint, body text, created int, dup ean13);
INSERT INTO mke_loc SELECT (s || (10 - (SELECT sum(substr(s, i, 1)::int * (3 - 2 * (i % 2))) FROM generate_series(1, 12) AS i) % 10) % 10)::ean13,
	id, body, created FROM (SELECT '200' || lpad((id * 7919)::text, 9, '0') AS s, * FROM mk_loc) AS m;
CREATE TABLE mkc_loc (id char(6) PRIMARY KEY, n bigint, body text, created int, dup char(6));
INSERT INTO mkc_loc SELECT 'k' || lpad(id::text, 5, '0'), id, body, created FROM mk_loc;
SQL
distribute mke mkc
marked "ean13 key (isn): marks = the single-node call" "'body', 'dup'" mke
shared "ean13 key, keys that share a hash" mke 11 NULL
marked "char(6) key: marks with a rank = the single-node call" "'body', 'dup', rank => 'created'" mkc
shared "char(6) key, keys that share a hash" mkc 11 "'created'"
# the call holds the table against writes until its transaction ends: every
# step reads the same rows; a concurrent insert waits (here: times out)
q -c "BEGIN" -c "SELECT simhash_mark_duplicates('mkc', 'body', 'dup')" -c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do
	[ "$(q -c "SELECT count(*) FROM pg_locks WHERE relation = 'mkc'::regclass AND mode = 'ShareRowExclusiveLock' AND granted")" = 1 ] && break
	sleep 0.1
done
out=$(q -c "SET lock_timeout = '200ms'" -c "INSERT INTO mkc (id, n, body) VALUES ('z00001', 0, 'a row written during the call')" 2>&1 || true)
wait "$holder" || true
if grep -q "lock timeout" <<<"$out"; then pass "a write waits for the call's transaction"; else fail "a write waits for the call's transaction" "$out"; fi
# the lock takes UPDATE, DELETE or TRUNCATE on the table: a role with UPDATE
# on the mark column only is told so
out=$(q -c "\set VERBOSITY verbose" -c "CREATE ROLE mk_col" -c "GRANT SELECT, UPDATE (dup) ON mkc TO mk_col" \
	-c "GRANT CREATE ON SCHEMA public TO mk_col" -c "SET ROLE mk_col" -c "SELECT simhash_mark_duplicates('mkc', 'body', 'dup')" 2>&1 || true)
if grep -q "ERROR:  42501: permission denied for table mkc" <<<"$out" && grep -q "^HINT:  The lock takes UPDATE, DELETE or TRUNCATE" <<<"$out"; then
	pass "UPDATE on the mark column only: 42501, the lock's privileges in the hint"
else
	fail "UPDATE on the mark column only" "$(head -c 300 <<<"$out")"
fi
# the query-text forms on a query of the distributed table (after the inserts
# and deletes above): the same rows as on the local table, for every form,
# verified or not, every linkage, with and without a rank, 256, 128 and 64 bits
fp256="shingle_simhash128(body, 3, ''auto'', 0), shingle_simhash128(body, 3, ''auto'', 1)"
for t in mk mk_loc; do
	eval "q256_$t=\"SELECT id, $fp256 FROM $t\""
	eval "v256_$t=\"SELECT id, $fp256, body FROM $t\""
	eval "r256_$t=\"SELECT id, $fp256, body, created FROM $t\""
done
# form NAME CALL: CALL on mk = on mk_loc, with Q256 (id, fingerprint), V256
# (and the body), R256 (and a rank) or TBL for the table in CALL
form() {
	local d=${2//Q256/$q256_mk} l=${2//Q256/$q256_mk_loc}
	d=${d//V256/$v256_mk} l=${l//V256/$v256_mk_loc}
	d=${d//R256/$r256_mk} l=${l//R256/$r256_mk_loc}
	same "$1" "${d//TBL/mk}" "${l//TBL/mk_loc}"
}
form "query-text simhash_pairs, 256 bits" "SELECT * FROM simhash_pairs('Q256', 49)"
form "query-text simhash_pairs, verified" "SELECT * FROM simhash_pairs('V256', 49, 0.8, 3, 'auto')"
form "query-text simhash_pairs, 64 bits" "SELECT * FROM simhash_pairs('SELECT id, simhash(body) FROM TBL', 6)"
form "query-text simhash_pairs, 128 bits, verified" "SELECT * FROM simhash_pairs('SELECT id, simhash128(body), body FROM TBL', 12, 0.6)"
form "query-text simhash_pairs, 128 bits, a stored shingle set" "SELECT * FROM simhash_pairs('SELECT id, simhash128(body), shingle_set(body) FROM TBL', 12, 0.6)"
form "query-text simhash_clusters" "SELECT * FROM simhash_clusters('Q256', 49)"
form "query-text simhash_clusters, verified" "SELECT * FROM simhash_clusters('V256', 49, 0.8, 3, 'auto')"
form "query-text simhash_clusters, 'center'" "SELECT * FROM simhash_clusters('Q256', 49, 'center')"
form "query-text simhash_clusters, verified, 'center', a rank" "SELECT * FROM simhash_clusters('R256', 49, 0.8, 'center', 3, 'auto')"
form "query-text simhash_clusters, verified, 'single', a rank" "SELECT * FROM simhash_clusters('R256', 49, 0.8, 'single', 3, 'auto')"
form "query-text simhash_dedup" "SELECT * FROM simhash_dedup('Q256', 49)"
form "query-text simhash_dedup, verified" "SELECT * FROM simhash_dedup('V256', 49, 0.8, 3, 'auto')"
form "query-text simhash_dedup, verified, 'single'" "SELECT * FROM simhash_dedup('V256', 49, 0.8, 'single', 3, 'auto')"
form "query-text simhash_dedup, verified, 'center', a rank" "SELECT * FROM simhash_dedup('R256', 49, 0.8, 'center', 3, 'auto')"
agree "query-text simhash_dedup, 64 bits, simhash.pairs_recall = 0.9" \
	"$(q -c "SET simhash.pairs_recall = 0.9" -c "SELECT count(*) || ' ' || md5(string_agg(d::text, ',' ORDER BY d::text)) FROM simhash_dedup('SELECT id, simhash(body) FROM mk', 8) d")" \
	"$(q -c "SET simhash.pairs_recall = 0.9" -c "SELECT count(*) || ' ' || md5(string_agg(d::text, ',' ORDER BY d::text)) FROM simhash_dedup('SELECT id, simhash(body) FROM mk_loc', 8) d")"
form "query-text simhash_lineage, verified" "SELECT * FROM simhash_lineage('V256', 49, 0.8, 'center', 3, 'auto')"
# with a maintenance_work_mem on the workers that cannot hold their sets,
# each worker verifies its pairs by a join with their sets instead
agree "query-text simhash_dedup, verified, the workers' sets over maintenance_work_mem" \
	"$(q -c "BEGIN" -c "SET citus.propagate_set_commands = 'local'" -c "SET LOCAL maintenance_work_mem = '1MB'" \
		-c "SELECT count(*) || ' ' || md5(string_agg(d::text, ',' ORDER BY d::text)) FROM simhash_dedup('$v256_mk', 49, 0.8, 3, 'auto') d" -c "COMMIT" | grep -E '^[0-9]+ [0-9a-f]+$')" \
	"$(q -c "SELECT count(*) || ' ' || md5(string_agg(d::text, ',' ORDER BY d::text)) FROM simhash_dedup('$v256_mk_loc', 49, 0.8, 3, 'auto') d")"
form "query-text simhash_lineage, 'single', a rank" "SELECT * FROM simhash_lineage('SELECT id, $fp256, created FROM TBL', 49, 'single')"
form "query-text simhash_dedup_keyed, verified, a rank" "SELECT * FROM simhash_dedup_keyed(NULL::bigint, 'R256', 49, 0.8)"
# the verified dedup on the workers: the query's ids and fingerprints stay
# on its shards (an INSERT ... SELECT pushed down to them), the shards read
# the bodies of the rows in candidate pairs, no shard query
# returns a body to the coordinator (a query on a shard that is not a
# repartitioning, with the body), which receives each row's id once and the
# verified pairs
out=$(q -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = log" \
	-c "SELECT 'kept ' || count(*) FROM simhash_dedup('$v256_mk', 49, 0.8, 3, 'auto') WHERE duplicate_of IS NULL" 2>&1 || true)
# count PATTERN: the lines of $out that match
count() { grep -c -- "$1" <<<"$out" || true; }
# bodies: the columns of shard queries whose rows come to the coordinator
# (not a repartitioning) that are a body
bodies() {
	grep 'issuing SELECT' <<<"$out" | grep -v 'worker_partition_query_result\|fetch_intermediate_results' |
		sed 's/.*issuing SELECT //; s/ FROM .*//' | tr ',' '\n' | grep -cE '^ *([a-z_0-9]+\.)?body( AS .*)?$' || true
}
got="$(count 'issuing INSERT INTO public.simhash_query_[0-9]*_rows_[0-9]* .*SELECT q.id, q.fp0, q.fp1 FROM (SELECT mk.id, public.shingle_simhash128') pushed-down inserts of the rows"
got+=", $(count 'issuing SELECT partition_index, .*worker_partition_query_result(.*public.shingle_set(.* FROM public.mk_[0-9]* mk)') of the candidates' sets (on the shards, to their workers' table)"
got+=", $(count 'simhash_query_[0-9]*_sent') statements of a table of one set per pair"
got+=", $(bodies) shard queries that return a body"
got+=", $(count 'issuing SELECT array_agg(id ORDER BY id)') of the ids"
got+=", $(count 'issuing SELECT .* FROM (SELECT public.simhash_verify_sets(') of the verified pairs (one a worker)"
got+=", $(count 'issuing COPY') copies from the coordinator, $(grep -E '^kept' <<<"$out")"
want="32 pushed-down inserts of the rows, 32 of the candidates' sets (on the shards, to their workers' table), 0 statements of a table of one set per pair"
want+=", 0 shard queries that return a body, 1 of the ids, 2 of the verified pairs (one a worker), 0 copies from the coordinator"
want+=", $(q -c "SELECT 'kept ' || count(*) FROM simhash_dedup('$v256_mk_loc', 49, 0.8, 3, 'auto') WHERE duplicate_of IS NULL")"
if [ "$got" = "$want" ]; then pass "verified simhash_dedup on a query of the distributed table runs on the workers ($got)"; else fail "verified simhash_dedup on the workers" "got '$got', expected '$want'"; fi
# with a rank, and the lineage: the pairs found on the workers by their ids,
# the ids and ranks read once more (no body), numbered on the coordinator
out=$(q -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = log" \
	-c "SELECT 'rows ' || count(*) FROM simhash_lineage('$r256_mk', 49, 0.8, 'center', 3, 'auto')" 2>&1 || true)
got="$(bodies) shard queries that return a body"
got+=", $(count 'issuing SELECT id, created AS rank FROM public.mk_[0-9]* mk') of the ids and ranks, $(grep -E '^rows' <<<"$out")"
want="0 shard queries that return a body, 32 of the ids and ranks, $(q -c "SELECT 'rows ' || count(*) FROM simhash_lineage('$r256_mk_loc', 49, 0.8, 'center', 3, 'auto')")"
if [ "$got" = "$want" ]; then pass "verified simhash_lineage with a rank on the workers ($got)"; else fail "verified simhash_lineage with a rank on the workers" "got '$got', expected '$want'"; fi
# on the workers when the query reads a distributed table (in a subquery
# too), not for a local or a reference table, nor on a worker
expect "the query-text forms run on the workers for a distributed table only" \
	"CREATE TABLE mk_ref (id bigint PRIMARY KEY, body text); SELECT create_reference_table('mk_ref');
	 SELECT simhash_query_on_workers('SELECT id FROM mk') || ' ' || simhash_query_on_workers('SELECT id FROM mk_loc') || ' '
		|| simhash_query_on_workers('SELECT id FROM mk_ref') || ' ' || simhash_query_on_workers('SELECT m.id FROM mk_loc m WHERE m.id IN (SELECT id FROM mk)')" \
	"true false false true"
agree "the query-text forms run on the coordinator when called on a worker" \
	"$(psql_on $((CITUS_COORDINATOR_PORT + 1)) -c "SELECT simhash_query_on_workers('SELECT id FROM mk')")" "f"
# the checks of one server: a NULL id, a repeated id; a read-only
# transaction runs the query on the coordinator, with the same answer
expect "query-text form on the workers: a NULL id is an error (22004)" \
	"DO \$\$ BEGIN PERFORM simhash_dedup('SELECT CASE WHEN id = 5 THEN NULL ELSE id END, simhash(body) FROM mk', 3); RAISE EXCEPTION 'not refused';
		EXCEPTION WHEN null_value_not_allowed THEN NULL; END \$\$; SELECT 'ok'" "ok"
expect "query-text form on the workers: a repeated id is an error (21000)" \
	"DO \$\$ BEGIN PERFORM simhash_clusters('SELECT id % 1000, simhash(body), body FROM mk', 3, 0.8); RAISE EXCEPTION 'not refused';
		EXCEPTION WHEN cardinality_violation THEN NULL; END \$\$; SELECT 'ok'" "ok"
agree "query-text form in a read-only transaction: on the coordinator, the same kept rows" \
	"$(q -c "BEGIN READ ONLY" -c "SELECT md5(string_agg(d::text, ',' ORDER BY d::text)) FROM simhash_dedup('$v256_mk', 49, 0.8, 3, 'auto') d" -c "COMMIT")" \
	"$(q -c "SELECT md5(string_agg(d::text, ',' ORDER BY d::text)) FROM simhash_dedup('$v256_mk_loc', 49, 0.8, 3, 'auto') d")"
# cancelled NAME TIMEOUT CALL PATTERN: CALL under statement_timeout =
# TIMEOUT is cancelled, and leaves no table named LIKE PATTERN on any node
cancelled() {
	local out
	out=$(q -c "SET statement_timeout = '$2'" -c "$3" 2>&1 || true)
	if grep -q "canceling statement due to statement timeout" <<<"$out"; then
		pass "a cancel on the coordinator stops $1"
	else
		fail "a cancel on the coordinator stops $1" "$(head -c 200 <<<"$out")"
	fi
	expect "no scratch table of $1 left on any node" \
		"SELECT sum(result::int) FROM run_command_on_all_nodes(\$\$SELECT count(*) FROM pg_class WHERE relname LIKE '$4'\$\$)" "0"
}
cancelled "a query-text form" 150ms "SELECT count(*) FROM simhash_dedup('$v256_mk', 49, 0.8, 3, 'auto')" "simhash_query_%"
expect "small table (exact tables, below 1,000 rows): = the single-node call" \
	"CREATE TABLE mk_small AS SELECT * FROM mk_loc WHERE id % 5 = 0; ALTER TABLE mk_small ADD PRIMARY KEY (id);
	 CREATE TABLE mk_small_d (LIKE mk_small INCLUDING ALL); SELECT create_distributed_table('mk_small_d', 'id');
	 INSERT INTO mk_small_d SELECT * FROM mk_small;
	 SELECT simhash_mark_duplicates('mk_small', 'body', 'dup') = simhash_mark_duplicates('mk_small_d', 'body', 'dup')
		AND (SELECT string_agg(id || ':' || dup, ',' ORDER BY id) FROM mk_small WHERE dup IS NOT NULL)
		  = (SELECT string_agg(id || ':' || dup, ',' ORDER BY id) FROM mk_small_d WHERE dup IS NOT NULL)" "t"
expect "uuid key, an empty table, then one row: nothing marked" \
	"CREATE TABLE mk_none (id uuid PRIMARY KEY, body text, dup uuid); SELECT create_distributed_table('mk_none', 'id');
	 CREATE TEMPORARY TABLE none_marked AS SELECT simhash_mark_duplicates('mk_none', 'body', 'dup') AS n;
	 INSERT INTO mk_none VALUES ('00000000-0000-0000-0000-000000000001', 'one text of a few words', NULL);
	 SELECT (SELECT n FROM none_marked) || ' ' || simhash_mark_duplicates('mk_none', 'body', 'dup')" "0 0"
cancelled "simhash_mark_duplicates" 100ms "SELECT simhash_mark_duplicates('mk', 'body', 'dup')" "simhash_mark_%"
expect "a composite primary key: an error (0A000)" \
	"CREATE TABLE mk_pair (id bigint, part int, body text, dup bigint, PRIMARY KEY (id, part)); SELECT create_distributed_table('mk_pair', 'id');
	 DO \$\$ BEGIN PERFORM simhash_mark_duplicates('mk_pair', 'body', 'dup'); RAISE EXCEPTION 'not refused';
		EXCEPTION WHEN feature_not_supported THEN NULL; END \$\$;
	 SELECT 'ok'" "ok"
# the 256-bit fingerprints of the rows with content, as a query in a literal
fq="SELECT id, shingle_simhash128(body, 3, ''auto'', 0), shingle_simhash128(body, 3, ''auto'', 1) FROM mk_loc WHERE cardinality(shingle_set(body, 3, ''auto'')) > 0"
for recall in 1 0.99; do
	same "simhash_pairs_share at recall $recall: three disjoint shares make the whole" \
		"SELECT * FROM simhash_pairs_share('$fq', 36, $recall, 0, 3)
		 UNION ALL SELECT * FROM simhash_pairs_share('$fq', 36, $recall, 1, 3)
		 UNION ALL SELECT * FROM simhash_pairs_share('$fq', 36, $recall, 2, 3)" \
		"SELECT * FROM simhash_pairs_share('$fq', 36, $recall, 0, 1)"
done
agree "simhash_pairs_share at recall 1, one share = simhash_pairs" \
	"$(q -c "SELECT md5(string_agg(p::text, ',' ORDER BY p::text)) FROM simhash_pairs_share('$fq', 36, 1, 0, 1) p")" \
	"$(q -c "SELECT md5(string_agg(p::text, ',' ORDER BY p::text)) FROM simhash_pairs('$fq', 36) p")"
agree "simhash_pairs_share at recall 0.99, one share = simhash_pairs at simhash.pairs_recall = 0.99" \
	"$(q -c "SELECT md5(string_agg(p::text, ',' ORDER BY p::text)) FROM simhash_pairs_share('$fq', 36, 0.99, 0, 1) p")" \
	"$(q -c "SET simhash.pairs_recall = 0.99" -c "SELECT md5(string_agg(p::text, ',' ORDER BY p::text)) FROM simhash_pairs('$fq', 36) p")"

echo "== a gated insert on a distributed table (doc/citus.md)"
# the function of doc/citus.md, with its locks as a switch: two sessions insert
# near-copies at the same time, the first one holding its transaction open
q >/dev/null <<'SQL'
CREATE TABLE gate_docs (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('gate_docs', 'id');
CREATE INDEX ON gate_docs USING hamming (body);
CREATE FUNCTION gate_insert(new_id bigint, new_body text, locked boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	IF locked THEN
		PERFORM pg_advisory_xact_lock('gate_docs'::regclass::oid::bigint);
	END IF;
	PERFORM FROM gate_docs WHERE simhash_similar(body, new_body, 0.8) LIMIT 1;
	IF FOUND THEN
		RETURN false;
	END IF;
	INSERT INTO gate_docs (id, body) VALUES (new_id, new_body);
	RETURN true;
END
$$;
SQL
for locked in true false; do
	q -c "TRUNCATE gate_docs"
	q -c "BEGIN" -c "SELECT gate_insert(1, 'The quick brown fox jumps over the lazy dog near the river bank today.', $locked)" \
		-c "SELECT pg_sleep(2)" -c "COMMIT" >/dev/null &
	sleep 0.7
	second=$(q -c "SELECT gate_insert(2, 'the quick brown fox JUMPS over the lazy dog,  near the river bank, today!', $locked)")
	wait
	third=$(q -c "SELECT gate_insert(3, 'A lazy afternoon by the river: the dog sleeps and the fox is nowhere to be seen.', $locked)")
	got="$second $third $(q -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM gate_docs")"
	if [ "$locked" = true ]; then want="f t 1,3"; else want="t t 1,2,3"; fi
	if [ "$got" = "$want" ]; then
		pass "concurrent near-copies, locks $locked: $want"
	else
		fail "concurrent near-copies, locks $locked" "got '$got', expected '$want'"
	fi
done

echo "== COPY, binary protocol, generated columns, distribution by fingerprint"
q -c "\\copy (SELECT * FROM loc) TO '$work/rows.txt'"
q -c "\\copy (SELECT * FROM loc) TO '$work/rows.bin' (FORMAT binary)"
q >/dev/null <<SQL
CREATE TABLE dist_text (LIKE loc); SELECT create_distributed_table('dist_text', 'id');
CREATE TABLE dist_bin (LIKE loc); SELECT create_distributed_table('dist_bin', 'id');
\\copy dist_text FROM '$work/rows.txt'
\\copy dist_bin FROM '$work/rows.bin' (FORMAT binary)
SQL
same "COPY text into a distributed table" "SELECT * FROM dist_text" "SELECT * FROM loc"
same "COPY binary into a distributed table" "SELECT * FROM dist_bin" "SELECT * FROM loc"
q -c "\\copy dist TO '$work/dist.bin' (FORMAT binary)"
q -c "CREATE TABLE back_bin (LIKE loc)" -c "\\copy back_bin FROM '$work/dist.bin' (FORMAT binary)"
same "COPY binary out of a distributed table" "SELECT * FROM back_bin" "SELECT * FROM loc"
agree "citus.enable_binary_protocol: simhash, simhash_ball and distances" \
	"$(q -c "SET citus.enable_binary_protocol = on" -c "SELECT md5(string_agg(r::text, ';' ORDER BY r::text))
		FROM (SELECT id, fp, simhash_ball(fp, 3) AS b, fp <~> '$probe' AS d FROM dist WHERE id % 7 = 0) r")" \
	"$(q -c "SELECT md5(string_agg(r::text, ';' ORDER BY r::text))
		FROM (SELECT id, fp, simhash_ball(fp, 3) AS b, fp <~> '$probe' AS d FROM loc WHERE id % 7 = 0) r")"
q >/dev/null <<'SQL'
CREATE TABLE texts_loc (id int PRIMARY KEY, body text, fp simhash GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO texts_loc (id, body) SELECT i, 'document ' || i || ' about ' || repeat('topic ' || (i % 13) || ' ', 1 + i % 5)
FROM generate_series(1, 500) i;
CREATE TABLE texts (LIKE texts_loc INCLUDING GENERATED);
SELECT create_distributed_table('texts', 'id');
INSERT INTO texts (id, body) SELECT id, body FROM texts_loc;
SET citus.shard_count = 8;
CREATE TABLE by_fp (LIKE loc);
SELECT create_distributed_table('by_fp', 'fp');
INSERT INTO by_fp SELECT * FROM loc;
SQL
same "generated column simhash(body) computed on the workers" "SELECT id, fp FROM texts" "SELECT id, fp FROM texts_loc"
same "distributed by the fingerprint (hash opclass): lookups" \
	"SELECT p.pid, d.id FROM probes p JOIN by_fp d ON d.fp <~> p.fp <= 4" \
	"SELECT p.pid, d.id FROM probes_loc p JOIN loc d ON d.fp <~> p.fp <= 4"
explained "distributed by the fingerprint: equality is a single-shard query" \
	"SELECT id FROM by_fp WHERE fp = '$probe'" "Custom Scan (Citus Adaptive) Task Count: 1"
same "distributed by the fingerprint: equality" \
	"SELECT id FROM by_fp WHERE fp = '$probe'" "SELECT id FROM loc WHERE fp = '$probe'"

echo "== upgrade"
# 0.3.0 is not installed fresh: its scripts come from test/upgrade/, for this
# step only (as test/t/006_upgrade.pl does), where the installation is writable
ext_dir="$("$PG_CONFIG" --sharedir)/extension"
if cp test/upgrade/simhash--0.1.0.sql "$ext_dir/" 2>/dev/null; then
	trap 'rm -f "$ext_dir/simhash--0.1.0.sql"; stop_citus "$work"; rm -rf "$work"' EXIT
	q -c "SET client_min_messages = warning" -c "DROP EXTENSION simhash CASCADE" -c "CREATE EXTENSION simhash VERSION '0.3.0'"
	expect "CREATE EXTENSION simhash VERSION '0.3.0' reaches every node" \
		"SELECT string_agg(DISTINCT result, ',') FROM run_command_on_all_nodes(\$\$SELECT extversion FROM pg_extension WHERE extname = 'simhash'\$\$)" "0.3.0"
	q -c "ALTER EXTENSION simhash UPDATE"
	expect "ALTER EXTENSION simhash UPDATE on the coordinator updates every node" \
		"SELECT string_agg(DISTINCT result, ',') FROM run_command_on_all_nodes(\$\$SELECT extversion FROM pg_extension WHERE extname = 'simhash'\$\$)" \
		"$(q -c "SELECT default_version FROM pg_available_extensions WHERE name = 'simhash'")"
	rm -f "$ext_dir/simhash--0.1.0.sql"
else
	echo "upgrade: skipped ($ext_dir is not writable)"
fi

echo "citus: $((checks - failures)) passed, $failures failed ($(( $(date +%s) - started )) s)"
[ "$failures" = 0 ]
