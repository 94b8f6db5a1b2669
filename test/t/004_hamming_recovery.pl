# The hamming index access method across crashes and a promotion, with
# wal_consistency_checking = all on the primary: every WAL record of the
# method (build, inserts into the tail, VACUUM's tombstones and removals,
# the free list, merges of the tail, REINDEX, the init fork of an unlogged
# index) is replayed on the standby and its pages compared with the
# primary's.  A merge cancelled half-way, or cut by a crash, leaves an exact
# index, and the next merge completes.  An unlogged
# table's index works after an immediate stop and after the standby's
# promotion; a new (all-zero) page that a crash leaves at the end of an
# index is listed by VACUUM and filled by inserts.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use SimhashTest;

my ($primary, $standby) = primary_and_standby();
$primary->safe_psql('postgres', "ALTER SYSTEM SET wal_consistency_checking = 'all'");
$primary->safe_psql('postgres', 'SELECT pg_reload_conf()');

$primary->safe_psql('postgres', simhash_test_sql() . q{
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 5000);
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 10) d;
	INSERT INTO docs (fp) SELECT NULL FROM generate_series(1, 5);
	CREATE INDEX docs_fp ON docs USING hamming (fp);
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 2000);
	INSERT INTO docs (fp) SELECT NULL FROM generate_series(1, 5);
	DELETE FROM docs WHERE id % 3 = 0;
});
$primary->safe_psql('postgres', 'VACUUM docs');
$primary->safe_psql('postgres', q{
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 6) d;
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 1500);
	DELETE FROM docs WHERE id % 5 = 0;
});
$primary->safe_psql('postgres', 'VACUUM docs');
# an index without probe tables built by two parallel workers: the leader
# writes the tail of their entries and WAL-logs it as a serial build does
my ($ret, $out, $err) = $primary->psql('postgres', q{
	SET max_parallel_maintenance_workers = 2; SET min_parallel_table_scan_size = 0;
	SET maintenance_work_mem = '128MB'; SET client_min_messages = debug1;
	CREATE INDEX docs_fp_tail ON docs USING hamming (fp) WITH (probe_tables = off)});
is($ret, 0, 'the index without probe tables is built');
like($err, qr/with 2 of 2 requested parallel workers/, 'two parallel workers built the index without probe tables');
$primary->safe_psql('postgres', 'REINDEX INDEX docs_fp');
$primary->wait_for_catchup($standby);
index_answers_exact($primary, 'docs', 'primary');
index_answers_exact($standby, 'docs', 'standby under wal_consistency_checking');

# an index of text (four entries a row): built, changed, VACUUMed and
# merged on the primary, replayed under wal_consistency_checking; on the
# standby its answers equal a sequential scan's
$primary->safe_psql('postgres', q{
	CREATE TABLE texts (id int PRIMARY KEY, body text);
	INSERT INTO texts SELECT g, 'notice ' || g % 97 || ' of the harbour office on ferries, tides and the weather of week ' || g % 97
		|| CASE WHEN g % 3 = 0 THEN ' with a note ' || g ELSE '' END FROM generate_series(1, 3000) g;
	INSERT INTO texts VALUES (5001, ''), (5002, NULL), (5003, '港口办公室关于渡轮和潮汐的通知 第十二周');
	CREATE INDEX texts_body ON texts USING hamming (body);
	INSERT INTO texts SELECT g, 'a later notice ' || g % 50 || ' about the night ferries and the bridge works of month ' || g % 50
		FROM generate_series(3001, 4000) g;
	DELETE FROM texts WHERE id % 7 = 0;
});
$primary->safe_psql('postgres', 'VACUUM texts');
$primary->safe_psql('postgres', q{SELECT hamming_merge_tail('texts_body')});
$primary->wait_for_catchup($standby);
foreach my $node ($primary, $standby)
{
	my $compare = q{
		SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b), count(*), sum(cardinality(string_to_array(a, ',')))
		FROM (SELECT q.id,
		             (SELECT string_agg(t.id::text, ',' ORDER BY t.id) FROM texts t WHERE t.body ~= q.body) AS a,
		             (SELECT string_agg(t.id::text, ',' ORDER BY t.id) FROM texts t WHERE t.body || '' ~= q.body) AS b
		      FROM texts q WHERE q.id % 40 = 1 OR q.id > 5000) s};
	my ($diff, $queries, $found) = split /\|/, $node->safe_psql('postgres', "SET enable_seqscan = off; $compare");
	is($diff, 0, $node->name . ": the text index equals a sequential scan ($queries queries, $found rows)");
	ok($found > $queries, $node->name . ': the text index finds near-duplicates beyond the queries themselves');
}
is($standby->safe_psql('postgres', q{EXPLAIN (COSTS OFF) SELECT id FROM texts WHERE body ~= 'notice 5 of the harbour office'}) =~ /texts_body/ ? 1 : 0,
	1, 'the standby plans the text index');

