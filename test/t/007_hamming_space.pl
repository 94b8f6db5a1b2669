# Space of a hamming index across merges that fail, are cancelled or end in
# a crash: the free pages a merge took come back to the free space map (the
# next merge or VACUUM records every block that nothing uses), so an index
# merged through such failures stays the size of one merged without them;
# a completed merge survives an immediate stop; answers stay exact.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTest;

my $node = PostgreSQL::Test::Cluster->new('space');
$node->init(no_data_checksums => 1);	# the test writes into a metapage (18 enables checksums)
# a long WAL writer delay: only a flush of the merge's own makes it durable
$node->append_conf('postgresql.conf', "autovacuum = off\nwal_writer_delay = '10s'\n");
$node->start;
$node->safe_psql('postgres', simhash_test_sql());
for my $t ('failing', 'control')
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (id bigint, fp simhash) WITH (autovacuum_enabled = off);
		INSERT INTO $t SELECT i, random_simhash() FROM generate_series(1, 50000) i;
		CREATE INDEX ${t}_fp ON $t USING hamming (fp);
	});
}

sub pages { my ($t) = @_; return $node->safe_psql('postgres', "SELECT pg_relation_size('${t}_fp') / 8192"); }
sub check_notices
{
	my ($t) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT hamming_index_check('${t}_fp')");
	return $rc == 0 ? $err : "failed: $err";
}

# four rounds: 50,000 rows more, a merge that fails after it took the free
# pages of the last merge (its sort spills beyond 1 MB, beyond
# temp_file_limit), then one that completes; the control merges once
my $failures = 0;
for my $round (1 .. 4)
{
	my $first = 50000 * $round + 1;
	my $last = 50000 * ($round + 1);
	for my $t ('failing', 'control')
	{
		$node->safe_psql('postgres', qq{INSERT INTO $t SELECT i, random_simhash() FROM generate_series($first, $last) i});
	}
	my ($rc, $out, $err) = $node->psql('postgres',
		q{SET maintenance_work_mem = '1MB'; SET temp_file_limit = '64kB'; SELECT hamming_merge_tail('failing_fp')});
	$failures++ if $err =~ /temporary file size exceeds "?temp_file_limit/;	# 18 quotes the name
	if ($round == 2)
	{
		# and a cancelled one: a statement timeout somewhere in the merge
		$node->psql('postgres', q{SET statement_timeout = '20ms'; SELECT hamming_merge_tail('failing_fp')});
		# (a tail for the next merge, if this one completed)
		$node->safe_psql('postgres', q{INSERT INTO failing SELECT 0, random_simhash() FROM generate_series(1, 1000)});
	}
	if ($round == 3)
	{
		like(check_notices('failing'), qr/unused pages that the free space map does not list/,
			'hamming_index_check reports the pages a failed merge took');
		# a crash while they are taken
		$node->stop('immediate');
		$node->start;
	}
	is($node->safe_psql('postgres', q{SELECT hamming_merge_tail('failing_fp')}), 't', "round $round: a merge completes");
	is($node->safe_psql('postgres', q{SELECT hamming_merge_tail('control_fp')}), 't', "round $round: the control merges");
}
is($failures, 4, 'each round had a merge that failed on temp_file_limit');
$node->safe_psql('postgres', 'VACUUM failing; VACUUM control');
my ($failing, $control) = (pages('failing'), pages('control'));
note("pages: $failing with failed merges, $control without");
# the failed merges' holes (reserved past the free pages) became tail
# pages, reused by inserts since: a little more than the control, not
# a generation more per failure
cmp_ok($failing, '<=', $control * 1.5, 'failed merges lose no pages: the index stays near the size of the control');
is(check_notices('failing'), '', 'after VACUUM every unused page is in the free space map');
is(check_notices('control'), '', 'the control has none unlisted either');
index_answers_exact($node, 'failing', 'after failed, cancelled and crashed merges');

# a completed merge survives an immediate stop, though it wrote no transaction ID
$node->safe_psql('postgres', q{INSERT INTO control SELECT i, random_simhash() FROM generate_series(250001, 260000) i});
my $before = $node->safe_psql('postgres', q{SELECT merges FROM hamming_index_info('control_fp')});
is($node->safe_psql('postgres', q{SELECT hamming_merge_tail('control_fp')}), 't', 'a merge completes');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', qq{SELECT merges - $before || ' ' || tail_pages FROM hamming_index_info('control_fp')}),
	'1 0', 'the merge is there after an immediate stop: one more merge, no tail');
index_answers_exact($node, 'control', 'after the immediate stop');

# generations go round at 65535: a tail page written with none (0) is not
# taken for a page of a later merge at any generation of the tables, here
# 40000 (written into the metapage: magic, version, insert pages, the free
# list of 1000 pages, the tables' fields, then the generation)
$node->safe_psql('postgres', q{
	CREATE TABLE gens (id bigint, fp simhash);
	CREATE INDEX gens_fp ON gens USING hamming (fp) WITH (probe_tables = off);
	INSERT INTO gens SELECT i, random_simhash() FROM generate_series(1, 2000) i;
});
my $file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('gens_fp')");
$node->stop;
open(my $fh, '+<', $file) or die $!;
binmode $fh;
my $at = 24 + 4 + 4 + 8 + 4 + 4 * 1000 + 4 * 3 + 16 * 2 + 4;
sysseek($fh, $at, 0) or die $!;
sysread($fh, my $gen, 4) == 4 or die $!;
is(unpack('L', $gen), 0, 'the metapage says generation 0 where the test writes');
sysseek($fh, $at, 0) or die $!;
syswrite($fh, pack('L', 40000)) == 4 or die $!;
close $fh;
$node->start;
is($node->safe_psql('postgres', q{SET enable_seqscan = off; SELECT count(*) FROM gens WHERE fp <@ simhash_ball(0::bigint::simhash, 64)}),
	'2000', 'tail pages without a generation are read at generation 40000');

done_testing();
