# A randomized soak of a hamming index in long-lived backends: pgbench
# clients look up (radius and nearest-first, by index scans and bitmaps),
# insert near-copies and random rows, delete (the newest rows too), hold
# snapshots that keep merges from recycling pages (so that VACUUM often
# removes tail entries without merging), truncate and reload in
# transactions and merge the tail, while a throttled autovacuum runs.
# Every lookup compares the index's answer with a sequential scan's in the
# same REPEATABLE READ snapshot and raises an error when they differ, which
# aborts its pgbench client.  SIMHASH_SOAK_SECONDS sets the duration
# (default 40; doc/hamming.md gives a ten-minute run).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTest;

my $seconds = $ENV{SIMHASH_SOAK_SECONDS} || 40;
my $node = PostgreSQL::Test::Cluster->new('soak');
$node->init;
$node->append_conf('postgresql.conf', q{
autovacuum_naptime = 1s
autovacuum_vacuum_cost_delay = 10ms
autovacuum_vacuum_cost_limit = 5
log_autovacuum_min_duration = 0
simhash.tail_cache_size = '1MB'
});
$node->start;
$node->safe_psql('postgres', simhash_test_sql());
$node->safe_psql('postgres', q{
	CREATE TABLE soak (id bigint, fp simhash)
		WITH (autovacuum_vacuum_threshold = 200, autovacuum_vacuum_scale_factor = 0.01);
	CREATE SEQUENCE soak_id;
	INSERT INTO soak SELECT nextval('soak_id'), random_simhash() FROM generate_series(1, 30000);
	CREATE INDEX soak_fp ON soak USING hamming (fp) WITH (tail_limit = 256);
	CREATE INDEX soak_id_idx ON soak (id);
	-- the index's rows within k of q (radius) or the distances of the 10
	-- nearest (nearest), through the index and by a sequential scan, in
	-- the caller's snapshot: an error when they differ
	CREATE FUNCTION soak_check(q simhash, k int, how text) RETURNS int LANGUAGE plpgsql AS $$
	DECLARE
		stmt text := CASE how
			WHEN 'nearest' THEN 'SELECT array_agg(d ORDER BY d) FROM (SELECT fp <~> $1 AS d FROM soak ORDER BY fp <~> $1 LIMIT 10) x'
			ELSE 'SELECT array_agg(id ORDER BY id) FROM soak WHERE fp <@ simhash_ball($1, $2)' END;
		by_index bigint[];
		by_seq bigint[];
	BEGIN
		PERFORM set_config('enable_seqscan', 'off', true);
		PERFORM set_config('enable_sort', 'off', true);
		PERFORM set_config('enable_bitmapscan', (how = 'bitmap')::text, true);
		PERFORM set_config('enable_indexscan', (how <> 'bitmap')::text, true);
		EXECUTE stmt INTO by_index USING q, k;
		PERFORM set_config('enable_seqscan', 'on', true);
		PERFORM set_config('enable_sort', 'on', true);
		PERFORM set_config('enable_indexscan', 'off', true);
		PERFORM set_config('enable_bitmapscan', 'off', true);
		PERFORM set_config('enable_indexonlyscan', 'off', true);
		EXECUTE stmt INTO by_seq USING q, k;
		PERFORM set_config('enable_indexscan', 'on', true);
		PERFORM set_config('enable_bitmapscan', 'on', true);
		PERFORM set_config('enable_indexonlyscan', 'on', true);
		IF by_index IS DISTINCT FROM by_seq THEN
			RAISE EXCEPTION 'soak: % lookup at % bits differs: index %, sequential scan %',
				how, k, coalesce(cardinality(by_index), 0), coalesce(cardinality(by_seq), 0);
		END IF;
		RETURN coalesce(cardinality(by_index), 0);
	END $$;
});

my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	'lookup.sql@40' => q{
\set c random(1, 400000)
\set k random(0, 12)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT soak_check((SELECT fp FROM soak WHERE id >= :c ORDER BY id LIMIT 1), :k, 'index');
SELECT soak_check(flip_bits((SELECT fp FROM soak WHERE id >= :c ORDER BY id LIMIT 1), 2), :k, 'bitmap');
SELECT soak_check(random_simhash(), :k, 'nearest');
COMMIT;
},
	'insert.sql@20' => q{
\set c random(1, 400000)
INSERT INTO soak SELECT nextval('soak_id'), flip_bits(fp, (random() * 6)::int)
	FROM soak WHERE id >= :c ORDER BY id LIMIT 40;
INSERT INTO soak SELECT nextval('soak_id'), CASE WHEN random() < 0.05 THEN NULL ELSE random_simhash() END
	FROM generate_series(1, 200);
},
	'delete.sql@10' => q{
\set c random(1, 400000)
DELETE FROM soak WHERE id BETWEEN :c AND :c + 300;
DELETE FROM soak WHERE id > (SELECT last_value FROM soak_id) - 3000 AND random() < 0.1;
},
	'hold.sql@2' => q{
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM soak;
SELECT pg_sleep(1);
COMMIT;
},
	'merge.sql@2' => q{
SELECT hamming_merge_tail('soak_fp');
},
	'truncate.sql@1' => q{
BEGIN;
CREATE TEMP TABLE keep ON COMMIT DROP AS SELECT * FROM soak WHERE random() < 0.8;
TRUNCATE soak;
INSERT INTO soak SELECT * FROM keep;
COMMIT;
},
);
my @args;
for my $s (sort keys %scripts)
{
	(my $file = $s) =~ s/@.*//;
	PostgreSQL::Test::Utils::append_to_file("$dir/$file", $scripts{$s});
	(my $weight = $s) =~ s/.*@//;
	push @args, '-f', "$dir/$file\@$weight";
}

my ($out, $err) = ('', '');
my $ok = IPC::Run::run(['pgbench', '-n', '-c', '5', '-j', '2', '-T', $seconds, @args,
	'-h', $node->host, '-p', $node->port, 'postgres'], '>', \$out, '2>', \$err);
note($out);
ok($ok, "pgbench ran ${seconds}s without a client aborted") or diag($err);
unlike($err, qr/soak: .* differs/, 'every lookup equals the sequential scan in its snapshot');
like($out, qr/number of transactions actually processed: [1-9]/, 'the soak did work');
like(slurp_file($node->logfile), qr/automatic vacuum of table "postgres.public.soak"/,
	'autovacuum ran during the soak');

$node->safe_psql('postgres', 'VACUUM soak');
index_answers_exact($node, 'soak', 'after the soak');
is($node->safe_psql('postgres', q{SELECT hamming_index_check('soak_fp')::text}), '', 'hamming_index_check passes');

done_testing();
