# The hamming index access method under WAL: its radius and nearest-first
# answers equal a sequential scan's on a streaming standby after replay,
# after a crash (immediate stop) and restart, and after concurrent inserts,
# updates, deletes and queries from pgbench; an exclusion constraint
# rejects concurrent near-copies; and a standby session's kept tail pages
# follow VACUUM on the primary.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTest;

my ($primary, $standby) = primary_and_standby();

$primary->safe_psql('postgres', simhash_test_sql() . q{
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 20000);
	CREATE INDEX docs_fp ON docs USING hamming (fp);
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 16) d;
	INSERT INTO docs (fp) SELECT NULL FROM generate_series(1, 5);
});

# radius answers for k = 0..20 and the 30 nearest rows of each center, as text
my $radius_query = q{
	SELECT string_agg(k || ':' || c.j || ':' || d.id, ',' ORDER BY k, c.j, d.id)
	FROM centers c, generate_series(0, 20, 2) k, docs d WHERE d.fp <~> c.fp <= k};
my $nearest_query = q{
	SELECT string_agg(c.j || ':' || x.d, ',' ORDER BY c.j, x.n)
	FROM centers c, LATERAL (SELECT row_number() OVER () AS n, d FROM
		(SELECT fp <~> c.fp AS d FROM docs ORDER BY fp <~> c.fp LIMIT 30) s) x};

sub check_exact
{
	my ($node, $label) = @_;
	my $index_settings = index_settings($node);
	my $seq_settings = 'SET enable_bitmapscan = off; SET enable_indexscan = off;';

	like($node->safe_psql('postgres', "$index_settings EXPLAIN (COSTS OFF) $radius_query"),
		qr/Index Scan using docs_fp/, "$label: radius search uses the index");
	like($node->safe_psql('postgres', "$index_settings EXPLAIN (COSTS OFF) $nearest_query"),
		qr/Index Scan using docs_fp/, "$label: nearest first uses the index");
	my $radius_index = $node->safe_psql('postgres', "$index_settings $radius_query");
	ok(length($radius_index) > 0, "$label: the planted neighbours are found");
	is($radius_index, $node->safe_psql('postgres', "$seq_settings $radius_query"),
		"$label: radius answer equals sequential scan");
	is($node->safe_psql('postgres', "$index_settings $nearest_query"),
		$node->safe_psql('postgres', "$seq_settings $nearest_query"),
		"$label: nearest distances equal a sorted sequential scan");
	is($node->safe_psql('postgres', "$index_settings SELECT count(*) FROM (SELECT 1 FROM docs ORDER BY fp <~> '0123456789abcdef') s"),
		$node->safe_psql('postgres', 'SELECT count(*) FROM docs'),
		"$label: an ordered scan returns every row, NULL fingerprints too");
}

$primary->wait_for_catchup($standby);
check_exact($primary, 'primary');
check_exact($standby, 'standby after replay');

# updates, deletes, VACUUM (pages refilled afterwards), REINDEX, replayed on the standby
$primary->safe_psql('postgres', q{
	UPDATE docs SET fp = flip_bits(fp, 2) WHERE id % 5 = 0;
	DELETE FROM docs WHERE id % 7 = 0 OR id BETWEEN 1000 AND 6000;
	VACUUM docs;
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 3000);
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 4) d;
});
$primary->wait_for_catchup($standby);
check_exact($standby, 'standby after update, delete, vacuum, refill');
$primary->safe_psql('postgres', 'REINDEX INDEX docs_fp');
$primary->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY docs_fp');
$primary->wait_for_catchup($standby);
check_exact($standby, 'standby after reindex');

# crash: an immediate stop loses nothing committed and leaves the index consistent
$primary->safe_psql('postgres', q{
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 6) d;
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 2000);
	DELETE FROM docs WHERE id % 9 = 0;
	VACUUM docs;
});
my $before = $primary->safe_psql('postgres', 'SELECT count(*) FROM docs');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM docs'), $before, 'crash: committed rows survive');
check_exact($primary, 'primary after crash recovery');

# concurrent writers and readers (inserts fill pages, deletes and VACUUM free them)
my $script = $primary->basedir . '/mixed.sql';
open(my $fh, '>', $script) or die $!;
print $fh q{
\set c random(1, 20)
\set d random(0, 8)
INSERT INTO docs (fp) SELECT flip_bits(fp, :d) FROM centers WHERE j = :c;
INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 20);
SELECT count(*) FROM docs d, centers c WHERE c.j = :c AND d.fp <~> c.fp <= 9;
SELECT id FROM docs ORDER BY fp <~> (SELECT fp FROM centers WHERE j = :c) LIMIT 5;
UPDATE docs SET fp = flip_bits(fp, 1) WHERE id = (SELECT max(id) FROM docs) - :d * 5;
DELETE FROM docs WHERE id = (SELECT max(id) FROM docs) - :d * 3;
};
close $fh;
my $vacuum_script = $primary->basedir . '/vacuum.sql';
open($fh, '>', $vacuum_script) or die $!;
print $fh "VACUUM docs;\nSELECT pg_sleep(0.05);\n";
close $fh;
$primary->command_ok(
	[ 'pgbench', '--no-vacuum', '--client=6', '--jobs=2', '--transactions=200',
	  '--file=' . $script . '@10', '--file=' . $vacuum_script . '@1',
	  '--host=' . $primary->host, '--port=' . $primary->port, 'postgres' ],
	'pgbench: concurrent inserts, updates, deletes, vacuums and index queries');