# an index of simhash128 built by two parallel workers, replayed under
# wal_consistency_checking: on the standby it answers as a sequential scan
($ret, $out, $err) = $primary->psql('postgres', q{
	CREATE TABLE wide (id int, fp simhash128);
	INSERT INTO wide SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE md5((g % 300)::text)::simhash128 END
		FROM generate_series(1, 6000) g;
	SET max_parallel_maintenance_workers = 2; SET min_parallel_table_scan_size = 0;
	SET maintenance_work_mem = '128MB'; SET client_min_messages = debug1;
	CREATE INDEX wide_fp ON wide USING hamming (fp)});
is($ret, 0, 'the index of simhash128 is built');
like($err, qr/with 2 of 2 requested parallel workers/, 'two parallel workers built the index of simhash128');
$primary->wait_for_catchup($standby);
my $wide_query = q{SELECT count(*), string_agg(id::text, ',' ORDER BY id) FROM wide WHERE fp <~> md5('7')::simhash128 <= 40};
like($standby->safe_psql('postgres', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) $wide_query"), qr/wide_fp/, 'the standby plans the index of simhash128');
is($standby->safe_psql('postgres', "SET enable_seqscan = off; $wide_query"),
	$standby->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $wide_query"),
	'standby: the index of simhash128 answers as a sequential scan');

# merges (VACUUM merged the tail above): by inserts that grow the tail
# over tail_limit, by hamming_merge_tail(), by VACUUM again, each writing
# on the pages the one before replaced; replayed on the standby, whose
# answers stay exact
$primary->safe_psql('postgres', q{
	ALTER INDEX docs_fp SET (tail_limit = 64);
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 6000);
	INSERT INTO docs (fp) SELECT flip_bits(c.fp, d) FROM centers c, generate_series(0, 12) d;
	INSERT INTO docs (fp) SELECT NULL FROM generate_series(1, 3);
	DELETE FROM docs WHERE id % 11 = 0;
});
$primary->safe_psql('postgres', 'VACUUM docs');
$primary->safe_psql('postgres', q{
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 300);
	SELECT hamming_merge_tail('docs_fp');
	UPDATE docs SET fp = flip_bits(fp, 1) WHERE id % 13 = 0;
});
$primary->safe_psql('postgres', 'VACUUM docs');
ok($primary->safe_psql('postgres', q{SELECT merges FROM hamming_index_info('docs_fp')}) >= 3,
	'inserts, hamming_merge_tail and VACUUM merged the tail');
$primary->wait_for_catchup($standby);
index_answers_exact($standby, 'docs', 'standby after merges');

