# The simhash_ops GIN index under WAL: its answers equal a sequential scan's
# on a streaming standby after replay, after a crash (immediate stop) and
# restart, and after concurrent inserts, deletes and queries from pgbench.
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
	CREATE INDEX docs_fp ON docs USING gin (fp);
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 20000);
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 12) d;
});

# the index answer and the sequential-scan answer, as "k:center:id" lists
sub answers
{
	my ($node) = @_;
	my $query = q{
		SELECT string_agg(k || ':' || c.j || ':' || d.id, ',' ORDER BY k, c.j, d.id)
		FROM centers c, generate_series(0, 10) k, docs d WHERE d.fp <~> c.fp <= k};
	my $via_index = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_indexscan = off; $query");
	my $via_seqscan = $node->safe_psql('postgres',
		"SET enable_bitmapscan = off; SET enable_indexscan = off; $query");
	my $plan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_indexscan = off; EXPLAIN (COSTS OFF) $query");
	return ($via_index, $via_seqscan, $plan);
}

sub check_exact
{
	my ($node, $label) = @_;
	my ($via_index, $via_seqscan, $plan) = answers($node);
	like($plan, qr/Bitmap Index Scan on docs_fp/, "$label: the index is used");
	ok(length($via_index) > 0, "$label: the planted neighbours are found");
	is($via_index, $via_seqscan, "$label: index answer equals sequential scan");
}

$primary->wait_for_catchup($standby);
check_exact($primary, 'primary');
check_exact($standby, 'standby after replay');

# updates and deletes, then VACUUM, replayed on the standby
$primary->safe_psql('postgres', q{
	UPDATE docs SET fp = flip_bits(fp, 2) WHERE id % 5 = 0;
	DELETE FROM docs WHERE id % 7 = 0;
	VACUUM docs;
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 4) d;
});
$primary->wait_for_catchup($standby);
check_exact($standby, 'standby after update, delete, vacuum');

# crash: an immediate stop loses nothing committed and leaves the index consistent
$primary->safe_psql('postgres', q{
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 6) d;
});
my $before = $primary->safe_psql('postgres', 'SELECT count(*) FROM docs');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM docs'), $before, 'crash: committed rows survive');
check_exact($primary, 'primary after crash recovery');

# concurrent writers and readers
my $script = $primary->basedir . '/mixed.sql';
open(my $fh, '>', $script) or die $!;
print $fh q{
\set c random(1, 20)
\set d random(0, 8)
INSERT INTO docs (fp) SELECT flip_bits(fp, :d) FROM centers WHERE j = :c;
SELECT count(*) FROM docs d, centers c WHERE c.j = :c AND d.fp <~> c.fp <= 3;
DELETE FROM docs WHERE id = (SELECT max(id) FROM docs) - :d * 3;
};
close $fh;
$primary->command_ok(
	[ 'pgbench', '--no-vacuum', '--client=6', '--jobs=2', '--transactions=200',
	  '--file=' . $script, '--host=' . $primary->host, '--port=' . $primary->port, 'postgres' ],
	'pgbench: concurrent inserts, deletes and index queries');
$primary->wait_for_catchup($standby);
check_exact($primary, 'primary after concurrent load');
check_exact($standby, 'standby after concurrent load');

$standby->stop;
$primary->stop;
done_testing();