$primary->wait_for_catchup($standby);
check_exact($primary, 'primary after concurrent load');
check_exact($standby, 'standby after concurrent load');

# an exclusion constraint on % rejects a near-copy race-free: of two
# concurrent near-copies, the second waits for the first to commit, then fails
$primary->safe_psql('postgres', q{
	ALTER DATABASE postgres SET simhash.max_distance = 3;
	CREATE TABLE distinct_docs (id int, fp simhash, EXCLUDE USING hamming (fp WITH %));
	INSERT INTO distinct_docs SELECT j, fp FROM centers;
});
my $first = $primary->background_psql('postgres');
$first->query_safe("BEGIN; INSERT INTO distinct_docs VALUES (100, 'ffff000000000000');");
my $second = $primary->background_psql('postgres', on_error_stop => 0);
$second->query_until(qr/sent/, "\\echo sent\nINSERT INTO distinct_docs VALUES (101, 'ffff000000000001');\n");
ok($primary->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO distinct_docs VALUES (101%'}),
	'exclusion: the second near-copy waits for the first transaction');
$first->query_safe('COMMIT');
$first->quit;
$second->quit;
like($second->{stderr}, qr/conflicting key value violates exclusion constraint/,
	'exclusion: the second near-copy fails once the first commits');
is($primary->safe_psql('postgres', q{SELECT string_agg(id::text, ',') FROM distinct_docs WHERE id >= 100}),
	'100', 'exclusion: only the first near-copy is stored');

is($primary->safe_psql('postgres',
	q{SELECT hamming_index_check('docs_fp')::text || hamming_index_check('distinct_docs_fp_excl')::text}),
	'', 'hamming_index_check passes on the primary');
is($standby->safe_psql('postgres', q{SELECT hamming_index_check('docs_fp')::text}), '',
	'hamming_index_check passes on the standby');

# a standby session keeps the full tail pages it read for its next lookups;
# VACUUM's removals on the primary, once replayed, make it read them again:
# rows that took over the TIDs VACUUM freed are not found at the removed
# rows' fingerprints
$primary->safe_psql('postgres', q{
	CREATE TABLE kept (id int, fp simhash) WITH (autovacuum_enabled = off);
	INSERT INTO kept SELECT i, random_simhash() FROM generate_series(1, 5000) i;
	CREATE INDEX kept_fp ON kept USING hamming (fp) WITH (tail_limit = 100000);
	INSERT INTO kept SELECT 100000 + j * 100 + d, flip_bits(c.fp, d) FROM centers c, generate_series(0, 12) d;
	INSERT INTO kept SELECT 200000 + i, random_simhash() FROM generate_series(1, 1000) i;
});
$primary->wait_for_catchup($standby);
my $kept_query = q{SELECT string_agg(c.j || ':' || k.id, ',' ORDER BY c.j, k.id)
	FROM centers c, kept k WHERE k.fp <~> c.fp <= 3;};
my $seq_settings = 'SET enable_bitmapscan = off; SET enable_indexscan = off;';
my $reader = $standby->background_psql('postgres');
$reader->query_safe(index_settings($standby));
like($reader->query_safe("EXPLAIN (COSTS OFF) $kept_query"), qr/kept_fp/, 'kept pages: the lookup uses the index');
my $kept_before = $reader->query_safe($kept_query);
ok(length($kept_before) > 0, 'kept pages: the planted neighbours are found');
is($kept_before, $standby->safe_psql('postgres', "$seq_settings $kept_query"),
	'kept pages: a standby lookup equals the sequential scan');
is($reader->query_safe($kept_query), $kept_before, 'kept pages: the next lookup too');
$primary->safe_psql('postgres', q{
	CREATE TABLE freed AS SELECT ctid AS c FROM kept WHERE id BETWEEN 100000 AND 199999;
	DELETE FROM kept WHERE id BETWEEN 100000 AND 199999;
	VACUUM kept;
	INSERT INTO kept SELECT 300000 + i, random_simhash() FROM generate_series(1, 2000) i;
});
is($primary->safe_psql('postgres', q{
	SELECT (SELECT merges FROM hamming_index_info('kept_fp')) = 0
	   AND EXISTS (SELECT 1 FROM kept WHERE ctid IN (SELECT c FROM freed))}), 't',
	'kept pages: VACUUM freed TIDs that new rows took, without a merge');
$primary->wait_for_catchup($standby);
is($reader->query_safe($kept_query), $standby->safe_psql('postgres', "$seq_settings $kept_query"),
	'kept pages: the same standby session after the VACUUM equals the sequential scan');
$reader->quit;

$standby->stop;
$primary->stop;
done_testing();