# a merge cancelled half-way leaves the metapage saying so; the index stays
# exact, and the next merge completes it
$primary->safe_psql('postgres', q{
	CREATE TABLE big (id bigserial, fp simhash);
	INSERT INTO big (fp) SELECT random_simhash() FROM generate_series(1, 200000);
	CREATE INDEX big_fp ON big USING hamming (fp) WITH (tail_limit = 1000000);
	INSERT INTO big (fp) SELECT fp FROM docs;
	INSERT INTO big (fp) SELECT random_simhash() FROM generate_series(1, 30000);
});
# how long a merge takes depends on the machine: shorter timeouts until one
# cancels it (a merge that ends first leaves no tail, so each try adds one)
my $cancelled = '';
for my $ms (200, 50, 20, 10, 5, 2, 1)
{
	my ($ret, $stdout, $stderr) = $primary->psql('postgres',
		"SET statement_timeout = '${ms}ms'; SELECT hamming_merge_tail('big_fp')");
	$cancelled = $stderr;
	last if $stderr =~ /canceling statement due to statement timeout/;
	$primary->safe_psql('postgres', q{INSERT INTO big (fp) SELECT random_simhash() FROM generate_series(1, 30000)});
}
like($cancelled, qr/canceling statement due to statement timeout/, 'a merge cancelled by a timeout');
note('after the cancel: ' . $primary->safe_psql('postgres', q{SELECT merge_in_progress FROM hamming_index_info('big_fp')}));
index_answers_exact($primary, 'big', 'after a cancelled merge');
$primary->safe_psql('postgres', q{INSERT INTO big (fp) SELECT random_simhash() FROM generate_series(1, 3000)});
is($primary->safe_psql('postgres', q{SELECT hamming_merge_tail('big_fp')}), 't', 'the next merge completes');
is($primary->safe_psql('postgres', q{SELECT tail_pages || ' ' || merge_in_progress FROM hamming_index_info('big_fp')}),
	'0 false', 'no tail and no merge in progress after it');
index_answers_exact($primary, 'big', 'after the merge that followed a cancelled one');

# tables that outgrow maintenance_work_mem (1 MB: about 43,000 entries): the
# merge holds the tail and the tombstones' keys only, and reads the old
# tables again as it writes the new ones; replayed on the standby
my $merges = $primary->safe_psql('postgres', q{SELECT merges FROM hamming_index_info('big_fp')});
$primary->safe_psql('postgres', q{
	INSERT INTO big (fp) SELECT random_simhash() FROM generate_series(1, 5000);
	INSERT INTO big (fp) SELECT fp FROM big WHERE id % 101 = 0;
	DELETE FROM big WHERE id % 13 = 0;
});
$primary->safe_psql('postgres', "SET maintenance_work_mem = '1MB'; VACUUM big");
is($primary->safe_psql('postgres', q{SELECT merges || ' ' || tail_pages FROM hamming_index_info('big_fp')}),
	($merges + 1) . ' 0', 'VACUUM merged the tail within 1 MB');
$primary->wait_for_catchup($standby);
index_answers_exact($primary, 'big', 'after a merge within 1 MB');
index_answers_exact($standby, 'big', 'standby after a merge within 1 MB');

# a merge cut by an immediate stop: recovery replays what it wrote, the
# index stays exact, and the next merge completes it
# (a merge may end before it is seen running: then another, up to 10 tries)
my $seen = 0;
for my $try (1 .. 10)
{
	$primary->safe_psql('postgres', q{INSERT INTO big (fp) SELECT random_simhash() FROM generate_series(1, 30000)});
	my $merge = IPC::Run::start(['psql', '-X', '-d', $primary->connstr('postgres'), '-c',
		q{SELECT hamming_merge_tail('big_fp')}], '>', \my $merge_out, '2>', \my $merge_err);
	while ($merge->pumpable)
	{
		$seen = $primary->safe_psql('postgres',
			q{SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'SELECT hamming_merge_tail%' AND state = 'active'}) eq 't';
		last if $seen;
		$merge->pump_nb;
	}
	$primary->stop('immediate') if $seen;
	$merge->finish;
	last if $seen;
}
note($seen ? 'stopped while a merge ran' : 'every merge ended before it was seen running');
$primary->stop('immediate') unless $seen;
$primary->start;
note('after the crash: ' . $primary->safe_psql('postgres', q{SELECT merge_in_progress FROM hamming_index_info('big_fp')}));
index_answers_exact($primary, 'big', 'after a merge cut by a crash');
$primary->safe_psql('postgres', q{INSERT INTO big (fp) SELECT random_simhash() FROM generate_series(1, 3000)});
is($primary->safe_psql('postgres', q{SELECT hamming_merge_tail('big_fp')}), 't', 'a merge after the crash completes');
index_answers_exact($primary, 'big', 'after the merge that followed the crash');
$primary->safe_psql('postgres', 'DROP TABLE big');

# an immediate stop (no checkpoint since the index was built) empties the
# unlogged table; its index works afterwards (explicit ids: an unlogged
# table's serial column is an unlogged sequence, which some minor releases
# of 15 read as damaged after a promotion)
$primary->safe_psql('postgres', q{
	CREATE UNLOGGED TABLE scratch (id bigint, fp simhash);
	CREATE INDEX scratch_fp ON scratch USING hamming (fp);
	INSERT INTO scratch SELECT id, fp FROM docs;
});
index_answers_exact($primary, 'scratch', 'unlogged table');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM scratch'), '0', 'crash: the unlogged table is empty');
$primary->safe_psql('postgres', q{
	INSERT INTO scratch SELECT id, fp FROM docs;
	INSERT INTO scratch SELECT 1000000000 + c.j, flip_bits(c.fp, 1) FROM centers c;
	DELETE FROM scratch WHERE id % 4 = 0;
});
$primary->safe_psql('postgres', 'VACUUM scratch');
index_answers_exact($primary, 'scratch', 'unlogged table after an immediate stop');
index_answers_exact($primary, 'docs', 'primary after an immediate stop');

# a new page at the end of an index, as a crash while it grows leaves it
$primary->safe_psql('postgres', q{
	CREATE TABLE grown (id bigserial, fp simhash);
	CREATE INDEX grown_fp ON grown USING hamming (fp);
	INSERT INTO grown (fp) SELECT random_simhash() FROM generate_series(1, 100);
});
my $file = $primary->data_dir . '/' . $primary->safe_psql('postgres', "SELECT pg_relation_filepath('grown_fp')");
$primary->stop;
open(my $fh, '>>', $file) or die $!;
binmode $fh;
print $fh "\0" x 8192;
close $fh;
$primary->start;
is($primary->safe_psql('postgres', "SELECT pg_relation_size('grown_fp') / 8192"), '3', 'a new page ends the index');
$primary->safe_psql('postgres', 'VACUUM grown');
$primary->safe_psql('postgres', q{INSERT INTO grown (fp) SELECT random_simhash() FROM generate_series(1, 600)});
is($primary->safe_psql('postgres', "SELECT pg_relation_size('grown_fp') / 8192"), '3',
	'inserts fill the new page once VACUUM listed it');
is($primary->safe_psql('postgres', q{SET enable_seqscan = off; SELECT count(*) FROM grown}), '700',
	'the rows on the new page are found');
is($primary->safe_psql('postgres', q{SELECT hamming_index_check('grown_fp')::text}), '', 'hamming_index_check passes');

# promotion: the standby's unlogged table starts from the init fork
$primary->safe_psql('postgres', 'INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 500)');
$primary->wait_for_catchup($standby);
$primary->stop;
$standby->promote;
$standby->safe_psql('postgres', q{
	INSERT INTO scratch SELECT id, fp FROM docs;
	INSERT INTO docs (fp) SELECT random_simhash() FROM generate_series(1, 500);
	DELETE FROM docs WHERE id % 7 = 0;
});
$standby->safe_psql('postgres', 'VACUUM docs');
index_answers_exact($standby, 'scratch', 'unlogged table after promotion');
index_answers_exact($standby, 'docs', 'promoted standby');
unlike(slurp_file($standby->logfile), qr/inconsistent page found/,
	'wal_consistency_checking found no inconsistent page');

$standby->stop;
done_testing();
